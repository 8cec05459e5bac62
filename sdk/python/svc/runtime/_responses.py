"""What the runtime sends back over HTTP: complete responses and error bodies as ASGI messages.

A handler's result becomes JSON (``application/json``) or raw bytes
(``application/octet-stream``); generators stream as Server-Sent Events (``_sse``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .. import _json
from ._errors import RequestError

Send = Callable[[dict[str, Any]], Awaitable[None]]

JSON = "application/json"
OCTETS = "application/octet-stream"


@dataclass(frozen=True)
class Response:
    """A complete response with a known length."""

    status: int
    content_type: str
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = field(default=())

    async def send(self, send: Send, head: bool) -> None:
        headers = [(b"content-type", self.content_type.encode()), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers + list(self.headers)})
        await send({"type": "http.response.body", "body": b"" if head else self.body})


def json_response(value: Any, status: int = 200) -> Response:
    """TypeError or ValueError when ``value`` has no JSON form."""
    return Response(status, JSON, _json.dumps(value).encode("utf-8"))


def error_response(error: RequestError, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Response:
    return Response(error.status, JSON, error.body(), headers)


def is_stream(result: Any) -> bool:
    """A generator (sync or async): its items are sent as they are produced."""
    return inspect.isgenerator(result) or inspect.isasyncgen(result)


def result_response(result: Any) -> Response:
    """The response for a handler's return value that is not a stream."""
    data = _json.binary(result)
    if data is not None:
        return Response(200, OCTETS, data)
    return json_response(result)
