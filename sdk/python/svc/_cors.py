"""``svc.Cors``: which web pages of other origins may call an endpoint or open a realtime handler's WebSocket.

The rules are the platform's (core/model/cors.ts); the gateway answers the browser's preflight requests and adds
the response headers, so the handler needs no CORS code of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from . import _checks
from ._checks import Problem

_WHERE = "svc.Cors"
MAX_ORIGINS = 64
MAX_HEADERS = 64
MAX_AGE_SECONDS = 86_400
DEFAULT_HEADERS = ("authorization", "content-type")
_HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_HOST = re.compile(r"^[a-z0-9._-]+$")
_TOKEN_CHARS = frozenset("!#$%&'*+.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def origin_problem(origin: str) -> str | None:
    """What is wrong with ``origin`` as an allowed origin, or None: ``*``, or ``http(s)://host[:port]`` only."""
    if origin == "*":
        return None
    if not origin.isascii() or any(char.isspace() for char in origin):
        return 'is not an origin: write the scheme and host in ASCII (punycode for other letters), like "https://app.example.com"'
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return 'is not an origin: write the scheme and host, like "https://app.example.com"'
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return 'is not an http or https origin, like "https://app.example.com"'
    if ":" not in parts.hostname and not _HOST.match(parts.hostname):
        return 'is not an origin: its host may hold letters, digits, ".", "-" and "_"'
    default_port = {"http": 80, "https": 443}[parts.scheme]
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    canonical = f"{parts.scheme}://{host}{'' if port in (None, default_port) else f':{port}'}"
    if canonical != origin:
        return (
            f"is not an origin: an origin is only scheme, host and port, like {canonical!r} "
            "(no path, query, trailing '/' or upper case)"
        )
    return None


def _origins(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise Problem(f"is a single string: pass a list such as [{value!r}]")
    if not isinstance(value, (list, tuple)) or not value:
        raise Problem("must be a non-empty list of origins, such as ['https://app.example.com'], or ['*']")
    items = cast("Sequence[object]", value)
    if len(items) > MAX_ORIGINS:
        raise Problem(f"lists {len(items)} origins; at most {MAX_ORIGINS}")
    origins: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise Problem(f"holds a {_checks.type_name(item)}, not an origin string")
        problem = origin_problem(item)
        if problem is not None:
            raise Problem(f"holds {item!r}, which {problem}")
        origins.append(item)
    return tuple(origins)


def _methods(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise Problem("must be None (the endpoint's own methods) or a non-empty list such as ['GET', 'POST']")
    methods: list[str] = []
    for item in cast("Sequence[object]", value):
        method = item.upper() if isinstance(item, str) else None
        if method not in _HTTP_METHODS or method in methods:
            raise Problem(f"holds {item!r}: list distinct HTTP methods from {', '.join(_HTTP_METHODS)}")
        methods.append(method)
    return tuple(methods)


def _headers(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise Problem("must be a list of header names, such as ['authorization', 'content-type']")
    items = cast("Sequence[object]", value)
    if len(items) > MAX_HEADERS:
        raise Problem(f"lists {len(items)} headers; at most {MAX_HEADERS}")
    headers: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item or not set(item) <= _TOKEN_CHARS:
            raise Problem(f"holds {item!r}, which is not a header name")
        headers.append(item.lower())
    return tuple(headers)


_FIELDS = {
    "origins": _origins,
    "methods": _methods,
    "headers": _headers,
    "credentials": _checks.boolean,
    "max_age": _checks.integer(0, MAX_AGE_SECONDS),
}


@dataclass(frozen=True)
class Cors:
    """Web pages of other origins that may call the workload's URL: ``cors=svc.Cors(origins=[...])``.

    The gateway answers their browsers' preflight requests (``OPTIONS`` with ``Origin`` and
    ``Access-Control-Request-Method``, which never carry a token) and adds ``Access-Control-Allow-Origin``
    and its kin to every answer to an allowed origin; the workload's own code sees only the real requests.

    Parameters:
        origins (list[str]): Exact origins (``"https://app.example.com"``: scheme, host and port, no path), or
            ``["*"]`` for any page. At most 64.
        methods (list[str] | None): Methods pages may use; None: the endpoint's own ``methods``.
        headers (list[str]): Request headers pages may send. Default: ``["authorization", "content-type"]``.
        credentials (bool): Pages may send cookies and read answers with them; never with ``"*"``. Default: False.
        max_age (int): Seconds a browser may keep a preflight's answer, 0 to 86400. Default: 600.

    Raises:
        svc.InvalidOptionError: a value is of the wrong type, not an origin, or ``"*"`` with ``credentials=True``.
    """

    origins: Sequence[str]
    methods: Sequence[str] | None = None
    headers: Sequence[str] = field(default=DEFAULT_HEADERS)
    credentials: bool = False
    max_age: int = 600

    def __post_init__(self) -> None:
        _checks.check_fields(_WHERE, self, _FIELDS)
        if self.credentials and "*" in self.origins:
            _checks.reject(
                _WHERE,
                "origins",
                list(self.origins),
                "holds '*' with credentials=True, which browsers refuse: list the origins that may send credentials",
            )

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: ``{"origins", "methods", "headers", "credentials", "max_age"}``."""
        return {
            "origins": list(self.origins),
            "methods": None if self.methods is None else list(self.methods),
            "headers": list(self.headers),
            "credentials": self.credentials,
            "max_age": self.max_age,
        }
