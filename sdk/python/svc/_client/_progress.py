"""The image build's progress while the first call of a new run waits.

A new run builds its image (or finds it cached) before the call can start. A
thread follows the run's logs (``GET /api/v1/runs/:id/logs`` as Server-Sent
Events) and prints the build's lines on stderr, so a first run that installs
packages shows why it waits; a cached image prints nothing. It stops when the
call's first frame arrives (the run is ready by then) or the call fails; when the
start failed, the build lines it had not shown yet are read back and shown, so the
reason (a package pip cannot find, say) is on the screen above the exception.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from .._json import is_object
from ._http import Api, Stream

BUILD_CONTAINER = "build"


def print_build_line(text: str, stream: TextIO | None = None) -> None:
    out = stream if stream is not None else sys.stderr
    out.write(f"build | {text}\n")
    out.flush()


class BuildProgress:
    """Follows one run's logs in a thread and hands each build line to ``show``."""

    def __init__(self, api: Api, run_id: str, function: str, show: Callable[[str], None] = print_build_line) -> None:
        self._api = api
        self._run_id = run_id
        self._function = function
        self._show = show
        self._stream: Stream | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._announced = False
        self._shown = 0
        self._thread = threading.Thread(target=self._follow, name=f"svc-build-{run_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops following; returns once no further line will be shown."""
        self._stopped.set()
        with self._lock:
            if self._stream is not None:
                self._stream.close()
        self._thread.join(timeout=2)

    def show_rest(self) -> None:
        """After ``stop()``: shows the kept build lines the thread had not shown (a failed start)."""
        try:
            answer = self._api.request("GET", f"/runs/{self._run_id}/logs", timeout=10)
            lines = answer.json().get("lines", [])
        except Exception:
            return
        builds = [line for line in lines if is_object(line) and line.get("container") == BUILD_CONTAINER]
        for line in builds[self._shown :]:
            self._build_line(line)

    def _follow(self) -> None:
        try:
            stream = self._api.open(
                "GET", f"/runs/{self._run_id}/logs", headers={"Accept": "text/event-stream"}, timeout=None
            )
        except Exception:  # progress is a courtesy: the call itself reports what went wrong
            return
        with self._lock:
            if self._stopped.is_set():
                stream.close()
                return
            self._stream = stream
        try:
            if stream.status != 200:
                return
            for event, data in _events(stream):
                if self._stopped.is_set() or event == "end":
                    return
                if event == "log":
                    self._line(data)
        finally:
            stream.close()

    def _line(self, data: str) -> None:
        try:
            line: Any = json.loads(data)
        except ValueError:
            return
        if is_object(line) and line.get("container") == BUILD_CONTAINER:
            self._build_line(line)

    def _build_line(self, line: dict[str, Any]) -> None:
        if not self._announced:
            self._announced = True
            self._show(f"building the image of {self._function} (the first run of an image waits for it)")
        self._shown += 1
        self._show(str(line.get("text", "")))


def _events(stream: Stream) -> Iterator[tuple[str, str]]:
    """``(event, data)`` of each Server-Sent Event until the stream ends."""
    event = "message"
    data: list[str] = []
    while True:
        raw = stream.readline()
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
