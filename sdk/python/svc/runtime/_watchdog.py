"""One thread that watches every call's deadline in a worker, for code that blocks the event loop.

A thread per call (``threading.Timer``) costs more to start and stop than a small call
itself; this one thread starts with the first watched call and sleeps until the earliest
deadline of the calls in progress. A call that ends leaves the watch (a dictionary entry)
without waking the thread: when it wakes for a deadline nobody holds any more, it
finds the next one and sleeps again. A deadline that passes while its call still runs
calls ``overdue`` once, from the thread (it ends the process).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from typing import Callable

Overdue = Callable[[], None]


class Watchdog:
    def __init__(self) -> None:
        self._reset()
        if hasattr(os, "register_at_fork"):  # a forked worker has its own calls and no thread yet
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._watched: dict[int, tuple[float, Overdue]] = {}
        self._keys = itertools.count()
        self._thread: threading.Thread | None = None
        self._wakes_at: float | None = None

    def watch(self, seconds: float, overdue: Overdue) -> int:
        """Calls ``overdue`` in ``seconds`` unless ``release`` comes first; the key for ``release``."""
        deadline = time.monotonic() + seconds
        with self._changed:
            key = next(self._keys)
            self._watched[key] = (deadline, overdue)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="svc-watchdog", daemon=True)
                self._thread.start()
            elif self._wakes_at is None or deadline < self._wakes_at:
                self._changed.notify()
        return key

    def release(self, key: int) -> None:
        with self._changed:
            self._watched.pop(key, None)

    def _run(self) -> None:
        while True:
            with self._changed:
                now = time.monotonic()
                due = [key for key, (deadline, _overdue) in self._watched.items() if deadline <= now]
                if not due:
                    self._wakes_at = min((deadline for deadline, _overdue in self._watched.values()), default=None)
                    self._changed.wait(None if self._wakes_at is None else self._wakes_at - now)
                    continue
                overdue = [self._watched.pop(key)[1] for key in due]
            for call in overdue:
                call()
