"""The ASGI application that serves one endpoint workload (no web framework, no uvicorn).

``GET /_svc/health`` answers 200 before anything else. Every other request calls
the handler: the gateway has already matched the route and the method.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

from .._context import Context
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from ._binding import Binder
from ._errors import RequestError
from ._responses import Send, error_response, json_response, result_response

HEALTH_PATH = "/_svc/health"
BODY_METHODS = ("POST", "PUT", "PATCH")
Receive = Callable[[], Awaitable[dict[str, Any]]]


class EndpointApp:
    """ASGI callable for an ``endpoint`` workload.

    Sync handlers run in a thread pool sized by the ``concurrency`` option; async
    handlers run on the event loop.
    """

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self._fn = workload.target
        self._binder = Binder(self._fn)
        self._is_async = inspect.iscoroutinefunction(self._fn) or inspect.isasyncgenfunction(self._fn)
        self._executor = ThreadPoolExecutor(
            max_workers=workload.options.get("concurrency", 1), thread_name_prefix=f"svc-{workload.name}"
        )
        self._health = json_response({"status": "ok", "workload": workload.name})

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "this workload serves HTTP only"})

    async def _http(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        head = scope["method"] == "HEAD"
        if scope["path"] == HEALTH_PATH:
            return await self._health.send(send, head)
        try:
            kwargs = await self._arguments(scope, receive)
        except RequestError as error:
            return await error_response(error).send(send, head)
        except _Disconnected:
            return
        if self._binder.wants_context:
            kwargs["context"] = _context(self.workload.name, scope)

        started = False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            result = await self._call(kwargs)
            await result_response(result, self._run_sync).send(tracked_send, head)
        except Exception as exc:
            self._report(exc, scope)
            if not started:  # once the status line is out, an unfinished body tells the client instead
                message = f"{type(exc).__name__} in {self.workload.name}; see the workload logs"
                await error_response(RequestError("handler_error", message)).send(send, head)

    async def _arguments(self, scope: dict[str, Any], receive: Receive) -> dict[str, Any]:
        if scope["method"] in BODY_METHODS:
            return self._binder.from_body(await _read_body(receive))
        return self._binder.from_query(scope.get("query_string", b""))

    async def _call(self, kwargs: dict[str, Any]) -> Any:
        if self._is_async:
            result = self._fn(**kwargs)
        else:
            result = await self._run_sync(functools.partial(self._fn, **kwargs))
        return await result if inspect.isawaitable(result) else result

    async def _run_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _report(self, exc: BaseException, scope: dict[str, Any]) -> None:
        print(
            f"svc runtime: {self.workload.name} failed on {scope['method']} {scope['path']}:\n"
            + format_user_traceback(exc),
            file=sys.stderr, end="", flush=True,
        )


class _Disconnected(Exception):
    """The client went away before its request body arrived."""


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return bytes(body)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _context(workload: str, scope: dict[str, Any]) -> Context:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return Context(
        workload=workload, method=scope["method"], path=scope["path"],
        headers=headers, request_id=headers.get("x-request-id"),
    )
