"""A worker's request slots: at most ``size`` requests (or WebSocket sessions) at once.

The gateway already sends a worker no more than its capacity; the slots make the
limit hold inside the worker too, whoever calls it. A request beyond the limit
waits for a slot, first come first served.
"""

from __future__ import annotations

import asyncio


class Slots:
    """An ``asyncio.Semaphore(size)`` that follows the running event loop.

    A semaphore belongs to the loop it first waited on; each new loop (a test runs
    one per call) gets a fresh one, so an app object outlives the loops it served.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a worker needs at least one slot, got {size}")
        self.size = size
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None

    def _current(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._loop, self._semaphore = loop, asyncio.Semaphore(self.size)
        return self._semaphore

    def hold(self) -> asyncio.Semaphore:
        """The semaphore itself, not a generator-based context manager around it (every request
        holds one): ``async with`` it, or ``acquire()`` and ``release()`` it as ``AsgiApp`` does."""
        return self._current()
