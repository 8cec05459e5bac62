"""Reading what arrives: request bodies, headers and the ``svc.Context`` a handler gets."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._context import Context

Receive = Callable[[], Awaitable[dict[str, Any]]]
Scope = dict[str, Any]

HEALTH_PATH = "/_svc/health"
"""Answered by the runtime itself, before the workload's code, for every kind."""


class Disconnected(Exception):
    """The client went away before its request body arrived."""


async def read_body(receive: Receive) -> bytes:
    """The whole request body; Disconnected when the client leaves first."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return bytes(body)


def headers_of(scope: Scope) -> dict[str, str]:
    """Request headers, names lower-cased; a repeated header's values joined with ', '."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def make_context(workload: str, scope: Scope, on_start_value: Any) -> Context:
    """The ``svc.Context`` of one request (or one WebSocket session: method ``GET``)."""
    headers = headers_of(scope)
    return Context(
        workload=workload,
        method=scope.get("method", "GET"),
        path=scope["path"],
        headers=headers,
        request_id=headers.get("x-request-id"),
        on_start_value=on_start_value,
    )
