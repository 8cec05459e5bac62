"""Per-call stdout and stderr: what one function call prints goes back to that call's caller.

Each line also goes to the container's own stream, tagged ``[<call id>]``, for ``svc logs``.

While calls run, ``sys.stdout`` and ``sys.stderr`` are proxies. A write goes to the
``Lines`` of the call whose context it happens in (a context variable, set in the
call's thread or task), or to the real stream when no call is running there: the
runtime's own messages and threads the user started themselves. Calls that run at
the same time, in threads or tasks, never see each other's lines.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Generator
from contextvars import ContextVar
from typing import Any, TextIO

STREAMS = ("stdout", "stderr")

Emit = Callable[[str, str], None]
"""``emit(stream, line)``: one complete line (without its line break) of ``stdout`` or ``stderr``."""


class Lines:
    """One call's output, cut into lines: each complete line goes to ``emit`` at once."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._partial: dict[str, str] = dict.fromkeys(STREAMS, "")
        self._lock = threading.Lock()  # threads the call starts with its context write here too

    def write(self, stream: str, text: str) -> None:
        with self._lock:
            *lines, self._partial[stream] = (self._partial[stream] + text).split("\n")
            for line in lines:
                self._emit(stream, line.removesuffix("\r"))

    def flush(self) -> None:
        """Emits what is left of an unfinished last line."""
        with self._lock:
            for stream in STREAMS:
                if self._partial[stream]:
                    rest, self._partial[stream] = self._partial[stream], ""
                    self._emit(stream, rest)


_current: ContextVar[Lines | None] = ContextVar("svc_call_output", default=None)


class _Proxy:
    """Stands in for ``sys.stdout`` or ``sys.stderr`` while calls run."""

    def __init__(self, stream: str, real: TextIO) -> None:
        self._stream = stream
        self.real = real

    def write(self, text: str) -> int:
        lines = _current.get()
        if lines is None:
            return self.real.write(text)
        lines.write(self._stream, text)
        return len(text)

    def writelines(self, texts: Any) -> None:
        for text in texts:
            self.write(text)

    def flush(self) -> None:
        if _current.get() is None:
            self.real.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, isatty, buffer, reconfigure, ...
        return getattr(self.real, name)


_lock = threading.Lock()
_active = 0


@contextlib.contextmanager
def capturing() -> Generator[None, None, None]:
    """Keeps the proxies in place while at least one call is inside this block."""
    global _active
    with _lock:
        if _active == 0:
            sys.stdout = _Proxy("stdout", sys.stdout)
            sys.stderr = _Proxy("stderr", sys.stderr)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                for name in STREAMS:
                    proxy = getattr(sys, name)
                    if isinstance(proxy, _Proxy):  # unless the user replaced it meanwhile
                        setattr(sys, name, proxy.real)


def to_container_log(stream: str, text: str) -> None:
    """Writes ``text`` to the container's own ``stream`` (what ``svc logs`` shows), past any call's capture."""
    current = getattr(sys, stream)
    real = current.real if isinstance(current, _Proxy) else current
    real.write(text)
    real.flush()


@contextlib.contextmanager
def routed_to(lines: Lines) -> Generator[None, None, None]:
    """Sends what this thread or task (and the tasks it starts) prints to ``lines``."""
    token = _current.set(lines)
    try:
        yield
    finally:
        _current.reset(token)
        lines.flush()
