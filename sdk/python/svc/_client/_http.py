"""A small HTTP client on ``http.client``: the SDK stays free of third-party packages.

One connection per request, with a connect timeout and an optional read timeout: a
remote call may wait minutes for its image, so its answer is read without one. Requests
sent with ``reuse=True`` (a function's calls, one after another) take a kept-alive
connection instead when there is one (``_connections``), and hand theirs back once
they read what they need of the answer (``Stream.finish()``). Streamed answers (a
call's NDJSON frames, a log follow) are read line by line as they arrive, and can be
cut from another thread with ``Stream.close()``.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Union
from urllib.parse import urlsplit

from .. import __version__
from ..exceptions import ConfigError, ServerUnreachableError
from . import _connections
from ._credentials import Credentials
from ._errors import error_from_answer

USER_AGENT = f"svc-python/{__version__}"
CONNECT_TIMEOUT = 10.0
Body = Union[bytes, IO[bytes], None]
"""A request body: bytes, or a binary file read as it is sent (give its Content-Length)."""
API_TIMEOUT = 60.0
# How long an API request answered 503 not_leader is sent again: svc replicas changing leader (a rolling
# update of the svc job, a replica lost) answer so until one leads; the lock's TTL is 15 s, Consul may take twice.
LEADER_WAIT = 30.0


@dataclass(frozen=True)
class Answer:
    """A whole answer: status, headers (names lower-cased) and body."""

    status: int
    headers: dict[str, str]
    body: bytes
    url: str

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Stream:
    """An answer read as it arrives; ``close()`` may be called from any thread."""

    def __init__(
        self,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        origin: _connections.Origin | None = None,
    ) -> None:
        self._connection = connection
        self._origin = origin
        self._kept = False
        self.response = response
        self.status = response.status
        self._headers: dict[str, str] | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The answer's headers, names lower-cased (made when first asked: a call's frames need none)."""
        if self._headers is None:
            self._headers = {name.lower(): value for name, value in self.response.getheaders()}
        return self._headers

    def readline(self) -> bytes:
        """The next line (with its line break), b"" at the end or once closed."""
        try:
            return self.response.readline()
        except (OSError, ValueError, http.client.HTTPException, AttributeError):
            return b""

    def read(self) -> bytes:
        return self.response.read()

    def finish(self) -> None:
        """The caller read all it needs: a connection opened with ``reuse=True`` is kept for the next
        request (which reads the rest of this answer first); any other is closed by ``close()``."""
        if self._origin is not None and not self._kept:
            self._kept = True
            _connections.keep(self._origin, self._connection, self.response)

    def close(self) -> None:
        if self._kept:
            return
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in readline()
            except OSError:
                pass
        self._connection.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _origin(url: str, where: str) -> tuple[_connections.Origin, str]:
    """The origin (scheme, host, port) of ``url`` and the path (with query) to request there."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{url!r} ({where}) is not an http:// or https:// URL",
            hint="Set SVC_SERVER to the server's base URL, such as http://127.0.0.1:7420.",
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"{url!r} ({where}) has an invalid port") from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return (parts.scheme, parts.hostname, port), target


WHOLE_BODY_BYTES = 64 * 1024
"""Bodies up to this size go out with the request's head in one write."""


class _OneWrite:
    """``http.client`` writes a request's head, then its body: two TCP segments, two reads for
    the server (and a wake-up each) for a call of a few bytes. ``request_whole`` gathers what
    it sends and writes it at once when the request is complete."""

    _gathered: list[bytes] | None = None

    def send(self, data: Any) -> None:
        if self._gathered is not None and isinstance(data, bytes):
            self._gathered.append(data)
        else:
            super().send(data)  # type: ignore[misc]

    def request_whole(self, method: str, target: str, body: bytes, headers: Mapping[str, str]) -> None:
        self._gathered = []
        try:
            self.request(method, target, body=body, headers=headers)  # type: ignore[attr-defined]
            gathered = b"".join(self._gathered)
        finally:
            self._gathered = None
        super().send(gathered)  # type: ignore[misc]


class _Connection(_OneWrite, http.client.HTTPConnection):
    pass


class _TlsConnection(_OneWrite, http.client.HTTPSConnection):
    pass


def _connect(origin: _connections.Origin) -> http.client.HTTPConnection:
    scheme, host, port = origin
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = _TlsConnection(host, port, timeout=CONNECT_TIMEOUT, context=ssl.create_default_context())
    else:
        connection = _Connection(host, port, timeout=CONNECT_TIMEOUT)
    connection.connect()
    return connection


