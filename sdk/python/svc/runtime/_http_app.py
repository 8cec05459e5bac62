"""What every kind served over plain HTTP does the same way (endpoint, function)."""

from __future__ import annotations

from typing import Any

from .._workloads import Workload
from ._lifespan import acknowledge
from ._requests import HEALTH_PATH, Receive, Scope
from ._responses import Send, json_response


class HttpApp:
    """ASGI dispatch for HTTP-only kinds: the health route first, lifespan acknowledged (a class's exit method run at
    its shutdown), WebSockets refused.

    Subclasses implement ``_http`` for every other request and may reword ``websocket_refusal``.
    """

    websocket_refusal = "this workload serves HTTP only"

    def __init__(self, workload: Workload, on_start_value: Any = None) -> None:
        self.workload = workload
        self._health = json_response({"status": "ok", "workload": workload.name})
        # A class's @svc.exit() method, on the worker's instance: run when the worker shuts down.
        spec = workload.cls
        self._shutdown = None if spec is None or spec.exit is None else getattr(on_start_value, spec.exit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if scope["path"] == HEALTH_PATH:
                return await self._health.send(send, scope["method"] == "HEAD")
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await acknowledge(receive, send, on_shutdown=self._shutdown)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": self.websocket_refusal})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


__all__ = ["HttpApp"]
