"""The ASGI application that serves one endpoint workload (no web framework, no uvicorn).

``GET /_svc/health`` answers 200 before anything else. Every other request calls
the handler: the gateway has already matched the route and the method. A
generator's items stream as Server-Sent Events (``_sse``).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from .._tracebacks import format_user_traceback
from .._workloads import Workload
from . import _timeouts
from ._binding import Binder
from ._calls import Runner
from ._errors import RequestError
from ._http_app import HttpApp
from ._requests import Disconnected, Receive, Scope, make_context, read_body
from ._responses import Send, error_response, is_stream, result_response
from ._slots import Slots
from ._sse import EventStream, error_event

BODY_METHODS = ("POST", "PUT", "PATCH")


class EndpointApp(HttpApp):
    """ASGI callable for an ``endpoint`` workload.

    At most ``concurrency`` requests run at once (the others wait for a slot); sync
    handlers run in a pool of that many threads, async handlers on the event loop.
    A request's ``timeout`` counts from when it has its slot to its last byte, a stream's
    included (``_timeouts``).
    """

    def __init__(self, workload: Workload, on_start_value: Any = None) -> None:
        super().__init__(workload, on_start_value)
        # An endpoint that serves a class's method calls it on the worker's instance (made by run_on_start).
        self._fn = workload.target if workload.serves is None else getattr(on_start_value, workload.serves)
        self._on_start_value = on_start_value
        self._binder = Binder(self._fn)
        concurrency = workload.options.get("concurrency", 1)
        self._slots = Slots(concurrency)
        self._runner = Runner(workload.name, concurrency)
        self._timeout = _timeouts.timeout_of(workload.options)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = scope["method"] == "HEAD"
        try:
            kwargs = await self._arguments(scope, receive)
        except RequestError as error:
            return await error_response(error).send(send, head)
        except Disconnected:
            return
        if self._binder.wants_context:
            kwargs["context"] = make_context(self.workload.name, scope, self._on_start_value)

        started = False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        async with self._slots.hold():
            what = f"{scope['method']} {scope['path']}"
            try:
                with _timeouts.watchdog(self.workload.name, what, self._timeout):
                    finished = await _timeouts.within(
                        self._respond(kwargs, scope, receive, tracked_send, head), self._timeout
                    )
                if not finished:
                    await self._timed_out(what, send, head, started)
            except Exception as exc:
                failure = self._failure(exc, scope)
                if not started:  # once the status line is out, an unfinished body tells the client instead
                    await error_response(failure).send(send, head)

    async def _respond(self, kwargs: dict[str, Any], scope: Scope, receive: Receive, send: Send, head: bool) -> None:
        """Calls the handler and sends its result, or its items as they come (``timeout`` bounds it all)."""
        result = await self._runner.call(self._fn, **kwargs)
        if is_stream(result):
            failed = functools.partial(self._failure, scope=scope)
            await EventStream(result, self._runner, receive, failed).send(send, head)
        else:
            await result_response(result).send(send, head)

    async def _timed_out(self, what: str, send: Send, head: bool, started: bool) -> None:
        """504 ``timeout`` (or, mid-stream, a last error event), then this worker is replaced."""
        seconds = self._timeout or 0.0
        error = RequestError(
            "timeout",
            f"{self.workload.name} did not finish within its timeout of "
            f"{_timeouts.describe_seconds(seconds)}; the call was abandoned and its worker replaced",
        )
        # First the platform stops sending this worker requests; the answer still goes out as it drains.
        _timeouts.timed_out(self.workload.name, what, seconds)
        if started:
            await send({"type": "http.response.body", "body": error_event(error), "more_body": False})
        else:
            await error_response(error).send(send, head)

    async def _arguments(self, scope: Scope, receive: Receive) -> dict[str, Any]:
        if scope["method"] in BODY_METHODS:
            return self._binder.from_body(await read_body(receive))
        return self._binder.from_query(scope.get("query_string", b""))

    def _failure(self, exc: BaseException, scope: Scope) -> RequestError:
        """Writes the traceback to the logs; returns the short error the client gets."""
        print(
            f"svc runtime: {self.workload.name} failed on {scope['method']} {scope['path']}:\n"
            + format_user_traceback(exc),
            file=sys.stderr,
            end="",
            flush=True,
        )
        return RequestError("handler_error", f"{type(exc).__name__} in {self.workload.name}; see the workload logs")
