"""Reads a file in 1 MiB pieces and says how long it took: from a mounted volume in a container
(``read_mounted``, ``npm run bench:volumes``), or, run as a script, straight from the host's disk.

    python mounted_read.py FILE BYTES
"""

from __future__ import annotations

import json
import sys
import time

import svc

app = svc.App("bench-mounted-read")
MOUNT = "/mnt/svc-bench-volume"


def read_seconds(path: str, limit: int) -> float:
    """Seconds to read the first ``limit`` bytes of ``path``, unbuffered, a MiB at a time."""
    started = time.perf_counter()
    left = limit
    with open(path, "rb", buffering=0) as file:
        while left > 0:
            chunk = file.read(min(1024 * 1024, left))
            if not chunk:
                raise ValueError(f"{path} ends {left} bytes before {limit}")
            left -= len(chunk)
    return time.perf_counter() - started


@app.function(volumes={MOUNT: svc.Volume.from_name("bench").read_only()}, memory="256Mi")
def read_mounted(name: str, limit: int) -> float:
    return read_seconds(f"{MOUNT}/{name}", limit)


if __name__ == "__main__":
    print(json.dumps(read_seconds(sys.argv[1], int(sys.argv[2]))))
