"""Kept-alive connections to a server, for requests made one after another (warm ``.remote()`` calls).

A new TCP (and TLS) connection per call costs its client and the server more than a small
call itself. A connection whose caller read all it needed is kept here, per origin, with
its answer, and the next request to that origin takes it instead of connecting again.
Only then is the rest of the answer read (the end of a chunked body, which the server
writes after the last frame): the caller returns at its last frame without waiting for it.
A kept connection is given out only when it is surely still usable:

- idle for less than ``MAX_IDLE`` seconds, well below the time after which servers close
  idle connections (Node's default is 5 s): a server never closes one under a request;
- its last answer ended within ``END_TIMEOUT`` seconds, and the server did not say it
  would close the connection;
- not readable then: a connection the server closed (it shut down, a proxy timed it out)
  reads as the end of the stream, and is dropped rather than sent a request.

A forked child drops what its parent kept: a socket used by two processes mixes their answers.
"""

from __future__ import annotations

import http.client
import os
import select
import threading
import time

MAX_IDLE = 2.0
"""Seconds a connection may rest before it is closed rather than used again."""
MAX_KEPT = 4
"""Idle connections kept per origin (one per thread calling at once, within reason)."""
END_TIMEOUT = 5.0
"""Seconds the end of the last answer may still take when the connection is taken again."""

Origin = tuple[str, str, int | None]
"""Scheme, host and port."""

_Kept = tuple[http.client.HTTPConnection, http.client.HTTPResponse, float]
_kept: dict[Origin, list[_Kept]] = {}
_lock = threading.Lock()


def take(origin: Origin) -> http.client.HTTPConnection | None:
    """A kept connection to ``origin``, its last answer read to the end, or None (then connect anew)."""
    while True:
        with _lock:
            idle = _kept.get(origin)
            if not idle:
                return None
            connection, response, since = idle.pop()  # the most recent first: the least likely to be closed
        if time.monotonic() - since < MAX_IDLE and _usable(connection, response):
            return connection
        connection.close()


def keep(origin: Origin, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
    """Keeps ``connection`` for the next request to ``origin``; the rest of ``response`` is read then."""
    with _lock:
        idle = _kept.setdefault(origin, [])
        idle.append((connection, response, time.monotonic()))
        dropped = idle.pop(0) if len(idle) > MAX_KEPT else None
    if dropped is not None:
        dropped[0].close()


def _usable(connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> bool:
    sock = connection.sock
    if sock is None:  # http.client closed it: the server said it would
        return False
    try:
        sock.settimeout(END_TIMEOUT)
        response.read()  # the end of the last answer, which has nearly always arrived by now
    except (OSError, ValueError, http.client.HTTPException):
        return False
    return response.isclosed() and connection.sock is not None and not _readable(connection)


def _readable(connection: http.client.HTTPConnection) -> bool:
    """True when the connection has something to read: between answers that is its end."""
    try:
        readable, _, _ = select.select([connection.sock], [], [], 0)
    except (OSError, ValueError):  # closed meanwhile, or a descriptor select() cannot watch
        return True
    return bool(readable)


def _forget_in_child() -> None:
    # The parent's sockets stay open for the parent: the child only lets go of its references
    # (closing a copy of a descriptor leaves the connection open), under a lock no thread holds.
    global _lock
    _lock = threading.Lock()
    _kept.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
