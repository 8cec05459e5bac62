"""WebSocket sessions with realtime handlers and the WebSocket routes of ASGI apps.

Uses the websockets package (version 11 or newer, for its synchronous client), imported only when
a session opens: the rest of the client works without it.
"""

from __future__ import annotations

import importlib
import json
from types import ModuleType
from typing import Any, Iterator, Mapping, TypeVar, cast

from svc import _json
from svc._client._errors import error_from_answer
from svc.exceptions import RemoteError, ServerUnreachableError

from ._decode import decode, svc_error, to_json

__all__ = ["Connection", "ConnectionClosed", "open_socket"]


class ConnectionClosed(ConnectionError):
    """The WebSocket session is over: the server or this client closed it."""


def _websockets(module: str) -> ModuleType:
    """'websockets.<module>', imported by name: type-checking this client needs no websockets installed."""
    try:
        return importlib.import_module(f"websockets.{module}")
    except ImportError as error:
        raise ImportError(
            "connect() needs the websockets package, version 11 or newer (pip install websockets); "
            "the rest of this client works without it"
        ) from error


_C = TypeVar("_C", bound="Connection")


def open_socket(workload: Any, connection: type[_C], path: str, headers: Mapping[str, str] | None,
                 open_timeout: float | None, typing_: dict[str, Any]) -> _C:
    client = _websockets("sync.client")
    exceptions = _websockets("exceptions")

    base, sent = workload._target()
    url = "ws" + base[4:] if base.startswith("http") else base
    if path not in ("", "/"):
        url = url.rstrip("/") + "/" + path.lstrip("/")
    sent.update(headers or {})
    try:
        socket = client.connect(url, additional_headers=sent, open_timeout=open_timeout)
    except getattr(exceptions, "InvalidStatus", ()) as refused:
        response = refused.response
        raise error_from_answer(response.status_code, bytes(response.body or b""), f"WebSocket {url}", api=False) from None
    except (OSError, TimeoutError) as error:
        raise ServerUnreachableError(f"cannot open a WebSocket to {workload._where()} at {url}: {error}") from None
    return connection(socket, workload=workload, **typing_)


class Connection:
    """A WebSocket session: 'send()' messages, 'receive()' what comes back; a context manager and an iterator.

    str goes as a text frame and bytes as a binary frame, anything else as its JSON text.
    'receive()' waits for the next message ('timeout' in seconds, then TimeoutError) and
    raises ConnectionClosed once the session is over; iterating yields messages until then.
    """

    def __init__(self, socket: Any, *, workload: Any, message_raw: bool = True, item: Any = Any,
                 items: str = "raw", svc_errors: bool = False) -> None:
        self._socket = socket
        self._workload = workload
        self._message_raw = message_raw
        self._item = item
        self._items = items  # raw: frames as they came; json: parsed when JSON; typed: decoded as item
        self._svc_errors = svc_errors

    def send(self, message: Any) -> None:
        """Sends one message."""
        self._send(message)

    def receive(self, timeout: float | None = None) -> Any:
        """The next message: str (text) or bytes (binary) as it came."""
        return self._receive(timeout)

    def receive_raw(self, timeout: float | None = None) -> str | bytes:
        """The next frame as it came: str for a text frame, bytes for a binary one."""
        Closed = _websockets("exceptions").ConnectionClosed

        try:
            frame: str | bytes = self._socket.recv(timeout)
            return frame
        except Closed as closed:
            raise ConnectionClosed(f"the WebSocket to {self._workload.app}/{self._workload.name} is closed ({closed})") from None

    def receive_json(self, timeout: float | None = None) -> Any:
        """The next frame parsed as JSON."""
        return json.loads(self.receive_raw(timeout))

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Any]:
        while True:
            try:
                yield self.receive()
            except ConnectionClosed:
                return

    def _send(self, message: Any) -> None:
        if isinstance(message, (bytes, bytearray, memoryview)):
            self._socket.send(bytes(cast("bytes | bytearray | memoryview[int]", message)))
        elif isinstance(message, str) and self._message_raw:
            self._socket.send(message)
        else:
            self._socket.send(_json.dumps(to_json(message)))

    def _receive(self, timeout: float | None) -> Any:
        frame = self.receive_raw(timeout)
        if isinstance(frame, bytes) and self._items != "typed":
            return frame
        try:
            value = json.loads(frame)
        except ValueError:
            if self._items != "typed":
                return frame
            raise RemoteError(f"{self._workload.app}/{self._workload.name} sent a message that is not JSON: {frame[:200]!r}",
                              code="unexpected_response") from None
        error = svc_error(value) if self._svc_errors else None
        if error is not None:
            raise error
        if self._items == "raw":
            return frame
        if self._items == "json":
            return value
        return decode(self._item, value, f"a message from {self._workload.app}/{self._workload.name}", self._workload.app)
