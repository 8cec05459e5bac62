"""The supervisor: forks workers, restarts the dead ones with back-off, fails fast, drains on SIGTERM.

The restart policy is tested as a pure function; the supervisor itself runs in a process of
its own (supervised.py) over fake workers, so these tests need no uvicorn.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT
from svc.runtime._workers import RestartPolicy, Slot

SUPERVISED = Path(__file__).with_name("supervised.py")


# -- the restart policy ---------------------------------------------------


def ready_slot(started_at: float = 0.0) -> Slot:
    return Slot(0, "/s.sock", pid=1, started_at=started_at, ready=True, ever_ready=True)


def test_a_worker_that_never_served_fails_the_container():
    assert RestartPolicy().after_exit(Slot(0, "/s.sock", pid=1), now=1.0) is None


def test_quick_deaths_back_off_exponentially_up_to_the_cap():
    policy, slot = RestartPolicy(), ready_slot()
    delays = [policy.after_exit(slot, now=1.0) for _ in range(9)]
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]


def test_a_worker_that_lived_long_enough_restarts_at_once_again():
    policy, slot = RestartPolicy(), ready_slot()
    for _ in range(4):
        policy.after_exit(slot, now=1.0)
    slot.started_at, slot.ready = 100.0, True
    assert policy.after_exit(slot, now=111.0) == 0.1


def test_restarts_that_keep_failing_before_serving_give_up():
    policy, slot = RestartPolicy(max_boot_failures=3), ready_slot()
    policy.after_exit(slot, now=1.0)
    slot.ready = False  # every replacement dies before it listens
    assert policy.after_exit(slot, now=1.0) is not None
    assert policy.after_exit(slot, now=1.0) is not None
    assert policy.after_exit(slot, now=1.0) is None


# -- the supervisor as a process ------------------------------------------


class Supervised:
    def __init__(self, scenario: str, workers: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(SDK_ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, str(SUPERVISED), scenario, str(workers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        # A hung supervisor must fail the test, not block readline() forever.
        self._watchdog = threading.Timer(20, self.process.kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    def event(self) -> dict:
        line = self.process.stdout.readline()
        assert line, f"no event before exit: {self.process.stderr.read().decode()}"
        return json.loads(line)

    def events(self, count: int) -> list[dict]:
        return [self.event() for _ in range(count)]

    def finish(self, timeout: float = 5.0) -> tuple[int, str]:
        code = self.process.wait(timeout)
        return code, self.process.stderr.read().decode()

    def kill(self) -> None:
        self._watchdog.cancel()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited; its parent (the supervisor, now gone) did not reap it yet
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False


def wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.02)
    return [pid for pid in pids if alive(pid)]


@pytest.fixture
def supervised():
    started: list[Supervised] = []

    def start(scenario: str, workers: int) -> Supervised:
        started.append(Supervised(scenario, workers))
        return started[-1]

    yield start
    for item in started:
        item.kill()


def test_forks_every_worker_and_announces_each_once_it_listens(supervised):
    run = supervised("normal", 3)
    events = run.events(3)
    assert sorted(e["worker"] for e in events) == [0, 1, 2]
    assert {e["event"] for e in events} == {"listening"}
    assert len({e["pid"] for e in events}) == 3
    assert events[0]["socket"] == f"/nonexistent/w{events[0]['worker']}.sock"
    run.process.send_signal(signal.SIGTERM)
    assert run.finish()[0] == 0
    assert wait_gone([e["pid"] for e in events]) == []


def test_restarts_a_killed_worker_in_its_slot(supervised):
    run = supervised("normal", 2)
    first = {e["worker"]: e["pid"] for e in run.events(2)}
    os.kill(first[1], signal.SIGKILL)
    exited, back = run.events(2)
    assert exited == {
        "t": "event",
        "event": "worker_exited",
        "worker": 1,
        "pid": first[1],
        "status": "signal SIGKILL",
        "restart_in": 0.05,
    }
    assert back["event"] == "listening" and back["worker"] == 1 and back["pid"] != first[1]
    run.process.send_signal(signal.SIGTERM)
    code, stderr = run.finish()
    assert code == 0
    assert f"fake: worker 1 (pid {first[1]}) exited with signal SIGKILL; restarting it in 0.05 s" in stderr


def test_a_worker_stopping_after_a_time_out_is_announced_then_replaced_at_once_every_time(supervised):
    run = supervised("time-out", 1)
    events = run.events(7)
    pids = [e["pid"] for e in events if e["event"] == "listening"]
    assert [e["event"] for e in events] == ["listening", "worker_retiring", "worker_exited"] * 2 + ["listening"]
    assert len(set(pids)) == 3
    for exited, pid in zip([events[2], events[5]], pids, strict=False):
        # Not a crash: no back-off however often it happens.
        assert exited == {
            "t": "event",
            "event": "worker_exited",
            "worker": 0,
            "pid": pid,
            "status": "code 6 (a call timed out)",
            "restart_in": 0.0,
        }
    assert events[1] == {"t": "event", "event": "worker_retiring", "worker": 0, "pid": pids[0]}
    run.process.send_signal(signal.SIGTERM)
    code, stderr = run.finish()
    assert code == 0
    assert f"fake: worker 0 (pid {pids[0]}) exited with code 6 (a call timed out); replacing it now" in stderr


def test_a_worker_failing_its_first_start_fails_the_container_with_its_code(supervised):
    run = supervised("fail-first", 2)
    code, stderr = run.finish()
    assert code == 5
    assert "worker 1 cannot start" in stderr
    assert "fake: worker 1 (pid" in stderr and "exited with code 5 before it served; stopping the container" in stderr


def test_the_lifeline_closing_stops_every_worker(supervised):
    run = supervised("normal", 2)
    pids = [e["pid"] for e in run.events(2)]
    run.process.stdin.close()
    code, stderr = run.finish()
    assert code == 0
    assert "svc runtime: stdin closed; shutting down" in stderr
    assert wait_gone(pids) == []


def test_workers_that_ignore_sigterm_are_killed_after_the_grace_when_the_lifeline_closes(supervised):
    run = supervised("stubborn", 1)
    pid = run.event()["pid"]
    started = time.monotonic()
    run.process.stdin.close()
    assert run.finish()[0] == 0
    assert 0.4 < time.monotonic() - started < 3
    assert wait_gone([pid]) == []


def test_workers_stop_when_their_supervisor_is_killed(supervised):
    run = supervised("normal", 2)
    pids = [e["pid"] for e in run.events(2)]
    run.process.kill()
    run.process.wait()
    assert wait_gone(pids) == [], "each worker watches a pipe from its supervisor"


def test_socket_names_one_worker_and_socket_dir_needs_a_container():
    from helpers import run_python

    one = run_python(
        "-m",
        "svc.runtime",
        "--root",
        ".",
        "--entry",
        "app",
        "--workload",
        "w",
        "--socket",
        "/tmp/s.sock",
        "--workers",
        "2",
    )
    assert one.returncode == 2 and "--socket serves one worker" in one.stderr
    nameless = run_python(
        "-m", "svc.runtime", "--root", ".", "--entry", "app", "--workload", "w", "--socket-dir", "/tmp"
    )
    assert nameless.returncode == 2 and "--socket-dir needs --container" in nameless.stderr
