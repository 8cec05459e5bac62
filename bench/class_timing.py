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

from class_model import Model, SnapModel, bare, plain  # noqa: E402

PAUSE = 4.0
"""Seconds without calls: past keep_warm_seconds (1) and the autoscaler's next look, so each container stopped."""


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
    # A new container of each after a pause: the checkpointed class's forks from its checkpoint, 2 s enter done.
    snap = SnapModel()
    first["snap"], first["bare"] = timed(snap.predict.remote, 1), timed(bare.remote, 1)
    restarted: dict[str, list[float]] = {"snap": [], "bare": []}
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
        time.sleep(PAUSE)
        restarted["snap"].append(timed(snap.predict.remote, i))
        time.sleep(PAUSE)
        restarted["bare"].append(timed(bare.remote, i))
    print(json.dumps({"first": first, "method": method, "plain": function, "restarted": restarted}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
