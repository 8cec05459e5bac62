"""Collecting exited children without blocking, for the supervisor and the template."""

from __future__ import annotations

import os
from collections.abc import Iterator


def reaped() -> Iterator[tuple[int, int]]:
    """Yields ``(pid, wait status)`` for every child that has exited, and stops when none is left."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status
