"""The ASGI application that serves a ``function`` workload: pickled calls in, NDJSON frames out.

``POST /`` with a pickled ``{"args": [...], "kwargs": {...}}`` (and ``"method"`` for an ``@app.cls``
class: the method of the worker's one instance to call)
(``application/vnd.svc.call+pickle``) runs the function once and answers 200
``application/x-ndjson``, one JSON frame per line, each sent as it happens:

- ``{"type": "log", "stream": "stdout" | "stderr", "line": "..."}`` per line printed;
- then exactly one of ``{"type": "result", "pickle": "<base64>"}`` or
  ``{"type": "error", "pickle": "<base64>" | null, "exception": "Type: message",
  "traceback": "..."}``.

A call may instead come as JSON (``application/json``: an object whose fields are the
arguments, bound and converted by the parameters' types as for an endpoint): svc sends a
spawned call of its HTTP API so. Its result frame is then ``{"type": "result", "json": <value>}``.

Errors before the call (a body that is not a pickled call, another method) are
ordinary JSON error responses. docs/sdk.md describes the protocol for clients.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import json
import sys
import threading
from typing import Any

from .. import _json
from .._hints import CONTEXT_PARAMETER
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from . import _pickling, _timeouts
from ._binding import Binder
from ._calls import Runner, is_async
from ._capture import Lines, capturing, routed_to, to_container_log
from ._errors import RequestError
from ._http_app import HttpApp
from ._requests import Disconnected, Receive, Scope, headers_of, make_context, read_body
from ._responses import Send, error_response

NDJSON = "application/x-ndjson"
JSON_CALL = "application/json"
THREADS = 32
"""Sync calls run in a pool of this many threads. A function has no concurrency option:
the platform sends each worker one call at a time; the runtime itself queues nothing."""

_HEADERS = [(b"content-type", NDJSON.encode()), (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
_ALLOW = ((b"allow", b"POST"),)


class _LogFrames:
    """A call's log frames, sent in the order they were made, from any thread, while the call runs.

    They go out from a task of their own, started by the first of them: a call that prints
    nothing costs no task and no extra turn of the loop. ``end`` sends what is left, then the
    final frame, which ends the body with it: one write, not two."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._frames: collections.deque[dict[str, Any]] = collections.deque()
        self._sender: asyncio.Task[None] | None = None
        self._ending = False
        self._done = False

    def put(self, frame: dict[str, Any]) -> None:
        if self._done:  # a thread the call left behind: nobody is listening any more
            return
        self._frames.append(frame)
        if threading.get_ident() == self._loop_thread:
            self._wake()
            return
        try:
            self._loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop has closed
            pass

    def _wake(self) -> None:
        if self._ending or (self._sender is not None and not self._sender.done()):
            return  # the running sender, or end(), sends this frame too
        self._sender = self._loop.create_task(self._send_logs())

    async def _send_logs(self) -> None:
        while self._frames:
            await self._send({"type": "http.response.body", "body": _line(self._frames.popleft()), "more_body": True})

    async def end(self, final: dict[str, Any]) -> None:
        """Sends the log frames put so far, then ``final``; frames put later are dropped."""
        self._ending = True
        if self._sender is not None:
            await self._sender
        await self._send_logs()  # those whose wake-up came after the sender had finished
        self._done = True
        await self._send({"type": "http.response.body", "body": _line(final), "more_body": False})

    def abandon(self) -> None:
        """The call ended without a final frame (cancelled): nothing more is sent."""
        self._ending = self._done = True
        if self._sender is not None:
            self._sender.cancel()


