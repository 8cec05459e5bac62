"""The ASGI application that serves an ``asgi`` workload: the user's own ASGI app, every route.

``GET /_svc/health`` is answered first, by the runtime. Every other HTTP request
and WebSocket session goes to the user's application with:

- ``root_path`` set to the workload's URL prefix, which the gateway sends as the
  ``x-forwarded-prefix`` header (``/default/app/web``), and ``path`` (and
  ``raw_path``) starting with it, as ASGI servers do for a mounted app; frameworks
  (Starlette, FastAPI) route on the rest and generate URLs with the prefix;
- ``client`` and ``scheme`` as the gateway saw them (``x-forwarded-for``, ``-proto``);
- ``state["on_start_value"]``: what the workload's ``on_start`` returned (Starlette:
  ``request.state.on_start_value``), next to the state the app's own lifespan set.

At most ``concurrent_requests`` requests and WebSocket sessions run at once; the
others wait. The app's lifespan (startup, shutdown) runs once, see ``AppLifespan``.
"""

from __future__ import annotations

import sys
from typing import Any

from .._tracebacks import format_user_traceback
from .._workloads import Workload
from ._errors import RequestError
from ._forwarded import read_forwarded
from ._lifespan import AppLifespan, LifespanFailed
from ._requests import HEALTH_PATH, Receive, Scope
from ._responses import Send, error_response, json_response
from ._slots import Slots


class AsgiApp:
    """ASGI callable for an ``asgi`` workload.

    ``startup()`` and ``shutdown()`` run the user app's lifespan; a server may call
    them, or send lifespan messages (uvicorn ``lifespan="on"``), or neither: then the
    first request runs the startup before it is served.
    """

    def __init__(self, workload: Workload, on_start_value: Any = None) -> None:
        self.workload = workload
        self._app = workload.target
        self._on_start_value = on_start_value
        self._slots = Slots(workload.options.get("concurrent_requests", 1))
        self._lifespan = AppLifespan(self._app, workload.name)
        self._health = json_response({"status": "ok", "workload": workload.name})
        self._failure_reported = False

    async def startup(self) -> None:
        """Runs the user app's lifespan startup once; LifespanFailed if it reports failure."""
        await self._lifespan.startup()

    async def shutdown(self) -> None:
        """Runs the user app's lifespan shutdown once; LifespanFailed if it reports failure."""
        await self._lifespan.shutdown()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"] == HEALTH_PATH:
            await self._health.send(send, scope["method"] == "HEAD")
        elif scope["type"] in ("http", "websocket"):
            await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._lifespan.ready and not await self._ready():
            message = f"{self.workload.name} failed to start; see the workload logs"
            if scope["type"] == "http":
                await error_response(RequestError("handler_error", message)).send(send, scope["method"] == "HEAD")
            else:
                await send({"type": "websocket.close", "code": 1011, "reason": "the workload failed to start"})
            return
        # acquire() and release() themselves: `async with` would add a coroutine each way per request.
        slots = self._slots.hold()
        await slots.acquire()
        try:
            await self._call_app(self._mounted(scope), receive, send)
        finally:
            slots.release()

    async def _ready(self) -> bool:
        """Runs the app's startup if nobody has yet (or waits for it); False when it failed."""
        try:
            await self._lifespan.startup()
        except LifespanFailed as failure:
            if not self._failure_reported:
                self._failure_reported = True
                print(
                    f"svc runtime: {self.workload.name}: the ASGI app's startup failed:\n{failure}",
                    file=sys.stderr,
                    flush=True,
                )
            return False
        return True

    def _mounted(self, scope: Scope) -> Scope:
        """The scope the user's app sees (changed in place: the server makes one per request): the prefix
        as ``root_path``, the client and scheme the gateway saw (see _forwarded.py), and ``state``."""
        prefix, client, scheme = read_forwarded(scope)
        if prefix:
            scope["root_path"] = prefix
            scope["path"] = prefix + scope["path"]
            if scope.get("raw_path") is not None:
                scope["raw_path"] = prefix.encode("ascii") + scope["raw_path"]
        else:
            scope.setdefault("root_path", "")
        if client is not None:
            scope["client"] = client
        if scheme is not None:
            scope["scheme"] = scheme
        scope["state"] = {"on_start_value": self._on_start_value, **scope.get("state", {}), **self._lifespan.state}
        return scope

    async def _call_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] in ("http.response.start", "websocket.accept", "websocket.close")
            await send(message)

        try:
            await self._app(scope, receive, tracked_send)
        except Exception as exc:
            where = f"{scope.get('method', 'WEBSOCKET')} {scope['path']}"
            print(
                f"svc runtime: {self.workload.name} failed on {where}:\n" + format_user_traceback(exc),
                file=sys.stderr,
                end="",
                flush=True,
            )
            if started:  # the status line is out: the unfinished response tells the client
                return
            if scope["type"] == "http":
                message = f"{type(exc).__name__} in {self.workload.name}; see the workload logs"
                await error_response(RequestError("handler_error", message)).send(send, scope["method"] == "HEAD")
            else:
                await send({"type": "websocket.close", "code": 1011, "reason": "the workload failed"})

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        """The server's lifespan messages: the user app's startup and shutdown, once."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._lifespan.startup()
                except LifespanFailed as failure:
                    await send({"type": "lifespan.startup.failed", "message": str(failure)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await self._lifespan.shutdown()
                except LifespanFailed as failure:
                    await send({"type": "lifespan.shutdown.failed", "message": str(failure)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return
