"""The benchmark app: an endpoint that answers at once, and a slow one with a small capacity and queue.

``hello`` (concurrency 16) is what the throughput and latency figures call; ``busy`` (capacity 4,
max_pending_tasks 12) is what the 429 precision and overload checks call. Both stay warm for the
whole run (keep_warm=600): a burst against a workload scaled to zero admits max_pending_tasks only.
"""

import asyncio

import svc

app = svc.App("bench")


@app.endpoint(route="/hello", methods=["GET"], authorized=False, concurrency=16, keep_warm=600)
def hello(name: str = "world") -> dict:
    return {"message": f"Hello, {name}!"}


@app.endpoint(route="/busy", methods=["GET"], authorized=False, concurrency=4, max_pending_tasks=12, keep_warm=600)
async def busy(seconds: float = 0.25) -> dict:
    await asyncio.sleep(seconds)
    return {"slept": seconds}
