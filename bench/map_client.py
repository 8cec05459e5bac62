"""The client side of `npm run bench:map` (bench/map.ts), run in bench/apps with SVC_SERVER and SVC_TOKEN set.

Prints one JSON line per phase and waits for a line on stdin before it goes on, so that the bench
reads the server's CPU and memory at exactly those points:

- ``warm``: after a map of 2000 inputs (the run started, its containers scaled);
- ``first``: the first result of a warm map, 20 maps of 4 inputs (ms each);
- ``spawn``: 50 warm ``.spawn()`` calls (ms each to return), ``FunctionCall.get()`` of each once it
  ended (ms), and 30 API round trips through the gateway (``GET /api/v1/whoami``, ms) beside them;
- ``throughput-start`` / ``throughput-end``: ``.map`` of THROUGHPUT inputs consumed (seconds);
- ``pool``: ``multiprocessing.Pool(4).map`` of the same function over as many inputs (seconds, CPU);
- ``memory-10k`` / ``memory-end``: a ``.map`` of N inputs from a generator, this process's resident
  memory after 10,000 results and at the end.

    python bench/map_client.py N
"""

import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.getcwd())  # bench/apps: `fanout` is imported from there, as its project root

import svc  # noqa: E402
from fanout import square, square_local  # noqa: E402
from svc._client._credentials import find_credentials  # noqa: E402
from svc._client._http import Api  # noqa: E402

THROUGHPUT = 10_000


def mark(phase: str, **fields: object) -> None:
    print(json.dumps({"phase": phase, **fields}), flush=True)
    sys.stdin.readline()


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def _timed(action: Callable[[], object]) -> float:
    """Milliseconds ``action`` takes."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    n = int(sys.argv[1])
    assert list(square.map(range(2000))) == [x * x for x in range(2000)]
    mark("warm")

    firsts = []
    for _ in range(20):
        started = time.perf_counter()
        results = square.map(range(4))
        next(results)
        firsts.append((time.perf_counter() - started) * 1000)
        list(results)
    mark("first", ms=firsts)

    # .spawn(), warm: the time to return, then get() of a call that has ended, beside one API round trip.
    api = Api(find_credentials())
    round_trips = [_timed(lambda: api.request("GET", "/whoami")) for _ in range(30)]
    spawned: list[svc.FunctionCall] = []
    spawns = [_timed(lambda i=i: spawned.append(square.spawn(i))) for i in range(50)]
    assert [call.get(timeout=60) for call in spawned] == [i * i for i in range(50)]
    gets = [_timed(call.get) for call in spawned]
    mark("spawn", spawnMs=spawns, getMs=gets, roundTripMs=round_trips)

    mark("throughput-start")
    started = time.perf_counter()
    total = sum(square.map(range(THROUGHPUT)))
    seconds = time.perf_counter() - started
    assert total == sum(x * x for x in range(THROUGHPUT))
    mark("throughput-end", seconds=seconds, inputs=THROUGHPUT)

    with multiprocessing.Pool(4) as pool:
        pool.map(square_local, range(100))
        pids = [os.getpid()] + [process.pid for process in pool._pool]  # type: ignore[attr-defined]
        cpu = cpu_seconds(pids)
        started = time.perf_counter()
        assert sum(pool.map(square_local, range(THROUGHPUT))) == total
        seconds = time.perf_counter() - started
        cpu = cpu_seconds(pids) - cpu
    mark("pool", seconds=seconds, cpu=cpu, inputs=THROUGHPUT)

    started = time.perf_counter()
    count = 0
    for count, result in enumerate(square.map(x for x in range(n)), start=1):
        if result != (count - 1) ** 2:
            raise SystemExit(f"result {count - 1} is {result}")
        if count == 10_000:
            mark("memory-10k", rss=rss_bytes())
    assert count == n
    mark("memory-end", rss=rss_bytes(), seconds=time.perf_counter() - started, inputs=n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
