"""The benchmark app: one public endpoint that answers at once, taking 16 requests at a time."""

import svc

app = svc.App("bench")


@app.endpoint(route="/hello", methods=["GET"], authorized=False, concurrency=16)
def hello(name: str = "world") -> dict:
    return {"message": f"Hello, {name}!"}
