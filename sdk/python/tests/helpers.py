"""Test helpers: an ASGI caller, a subprocess runner with the SDK on PYTHONPATH, a local HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SDK_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = SDK_ROOT.parents[1]


def run_python(
    *args: str,
    cwd: Path | str | None = None,
    python: str = sys.executable,
    stdin: int | None = subprocess.DEVNULL,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """Runs ``python <args>`` with the SDK on PYTHONPATH, as the platform does."""
    env = {**os.environ, "PYTHONPATH": str(SDK_ROOT)}
    return subprocess.run(
        [python, *args], cwd=cwd, env=env, capture_output=True, text=True, stdin=stdin, timeout=timeout
    )


@dataclass
class Reply:
    """What an ASGI app sent back."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    complete: bool = False

    def json(self) -> Any:
        return json.loads(self.body)


def http_scope(
    method: str = "GET",
    path: str = "/",
    query: str = "",
    headers: list[tuple[str, str]] | None = None,
    kind: str = "http",
) -> dict[str, Any]:
    return {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or [])],
        "client": None,
        "server": None,
    }


async def http_call(
    app: Any,
    method: str = "GET",
    path: str = "/",
    *,
    query: str = "",
    body: bytes = b"",
    headers: list[tuple[str, str]] | None = None,
    chunks: list[bytes] | None = None,
    gone: asyncio.Event | None = None,
) -> Reply:
    """One HTTP request; the client disconnects once ``gone`` is set. ``chunks`` collects each body message."""
    reply = Reply()
    pending = [body]

    async def receive() -> dict[str, Any]:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        await (gone.wait() if gone is not None else asyncio.sleep(3600))
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            reply.body += message.get("body", b"")
            if chunks is not None and message.get("body"):
                chunks.append(message["body"])
            reply.complete = not message.get("more_body", False)

    await app(http_scope(method, path, query, headers), receive, send)
    return reply


def call_asgi(
    app: Any,
    method: str = "GET",
    path: str = "/",
    *,
    query: str = "",
    body: bytes | str = b"",
    headers: list[tuple[str, str]] | None = None,
) -> Reply:
    """Calls an ASGI app once, as uvicorn would, and collects the response."""
    data = body.encode() if isinstance(body, str) else body
    return asyncio.run(http_call(app, method, path, query=query, body=data, headers=headers))


@contextlib.contextmanager
def serve_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serves ``handler`` on a free port of 127.0.0.1 in a thread; yields the server's URL, shuts it down after."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
