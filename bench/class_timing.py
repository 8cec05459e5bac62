"""Warm calls of a class's method against a plain function's, from one process (`npm run bench:classes`).

Run in bench/apps with SVC_SERVER and SVC_TOKEN set: times the first call of each (the class's includes its
2 s ``enter``), then CALLS warm calls of each, alternated; prints one JSON line of times (ms).

    python ../class_timing.py CALLS
"""

import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())

from class_model import Model, plain  # noqa: E402


def timed(call, *args) -> float:
    started = time.perf_counter()
    call(*args)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    calls = int(sys.argv[1])
    model = Model()
    first = {"method": timed(model.predict.remote, 1), "plain": timed(plain.remote, 1)}
    for i in range(20):
        assert model.predict.remote(i) == plain.remote(i) == i * 3
    method, function = [], []
    for i in range(calls):
        method.append(timed(model.predict.remote, i))
        function.append(timed(plain.remote, i))
    print(json.dumps({"first": first, "method": method, "plain": function}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
