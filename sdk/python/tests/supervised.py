"""A supervisor over fake workers, run as its own process by test_runtime_workers.py.

``python supervised.py SCENARIO WORKERS`` prints the supervisor's events on stdout
(JSON lines) and exits with its exit code. Fake workers need no uvicorn: they report
ready at once and wait for SIGTERM or their supervisor's end.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from svc.runtime._frames import FrameWriter
from svc.runtime._timeouts import EXIT_TIMED_OUT
from svc.runtime._workers import RestartPolicy, Supervisor


def fake_worker(scenario: str):
    def start(index: int, socket_path: str, ready_fd: int, parent_fd: int) -> None:
        if scenario == "fail-first" and index == 1:
            print(f"worker {index} cannot start", file=sys.stderr, flush=True)
            os._exit(5)
        if scenario == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.write(ready_fd, f"{index} {os.getpid()}\n".encode())
        if scenario == "time-out":  # as a worker whose call ran past its timeout (runtime/_timeouts.py)
            os.write(ready_fd, f"{index} {os.getpid()} retiring\n".encode())
            time.sleep(0.05)
            os._exit(EXIT_TIMED_OUT)
        if scenario == "stubborn":
            while True:
                time.sleep(1)
        select.select([parent_fd], [], [])  # the supervisor is gone (SIGTERM ends us before that)
        os._exit(0)

    return start


def main() -> int:
    scenario, workers = sys.argv[1], int(sys.argv[2])
    supervisor = Supervisor(
        name="fake",
        sockets=[f"/nonexistent/w{i}.sock" for i in range(workers)],
        start=fake_worker(scenario),
        emit=FrameWriter(1).event,
        lifeline_fd=0,
        gone_message="stdin closed",
        hard_exit_after=0.5,
        policy=RestartPolicy(first_delay=0.05),
    )
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
