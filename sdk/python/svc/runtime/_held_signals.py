"""Forking a child that resets its signal handlers, without losing a stop signal in between.

A child starts with its parent's handlers until it resets them: a SIGTERM sent to it in that
window ran the parent's handler (which only notes a stop, or ignores it) in the child and was
lost, and a worker stopped right after its fork served on until killed. So the stop signals are
blocked across the fork; the child unblocks them once its own handlers are in place, and one
that came meanwhile is delivered then.
"""

from __future__ import annotations

import os
import signal

STOP_SIGNALS = frozenset({signal.SIGCHLD, signal.SIGTERM, signal.SIGINT})


def fork_holding_stop_signals() -> tuple[int, set[int | signal.Signals]]:
    """``(pid, mask before)`` as ``os.fork()``; the parent's mask is restored, the child's stays held."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = os.fork()
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return pid, before


def release_in_child(before: set[int | signal.Signals]) -> None:
    """In the child, once its handlers are reset: a stop signal held since the fork is delivered now."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, before)
