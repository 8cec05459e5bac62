"""Messages from the runtime to the platform: one JSON object per line.

``{"t": "event", "event": "listening", ...}`` says what happened to a worker; in a container
forked by the checkpoint template, ``{"t": "out"|"err", "text": ...}`` carry its output lines
over the control connection too, since the platform is not its parent and holds no pipe to it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

MAX_LINE = 64 * 1024
"""Longer output lines are split: one frame stays small enough for the platform to buffer."""


class FrameWriter:
    """Writes frames to a pipe or socket; silent once the platform is gone (the lifeline handles that)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def send(self, frame: dict[str, Any]) -> None:
        if self.fd is None:
            return
        data = (json.dumps(frame, separators=(",", ":")) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError:
            self.fd = None

    def event(self, event: dict[str, Any]) -> None:
        self.send({"t": "event", **event})


class LinePump:
    """Reads a pipe without blocking and hands over whole lines (decoded, invalid bytes replaced)."""

    def __init__(self, fd: int, on_line: Callable[[str], None]) -> None:
        self.fd = fd
        self._on_line = on_line
        self._rest = b""
        os.set_blocking(fd, False)

    def read(self) -> bool:
        """Reads what is there; False at end-of-file."""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self.flush()
                return False
            *lines, self._rest = (self._rest + chunk).split(b"\n")
            for line in lines:
                self._deliver(line)
            while len(self._rest) > MAX_LINE:
                self._deliver(self._rest[:MAX_LINE])
                self._rest = self._rest[MAX_LINE:]

    def flush(self) -> None:
        if self._rest:
            self._deliver(self._rest)
            self._rest = b""

    def _deliver(self, line: bytes) -> None:
        self._on_line(line.rstrip(b"\r").decode("utf-8", "replace"))


class FrameStream:
    """``sys.stderr`` of a forked container's main process: its lines go out as frames at once.

    Its workers write into a pipe that only this process reads; if it wrote its own messages
    into that pipe too, a full pipe would block it with nobody left to empty it.
    """

    def __init__(self, writer: FrameWriter, kind: str) -> None:
        self._writer = writer
        self._kind = kind
        self._rest = ""

    def write(self, text: str) -> int:
        *lines, self._rest = (self._rest + text).split("\n")
        for line in lines:
            self._writer.send({"t": self._kind, "text": line})
        return len(text)

    def flush(self) -> None:
        if self._rest:
            self._writer.send({"t": self._kind, "text": self._rest})
            self._rest = ""

    def isatty(self) -> bool:
        return False
