"""The ASGI application that serves a ``realtime`` workload: a WebSocket at any path.

Each incoming message calls the handler once, in order; its result goes back as
messages (see ``_messages``). A bad message or an exception in the handler sends
an error message, ``{"error": {"code": ..., "message": ...}}``, and the session
goes on. ``GET /_svc/health`` answers 200; any other plain HTTP request gets 426
``upgrade_required``. At most ``concurrent_requests`` sessions run at once per
worker; further connections wait before they are accepted.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from .._hints import CONTEXT_PARAMETER
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from ._calls import Runner
from ._errors import RequestError
from ._lifespan import acknowledge
from ._messages import MessageParameter, error_message, is_many, outgoing
from ._requests import HEALTH_PATH, Receive, Scope, make_context
from ._responses import Send, error_response, json_response
from ._slots import Slots

_UPGRADE = ((b"upgrade", b"websocket"),)


class _Gone(Exception):
    """The client closed the WebSocket while a reply was being sent."""


class RealtimeApp:
    """ASGI callable for a ``realtime`` workload."""

    def __init__(self, workload: Workload, on_start_value: Any = None) -> None:
        self.workload = workload
        self._fn = workload.target
        self._on_start_value = on_start_value
        self._message = MessageParameter(self._fn)
        self._wants_context = CONTEXT_PARAMETER in inspect.signature(self._fn).parameters
        concurrency = workload.options.get("concurrent_requests", 1)
        self._slots = Slots(concurrency)
        self._runner = Runner(workload.name, concurrency)
        self._health = json_response({"status": "ok", "workload": workload.name})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            async with self._slots.hold():
                await self._session(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, send)
        elif scope["type"] == "lifespan":
            await acknowledge(receive, send)

    async def _http(self, scope: Scope, send: Send) -> None:
        head = scope["method"] == "HEAD"
        if scope["path"] == HEALTH_PATH:
            return await self._health.send(send, head)
        error = RequestError(
            "upgrade_required",
            f"{self.workload.name} is a realtime workload: connect with a WebSocket client "
            "(ws:// or wss://, the same URL) and send messages",
        )
        await error_response(error, _UPGRADE).send(send, head)

    async def _session(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        extra: dict[str, Any] = {}
        if self._wants_context:
            extra["context"] = make_context(self.workload.name, scope, self._on_start_value)

        async def send_or_gone(message: dict[str, Any]) -> None:
            try:
                await send(message)
            except OSError:  # uvicorn's ClientDisconnected
                raise _Gone() from None

        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            if message["type"] != "websocket.receive":
                continue
            try:
                await self._answer(message, extra, scope, send_or_gone)
            except _Gone:
                return

    async def _answer(self, message: dict[str, Any], extra: dict[str, Any], scope: Scope, send: Send) -> None:
        """Calls the handler with one message and sends what it returns."""
        try:
            argument = self._message.decode(message)
        except RequestError as error:
            return await send(error_message(error))
        result = None
        try:
            result = await self._runner.call(self._fn, argument, **extra)
            if result is None:
                return
            if not is_many(result):
                return await send(outgoing(result))
            async for item in self._runner.iterate(result):
                await send(outgoing(item))
        except _Gone:
            raise
        except Exception as exc:
            await send(error_message(self._failure(exc, scope)))
        finally:
            if result is not None:
                await self._runner.close(result)

    def _failure(self, exc: BaseException, scope: Scope) -> RequestError:
        """Writes the traceback to the logs; returns the short error the client gets."""
        print(
            f"svc runtime: {self.workload.name} failed on a message at {scope['path']}:\n" + format_user_traceback(exc),
            file=sys.stderr,
            end="",
            flush=True,
        )
        return RequestError("handler_error", f"{type(exc).__name__} in {self.workload.name}; see the workload logs")
