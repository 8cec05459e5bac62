"""A generator's items streamed as Server-Sent Events, each sent as soon as it is produced.

Each item is one ``data:`` event holding its JSON. If the generator raises (or an
item has no JSON form), the stream ends with an ``event: error`` whose data is the
short error body ``{"error": {"code": "handler_error", ...}}``; the traceback goes
to the logs. When the client goes away, the generator is stopped and closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .. import _json
from ._calls import Runner
from ._errors import RequestError
from ._requests import Receive
from ._responses import Send

EVENT_STREAM = "text/event-stream"
_HEADERS = [
    (b"content-type", EVENT_STREAM.encode()),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # proxies such as nginx: do not hold events back
]


def data_event(item: Any) -> bytes:
    """``data: <json>`` and a blank line; TypeError or ValueError when ``item`` has no JSON form.

    JSON text holds no raw line breaks, so one ``data:`` line carries the whole item.
    """
    return b"data: " + _json.dumps(item).encode("utf-8") + b"\n\n"


def error_event(error: RequestError) -> bytes:
    return b"event: error\ndata: " + error.body() + b"\n\n"


async def _client_gone(receive: Receive) -> None:
    """Returns once the client has disconnected."""
    while (await receive())["type"] != "http.disconnect":
        pass


class EventStream:
    """The streamed response of a generator result.

    ``failed(exception)`` reports a failure of the generator and returns the error
    to send as the last event.
    """

    def __init__(
        self, items: Any, runner: Runner, receive: Receive, failed: Callable[[BaseException], RequestError]
    ) -> None:
        self._items = items
        self._runner = runner
        self._receive = receive
        self._failed = failed

    async def send(self, send: Send, head: bool) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        if head:
            await self._runner.close(self._items)
            await send({"type": "http.response.body", "body": b""})
            return
        gone = asyncio.ensure_future(_client_gone(self._receive))
        try:
            if await self._stream(send, gone):
                await send({"type": "http.response.body", "body": b""})
        finally:
            gone.cancel()
            await self._runner.close(self._items)

    async def _stream(self, send: Send, gone: asyncio.Future[None]) -> bool:
        """Sends every item; False when the client went away first."""
        items = self._runner.iterate(self._items)
        try:
            while True:
                step = asyncio.ensure_future(items.__anext__())
                try:
                    await asyncio.wait({step, gone}, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:  # the call's time-out: the item being made is not awaited
                    step.cancel()
                    await asyncio.wait({step})
                    raise
                if not step.done():
                    step.cancel()
                    await asyncio.wait({step})  # let it unwind; its CancelledError is not ours
                    return False
                try:
                    chunk = data_event(step.result())
                except StopAsyncIteration:
                    return True
                except Exception as exc:  # the generator raised, or an item has no JSON form
                    chunk = error_event(self._failed(exc))
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    return True
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            await items.aclose()
