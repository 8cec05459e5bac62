"""Time-outs of calls (``timeout=`` of functions and endpoints): the call is abandoned, its worker replaced.

A call past its time-out is answered at once (504 ``timeout`` for an endpoint, an
error frame with the code ``timeout`` for a function); the code still running it
(a thread cannot be stopped, and stuck code may hold locks) goes with its worker:
the worker stops taking requests, lets the other calls in hand finish for at most
``HARD_EXIT_AFTER`` seconds, and exits with ``EXIT_TIMED_OUT``, which the supervisor
answers with a fresh worker at once. The workload logs get one line saying which
call, after how long, and which worker is replaced.

The time-out is watched twice: on the event loop (``within``), and by a
thread (``watchdog``) for code that blocks the loop itself (``time.sleep`` in an
``async def``); the thread ends the process ``WATCHDOG_GRACE`` seconds later.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from ._exit import exit_now

EXIT_TIMED_OUT = 6
"""A worker's exit code after a call ran past its time-out: the supervisor replaces it at once, not a crash."""

WATCHDOG_GRACE = 2.0
"""Seconds after the time-out at which a call that the event loop could not stop ends its process."""

_retire: Callable[[], None] | None = None
_worker = "worker"


def install(retire: Callable[[], None], index: int) -> None:
    """Called once in each worker by the server: how to stop it, and its number for the logs."""
    global _retire, _worker
    _retire, _worker = retire, f"worker {index}"


def timeout_of(options: Any) -> float | None:
    """The workload's ``timeout`` in seconds, or None for kinds without one."""
    value = options.get("timeout") if hasattr(options, "get") else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


async def within(call: Awaitable[Any], seconds: float | None) -> bool:
    """Awaits ``call``; False when ``seconds`` passed first (it is then cancelled). Its own
    exceptions propagate: a ``TimeoutError`` the code raised itself is not a time-out of svc's.

    The call runs in the caller's task, bounded by one timer on the loop that cancels that
    task: no task of its own per call (creating one, and waiting on it, cost a JSON endpoint
    more than its handler)."""
    if seconds is None:
        await call
        return True
    task = asyncio.current_task()
    assert task is not None, "within() runs in a task"
    fired = False

    def expire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        await call
    except asyncio.CancelledError:
        # Ours, unless the task was also cancelled from outside (then that cancellation goes on).
        if not fired or _cancelled_elsewhere(task):
            raise
        return False
    finally:
        timer.cancel()
    # The code swallowed the cancellation and finished anyway: its time was still up.
    return not fired


def _cancelled_elsewhere(task: asyncio.Task[Any]) -> bool:
    """Takes back the one cancellation ``expire`` asked for; True if others remain (Python 3.11+ counts them)."""
    uncancel = getattr(task, "uncancel", None)
    return uncancel is not None and uncancel() > 0


def describe_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


def timed_out(workload: str, what: str, seconds: float) -> None:
    """Says so in the logs and retires this worker: the supervisor starts a fresh one."""
    print(
        f"svc runtime: {workload}: {what} timed out after {describe_seconds(seconds)}; "
        f"stopping {_worker} (pid {os.getpid()}), a fresh worker replaces it",
        file=sys.stderr,
        flush=True,
    )
    if _retire is not None:
        _retire()


@contextlib.contextmanager
def watchdog(workload: str, what: str, seconds: float | None) -> Generator[None, None, None]:
    """Ends the process if the block is still running ``WATCHDOG_GRACE`` s after ``seconds``."""
    if seconds is None:
        yield
        return
    token = _watchdog.arm(time.monotonic() + seconds + WATCHDOG_GRACE, (workload, what, seconds))
    try:
        yield
    finally:
        _watchdog.disarm(token)


class _Watchdog:
    """One thread per process watches every call's deadline.

    A ``threading.Timer`` per call started a thread per request: more than half of what a JSON
    endpoint cost the event loop. Arming and disarming here are a dict insert and pop under a
    lock. The thread sleeps until the earliest deadline, or ``WATCHDOG_GRACE`` when nothing is
    armed: every deadline lies at least that far ahead when it is armed, so arming never has to
    wake it, and an idle worker wakes it once every ``WATCHDOG_GRACE`` seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._due: dict[int, tuple[float, tuple[str, str, float]]] = {}
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None
        self._until = math.inf

    def arm(self, deadline: float, call: tuple[str, str, float]) -> int:
        token = next(self._tokens)
        with self._lock:
            self._due[token] = (deadline, call)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="svc-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._until:  # only a shorter time-out than every one armed so far
                self._wake.notify()
        return token

    def disarm(self, token: int) -> None:
        with self._lock:
            self._due.pop(token, None)

    def forked(self) -> None:
        """In a forked child: no thread came along, and the lock may have been held by one."""
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._due.clear()
        self._thread = None
        self._until = math.inf

    def _watch(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                earliest = min(self._due.values(), default=None, key=lambda due: due[0])
                if earliest is not None and earliest[0] <= now:
                    stuck = earliest[1]
                    break
                self._until = now + WATCHDOG_GRACE if earliest is None else earliest[0]
                self._wake.wait(self._until - now)
        _stuck(*stuck)


_watchdog = _Watchdog()
os.register_at_fork(after_in_child=_watchdog.forked)


def _stuck(workload: str, what: str, seconds: float) -> None:
    try:
        print(
            f"svc runtime: {workload}: {what} timed out after {describe_seconds(seconds)} and blocked the "
            f"event loop; ending {_worker} (pid {os.getpid()}) now, a fresh worker replaces it",
            file=sys.stderr,
            flush=True,
        )
    finally:
        exit_now(EXIT_TIMED_OUT)
