"""Time-outs of calls (``timeout=`` of functions and endpoints): the call is abandoned, its worker replaced.

A call past its time-out is answered at once (504 ``timeout`` for an endpoint, an
error frame with the code ``timeout`` for a function); the code still running it
(a thread cannot be stopped, and stuck code may hold locks) goes with its worker:
the worker stops taking requests, lets the other calls in hand finish for at most
``HARD_EXIT_AFTER`` seconds, and exits with ``EXIT_TIMED_OUT``, which the supervisor
answers with a fresh worker at once. The workload logs get one line saying which
call, after how long, and which worker is replaced.

The time-out is watched twice: on the event loop (``within``), and by a
thread (``watchdog``: one for all the worker's calls, ``_watchdog``) for code that
blocks the loop itself (``time.sleep`` in an ``async def``); the thread ends the
process ``WATCHDOG_GRACE`` seconds later.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any, Awaitable, Callable, Generator

from ._exit import exit_now
from ._watchdog import Watchdog

EXIT_TIMED_OUT = 6
"""A worker's exit code after a call ran past its time-out: the supervisor replaces it at once, not a crash."""

WATCHDOG_GRACE = 2.0
"""Seconds after the time-out at which a call that the event loop could not stop ends its process."""

_retire: Callable[[], None] | None = None
_worker = "worker"
_watchdog = Watchdog()


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
    exceptions propagate: a ``TimeoutError`` the code raised itself is not a time-out of svc's."""
    task = asyncio.ensure_future(_guarded(call))
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task})  # let it unwind (a thread it waits on runs on regardless)
        if not task.cancelled():
            task.exception()  # whatever it ended with is moot now: retrieved, so asyncio does not log it
        return False
    try:
        task.result()
    except _Escaped as escaped:
        raise escaped.exc from None
    return True


class _Escaped(Exception):
    """Carries a ``SystemExit`` (``sys.exit()`` in a handler) out of the call's task: raised in
    a task, asyncio would stop the whole event loop with it; ``within`` raises it again outside."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc


async def _guarded(call: Awaitable[Any]) -> Any:
    try:
        return await call
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _Escaped(exc) from None


def describe_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


def timed_out(workload: str, what: str, seconds: float) -> None:
    """Says so in the logs and retires this worker: the supervisor starts a fresh one."""
    print(f"svc runtime: {workload}: {what} timed out after {describe_seconds(seconds)}; "
          f"stopping {_worker} (pid {os.getpid()}), a fresh worker replaces it",
          file=sys.stderr, flush=True)
    if _retire is not None:
        _retire()


@contextlib.contextmanager
def watchdog(workload: str, what: str, seconds: float | None) -> Generator[None, None, None]:
    """Ends the process if the block is still running ``WATCHDOG_GRACE`` s after ``seconds``."""
    if seconds is None:
        yield
        return
    key = _watchdog.watch(seconds + WATCHDOG_GRACE, lambda: _stuck(workload, what, seconds))
    try:
        yield
    finally:
        _watchdog.release(key)


def _stuck(workload: str, what: str, seconds: float) -> None:
    try:
        print(f"svc runtime: {workload}: {what} timed out after {describe_seconds(seconds)} and blocked the "
              f"event loop; ending {_worker} (pid {os.getpid()}) now, a fresh worker replaces it",
              file=sys.stderr, flush=True)
    finally:
        exit_now(EXIT_TIMED_OUT)
