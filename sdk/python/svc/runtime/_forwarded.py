"""What the gateway tells an ``asgi`` workload about each request, in its ``x-forwarded-*`` headers.

- ``x-forwarded-prefix``: the URL prefix the workload is served under (``/default/app/web``),
  which becomes the app's ``root_path``;
- ``x-forwarded-for``: the client's address (behind a trusted proxy, a chain whose first entry
  is the client), which becomes ``scope["client"]``;
- ``x-forwarded-proto``: ``http`` or ``https``, which becomes ``scope["scheme"]`` (``ws`` or
  ``wss`` on a WebSocket).

Only the gateway reaches a worker, so it is believed; this is what uvicorn's proxy-headers
middleware did for every kind of workload. Only ``asgi`` apps read the client and scheme, so
the runtime reads all three here, in the one pass over the headers it makes anyway (see
docs/architecture.md, "Containers see the client's Host").
"""

from __future__ import annotations

import re
from typing import TypeVar

from ._requests import Scope

PREFIX_HEADER = b"x-forwarded-prefix"
FOR_HEADER = b"x-forwarded-for"
PROTO_HEADER = b"x-forwarded-proto"
# By length: most headers are passed over without being lowercased or compared.
_WANTED = {len(name): name for name in (PREFIX_HEADER, FOR_HEADER, PROTO_HEADER)}

# What the gateway sends: /<workspace>/<app>/<workload>, nothing that needs escaping.
_PREFIX = re.compile(r"(/[A-Za-z0-9._~-]+)+")
# A worker serves one workload behind one gateway: few distinct values; the caches are bounded anyway.
_CACHE_SIZE = 256
_prefixes: dict[bytes, str] = {}
_clients: dict[bytes, tuple[str, int] | None] = {}
_V = TypeVar("_V")


#: The prefix ("" without a usable one), the client (None: left as the server saw it), the scheme (None: likewise).
Forwarded = tuple[str, tuple[str, int] | None, str | None]


def read_forwarded(scope: Scope) -> Forwarded:
    """The three headers, read in one pass (on every request: a plain tuple, remembered verdicts).
    A repeated or malformed prefix is ignored; repeated ``x-forwarded-for`` headers are one list,
    as HTTP joins them; the last ``x-forwarded-proto`` wins."""
    prefix: bytes | None = None
    prefixes = 0
    client: bytes | None = None
    proto: bytes | None = None
    for name, value in scope.get("headers", ()):
        wanted = _WANTED.get(len(name))
        if wanted is None or (name != wanted and name.lower() != wanted):
            continue
        if wanted is PREFIX_HEADER:
            prefix = value
            prefixes += 1
        elif wanted is FOR_HEADER:
            client = value if client is None else client + b", " + value
        else:
            proto = value
    return (
        _prefix(prefix) if prefixes == 1 and prefix is not None else "",
        None if client is None else _client(client),
        None if proto is None else _scheme(proto, scope["type"] == "websocket"),
    )


def _prefix(value: bytes) -> str:
    prefix = _prefixes.get(value)
    if prefix is None:
        text = value.decode("latin-1").rstrip("/")
        prefix = text if _PREFIX.fullmatch(text) else ""
        _remember(_prefixes, value, prefix)
    return prefix


def _client(value: bytes) -> tuple[str, int] | None:
    if value in _clients:
        return _clients[value]
    client = _address(value.decode("latin-1").split(",", 1)[0].strip())
    _remember(_clients, value, client)
    return client


def _address(text: str) -> tuple[str, int] | None:
    """``host``, ``host:port`` or ``[v6]:port`` as (host, port), port 0 when none is given; None for nothing usable."""
    if text == "":
        return None
    host, port = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:  # more than one colon: a bare IPv6 address, no port
        host, _, port = text.partition(":")
    return (host, int(port)) if port.isdigit() else (host, 0)


def _scheme(value: bytes, websocket: bool) -> str | None:
    said = _SCHEMES.get(value)
    if said is None:
        said = _SCHEMES.get(value.strip().lower())
    if said is None or not websocket:
        return said
    return "wss" if said == "https" else "ws"


# What X-Forwarded-Proto may say (the gateway says http or https), as an HTTP request's scheme.
_SCHEMES = {b"http": "http", b"https": "https", b"ws": "http", b"wss": "https"}


def _remember(cache: dict[bytes, _V], key: bytes, value: _V) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value