class _Callee:
    """A function, or a method bound to the worker's instance: what a call runs, read once."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.wants_context = CONTEXT_PARAMETER in inspect.signature(fn).parameters
        self._binder: Binder | None = None

    def binder(self) -> Binder:
        """Made on the first JSON call: most functions never get one."""
        if self._binder is None:
            self._binder = Binder(self.fn)
        return self._binder


def _line(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame, separators=(",", ":")).encode("utf-8") + b"\n"


class FunctionApp(HttpApp):
    """ASGI callable for a ``function`` workload."""

    websocket_refusal = "a function takes pickled calls over HTTP POST"

    def __init__(self, workload: Workload, on_start_value: Any = None) -> None:
        super().__init__(workload, on_start_value)
        self._on_start_value = on_start_value
        # What a call names: None for a function; each @svc.method() of a class, bound to the worker's instance.
        callables = (
            {None: workload.target}
            if workload.cls is None
            else {name: getattr(on_start_value, name) for name in workload.cls.methods}
        )
        self._targets = {name: _Callee(fn) for name, fn in callables.items()}
        self._runner = Runner(workload.name, THREADS)
        self._timeout = _timeouts.timeout_of(workload.options)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = scope["method"] == "HEAD"
        try:
            callee, args, kwargs, as_json = await self._read_call(scope, receive)
        except RequestError as error:
            headers = _ALLOW if error.code == "method_not_allowed" else ()
            return await error_response(error, headers).send(send, head)
        except Disconnected:
            return
        # The platform names each call (a spawned call's id, a map input's `<map id>/<index>`, a
        # request's id): its lines carry it in the container's log.
        call_id = headers_of(scope).get("x-request-id")
        if callee.wants_context:
            kwargs["context"] = make_context(self.workload.name, scope, self._on_start_value)
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        logs = _LogFrames(send)
        try:
            # In this task: a task of its own per call, and waiting on it, would cost two more turns of the loop.
            final = await self._run(callee.fn, args, kwargs, logs, as_json, call_id)
        except BaseException:
            logs.abandon()
            raise
        await logs.end(final)

    async def _read_call(self, scope: Scope, receive: Receive) -> tuple[_Callee, list[Any], dict[str, Any], bool]:
        """What the call calls, its arguments, and whether it came as JSON (then its result goes back as JSON too)."""
        if scope["method"] != "POST":
            raise RequestError("method_not_allowed", f"a function takes calls with POST, not {scope['method']}")
        content_type = headers_of(scope).get("content-type", "").split(";")[0].strip().lower()
        if content_type == JSON_CALL:
            callee = self._callee(None)
            return callee, [], callee.binder().from_body(await read_body(receive)), True
        if content_type not in ("", _pickling.CALL_CONTENT_TYPE):
            raise RequestError(
                "bad_request",
                f"a function call is sent as {_pickling.CALL_CONTENT_TYPE} (or {JSON_CALL}), not {content_type}",
            )
        args, kwargs, method = _pickling.load_call(await read_body(receive))
        callee = self._callee(method)
        if CONTEXT_PARAMETER in kwargs and callee.wants_context:
            raise RequestError("invalid_arguments", "argument 'context' is reserved: svc fills it in, do not send it")
        return callee, args, kwargs, False

    def _callee(self, method: str | None) -> _Callee:
        """What a call naming ``method`` runs; RequestError ``bad_request`` when this workload has no such thing."""
        callee = self._targets.get(method)
        if callee is not None:
            return callee
        spec = self.workload.cls
        if spec is None:
            raise RequestError(
                "bad_request", f"{self.workload.name} is a function, not a class: a call of it names no method"
            )
        if method is None:
            problem = "a call of it names one of its methods"
        else:
            problem = f"it has no @svc.method() method {method!r}"
        raise RequestError("bad_request", f"{self.workload.name} is a class: {problem} ({', '.join(spec.methods)})")

    async def _run(
        self,
        fn: Any,
        args: list[Any],
        kwargs: dict[str, Any],
        logs: _LogFrames,
        as_json: bool = False,
        call_id: str | None = None,
    ) -> dict[str, Any]:
        """Runs the call with its output captured (log frames to ``logs``, and each line to the
        container's log tagged with ``call_id``); its final frame.

        Past its ``timeout``, the final frame says so and the worker is replaced (``_timeouts``).
        """

        def emit(stream: str, line: str) -> None:
            logs.put({"type": "log", "stream": stream, "line": line})
            if call_id is not None:
                to_container_log(stream, f"[{call_id}] {line}\n")

        lines = Lines(emit)
        outcome: list[Any] = []

        async def call() -> None:
            outcome.append(await self._call(fn, args, kwargs, lines))

        with capturing():
            try:
                with _timeouts.watchdog(self.workload.name, "the call", self._timeout):
                    finished = await _timeouts.within(call(), self._timeout)
            except (Exception, SystemExit) as exc:
                return self._error_frame(exc)
        if not finished:
            # First the platform stops sending this worker calls; the frame still goes out as it drains.
            _timeouts.timed_out(self.workload.name, "the call", self._timeout or 0.0)
            return self._timeout_frame()
        try:
            if as_json:
                return {"type": "result", "json": _json.to_json_value(outcome[0])}
            return {"type": "result", "pickle": _pickling.dump(outcome[0])}
        except Exception as exc:  # the result cannot be pickled (or has no JSON form)
            return self._error_frame(exc)

    def _timeout_frame(self) -> dict[str, Any]:
        """The error frame of a call past its time-out: the code ``timeout``, which clients raise as such."""
        seconds = _timeouts.describe_seconds(self._timeout or 0.0)
        message = f"{self.workload.name} did not finish within its timeout of {seconds}; the call was abandoned and its worker replaced"
        return {
            "type": "error",
            "code": "timeout",
            "exception": f"timeout: {message}",
            "pickle": None,
            "traceback": None,
        }

    async def _call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], lines: Lines) -> Any:
        """The function's (or method's) result: ``async def`` on the loop, anything else in a pool thread."""
        if is_async(fn):
            with routed_to(lines):
                result = fn(*args, **kwargs)
                return await result if inspect.isawaitable(result) else result

        def in_thread() -> Any:
            with routed_to(lines):
                return fn(*args, **kwargs)

        result = await self._runner.run_sync(in_thread)
        if inspect.isawaitable(result):  # a callable object whose call returns a coroutine
            with routed_to(lines):
                result = await result
        return result

    def _error_frame(self, exc: BaseException) -> dict[str, Any]:
        """The error frame for ``exc``; its traceback also goes to the workload logs."""
        remote = format_user_traceback(exc)
        print(f"svc runtime: {self.workload.name} raised:\n{remote}", file=sys.stderr, end="", flush=True)
        return {
            "type": "error",
            "pickle": _pickling.dump_exception(exc),
            "exception": _pickling.describe(exc),
            "traceback": remote,
        }
