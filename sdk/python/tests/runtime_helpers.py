"""Driving the runtime's ASGI apps directly, in one event loop: concurrent HTTP calls,
WebSocket sessions, and readers for Server-Sent Events and NDJSON bodies."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import pytest
import svc
from helpers import Reply, http_call, http_scope  # noqa: F401  (re-exported for the runtime tests)
from svc.runtime import create_app, run_on_start


def serve(kind: str, target: Any, **options: Any) -> Any:
    """The runtime app of ``target`` declared as ``kind`` on a fresh App, its on_start run."""
    app = svc.App("test")
    if kind == "asgi":
        handle = app.asgi(name=options.pop("name", "web"), **options)(target)
    else:
        handle = getattr(app, kind)(**options)(target)
    return create_app(handle.workload, on_start_value=run_on_start(handle.workload))


def sse_events(body: bytes) -> list[tuple[str, Any]]:
    """``(event name, decoded JSON data)`` of each event of a text/event-stream body."""
    events = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((fields.get("event", "message"), json.loads(fields["data"])))
    return events


def ndjson(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.decode().splitlines()]


class Session:
    """A WebSocket session with a runtime app, as a server would run it."""

    def __init__(self, app: Any, path: str = "/", headers: list[tuple[str, str]] | None = None) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = False
        self.inbox.put_nowait({"type": "websocket.connect"})
        self.task = asyncio.ensure_future(
            app(http_scope("GET", path, headers=headers, kind="websocket"), self.inbox.get, self._send)
        )

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionResetError("the client closed the WebSocket")  # as uvicorn's ClientDisconnected
        await self.outbox.put(message)

    def send(self, data: str | bytes) -> None:
        key = "text" if isinstance(data, str) else "bytes"
        self.inbox.put_nowait({"type": "websocket.receive", key: data})

    async def next(self, timeout: float = 2) -> dict[str, Any]:
        return await asyncio.wait_for(self.outbox.get(), timeout)

    async def accepted(self) -> None:
        assert (await self.next())["type"] == "websocket.accept"

    async def reply(self, timeout: float = 2) -> str | bytes:
        message = await self.next(timeout)
        assert message["type"] == "websocket.send", message
        return message["text"] if message.get("text") is not None else message["bytes"]

    async def replies(self, count: int) -> list[Any]:
        return [await self.reply() for _ in range(count)]

    async def nothing_more(self, wait: float = 0.02) -> bool:
        await asyncio.sleep(wait)
        return self.outbox.empty()

    async def close(self) -> None:
        self.closed = True
        self.inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
        await asyncio.wait_for(self.task, 2)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def runtime_python() -> str | None:
    """A Python that can run the container runtime (uvicorn and websockets importable), or None."""
    candidate = os.environ.get("SVC_TEST_RUNTIME_PYTHON", sys.executable)
    probe = subprocess.run([candidate, "-c", "import uvicorn, websockets"], capture_output=True)
    return candidate if probe.returncode == 0 else None


RUNTIME_PYTHON = runtime_python()
needs_runtime = pytest.mark.skipif(
    RUNTIME_PYTHON is None,
    reason="uvicorn and websockets are not importable; set SVC_TEST_RUNTIME_PYTHON to a Python with "
    "sdk/python/svc/runtime/requirements.txt installed (npm run test:py does)",
)
