"""What the runtime sends back: handler results and error bodies as ASGI messages.

A handler's result becomes JSON (``application/json``), raw bytes
(``application/octet-stream``) or, for a generator, a JSON array streamed one item
per chunk.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from .. import _json
from ._errors import RequestError

Send = Callable[[dict[str, Any]], Awaitable[None]]
RunSync = Callable[..., Awaitable[Any]]

JSON = "application/json"
OCTETS = "application/octet-stream"
_DONE = object()


@dataclass(frozen=True)
class Response:
    """A complete response with a known length."""

    status: int
    content_type: str
    body: bytes

    async def send(self, send: Send, head: bool) -> None:
        headers = [(b"content-type", self.content_type.encode()), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else self.body})


def json_response(value: Any, status: int = 200) -> Response:
    """TypeError or ValueError when ``value`` has no JSON form."""
    return Response(status, JSON, _json.dumps(value).encode("utf-8"))


def error_response(error: RequestError) -> Response:
    return Response(error.status, JSON, error.body())


class StreamResponse:
    """A generator's items sent as one JSON array, a chunk per item, as they are produced.

    Raises whatever the generator raises; the caller then leaves the response
    unfinished, so the client sees a broken transfer rather than a short array.
    """

    def __init__(self, items: Any, run_sync: RunSync) -> None:
        self._items = items
        self._run_sync = run_sync

    async def send(self, send: Send, head: bool) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", JSON.encode())]})
        if head:
            await self._close()
            await send({"type": "http.response.body", "body": b""})
            return
        opening = b"["
        async for item in self._iterate():
            await send({"type": "http.response.body", "body": opening + _json.dumps(item).encode(), "more_body": True})
            opening = b","
        await send({"type": "http.response.body", "body": b"[]" if opening == b"[" else b"]"})

    async def _iterate(self) -> AsyncIterator[Any]:
        if inspect.isasyncgen(self._items):
            async for item in self._items:
                yield item
            return
        while (item := await self._run_sync(next, self._items, _DONE)) is not _DONE:
            yield item

    async def _close(self) -> None:
        if inspect.isasyncgen(self._items):
            await self._items.aclose()
        else:
            await self._run_sync(self._items.close)


def result_response(result: Any, run_sync: RunSync) -> Response | StreamResponse:
    """The response for a handler's return value."""
    if isinstance(result, (bytes, bytearray, memoryview)):
        return Response(200, OCTETS, bytes(result))
    if inspect.isgenerator(result) or inspect.isasyncgen(result):
        return StreamResponse(result, run_sync)
    return json_response(result)
