"""An endpoint that scales: workers, concurrency, an Autoscaler and a bounded queue.

The numbers, and what they add up to:

- workers=2, concurrency=2: a container runs 2 worker processes, each handling 2
  requests at once, so one container serves 2 x 2 = 4 requests at a time.
- Autoscaler(min_containers=1, max_containers=3, tasks_per_container=4): one
  container always runs; one more starts for every 4 requests in flight or waiting,
  up to 3 containers, so at most 3 x 4 = 12 requests run at once.
- max_pending_tasks=8: up to 8 more requests wait in the gateway's queue for a free
  slot; one more than that gets 429 queue_full at once, with Retry-After.
- keep_warm=10: a container idle for 10 seconds may stop (never below
  min_containers), so you can watch it scale back down.

`work` sleeps for as long as you ask, so that a few curls at once fill the slots.

Try it on your machine first; nothing here needs the platform:

    python -m svc.manifest app.py        # what the platform will read

Then serve it with `svc serve app.py` and load it (see README.md).
"""

import asyncio
import os

import svc

app = svc.App("autoscaling")
image = svc.Image(python_version="3.11")


@app.endpoint(
    route="/work",
    methods=["GET"],
    image=image,
    # Public, so that the load commands in README.md need no token; leave
    # authorized at its default (True) for anything real.
    authorized=False,
    workers=2,
    concurrency=2,
    autoscaler=svc.Autoscaler(min_containers=1, max_containers=3, tasks_per_container=4),
    max_pending_tasks=8,
    keep_warm=10,
)
async def work(seconds: float = 1.0) -> dict:
    """Pretends to work for `seconds` (at most 30), then says who did it."""
    seconds = min(max(seconds, 0.0), 30.0)
    # async: the worker's event loop runs its `concurrency` requests side by side.
    await asyncio.sleep(seconds)
    return {
        "slept": seconds,
        "worker_pid": os.getpid(),
        # Workers are children of their container's main process: its pid names the container.
        "container_pid": os.getppid(),
    }
