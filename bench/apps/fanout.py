"""The bench's map (`npm run bench:map`): a trivial function on up to four containers, and the same
function as a plain one for a local `multiprocessing.Pool.map` beside it."""

import svc

app = svc.App("bench-fanout")


def square_local(x: int) -> int:
    return x * x


@app.function(autoscaler=svc.Autoscaler(max_containers=4))
def square(x: int) -> int:
    return x * x