def _send(
    connection: http.client.HTTPConnection, method: str, target: str, body: Body, headers: Mapping[str, str]
) -> None:
    if isinstance(connection, _OneWrite) and isinstance(body, bytes) and len(body) <= WHOLE_BODY_BYTES:
        connection.request_whole(method, target, body, headers)
    else:
        connection.request(method, target, body=body, headers=headers)


def open_url(
    method: str,
    url: str,
    *,
    body: Body = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = API_TIMEOUT,
    where: str = "the svc server",
    reuse: bool = False,
) -> Stream:
    """Sends a request and returns its answer unread; ServerUnreachableError when nobody answers.

    With ``reuse``, a kept-alive connection to the same origin is used when there is one; the
    caller hands it back with ``Stream.finish()`` once it read what it needs.
    """
    origin, target = _origin(url, where)
    sent = {"User-Agent": USER_AGENT, **(headers or {})}
    connection: http.client.HTTPConnection | None = _connections.take(origin) if reuse else None
    try:
        if connection is None:
            connection = _connect(origin)
        assert connection.sock is not None
        connection.sock.settimeout(timeout)
        _send(connection, method, target, body, sent)
        response = connection.getresponse()
    except (OSError, http.client.HTTPException) as error:
        if connection is not None:
            connection.close()
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise ServerUnreachableError(
            f"cannot reach {where} at {url.split('?')[0]}: {reason}",
            hint="Is `svc server` running there? Check SVC_SERVER, or the server `svc login` saved.",
        ) from None
    return Stream(connection, response, origin if reuse else None)


def _rewindable(body: Body) -> bool:
    return body is not None and not isinstance(body, bytes) and getattr(body, "seekable", lambda: False)()


def _leader_wait(status: int, headers: Any, data: bytes) -> float | None:
    """Seconds to wait before sending again an answer 503 not_leader, else None."""
    if status != 503:
        return None
    try:
        code = json.loads(data)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    if code != "not_leader":
        return None
    try:
        retry_after = float(headers.get("retry-after") or 1)
    except ValueError:
        retry_after = 1.0
    return min(5.0, max(1.0, retry_after))


class Api:
    """The control-plane API (``/api/v1``) of one server, as one caller."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.server = credentials.server
        self.where = f"the svc server (from {credentials.server_from})"

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.credentials.token}"}

    def url(self, path: str) -> str:
        return f"{self.server}/api/v1{path}"

    def open(
        self,
        method: str,
        path: str,
        *,
        body: Body = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = API_TIMEOUT,
        reuse: bool = False,
    ) -> Stream:
        """An API request whose answer is read by the caller (status not checked)."""
        return open_url(
            method,
            self.url(path),
            body=body,
            headers={**self.auth(), **(headers or {})},
            timeout=timeout,
            where=self.where,
            reuse=reuse,
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        body: Body = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = API_TIMEOUT,
        ok: tuple[int, ...] = (200, 201, 204),
    ) -> Answer:
        """An API request read whole; the typed exception of its error code unless its status is in ``ok``."""
        sent = dict(headers or {})
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        deadline = time.monotonic() + LEADER_WAIT
        # A body can be sent again when it is bytes, or a stream that can go back to where it starts.
        start = body.tell() if _rewindable(body) else None  # type: ignore[union-attr]
        resendable = body is None or isinstance(body, bytes) or start is not None
        while True:
            # On a kept-alive connection (_connections): a new one per request, as for a warm
            # .spawn() or .get(), costs more than the request itself.
            with self.open(method, path, body=body, headers=sent, timeout=timeout, reuse=True) as stream:
                try:
                    data = stream.read()
                except (OSError, http.client.HTTPException) as error:
                    raise ServerUnreachableError(f"{self.where} stopped answering {method} {path}: {error}") from None
                stream.finish()
            wait = _leader_wait(stream.status, stream.headers, data)
            # Nothing was done (no replica leads this moment): send it again, the body from its start.
            if wait is None or not resendable or time.monotonic() + wait > deadline:
                break
            time.sleep(wait)
            if start is not None:
                body.seek(start)  # type: ignore[union-attr]
        if stream.status not in ok:
            raise error_from_answer(stream.status, data, f"{method} /api/v1{path}")
        return Answer(stream.status, stream.headers, data, self.url(path))
