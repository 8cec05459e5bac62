"""The container runtime: serves one workload of an app over a Unix socket.

``python -m svc.runtime --root DIR --entry MODULE --workload NAME --socket PATH``
(see ``__main__``). ``create_app`` builds the ASGI application of any workload kind
without importing uvicorn, which only ``_serve`` needs; ``run_on_start`` runs the
workload's ``on_start`` whose value ``create_app`` hands to the handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .._workloads import Workload
from ._asgi import AsgiApp
from ._endpoint import EndpointApp
from ._errors import ERROR_CODES
from ._function import FunctionApp
from ._lifecycle import run_on_start
from ._realtime import RealtimeApp
from ._requests import HEALTH_PATH

_APPS: dict[str, Callable[..., Any]] = {
    "function": FunctionApp,
    "endpoint": EndpointApp,
    "asgi": AsgiApp,
    "realtime": RealtimeApp,
}
SERVED_KINDS = tuple(_APPS)


def create_app(workload: Workload, *, on_start_value: Any = None) -> Any:
    """The ASGI application serving ``workload``; ValueError for a bad workload.

    ``on_start_value`` is what ``run_on_start(workload)`` returned in this worker:
    handlers read it as ``context.on_start_value`` (an ASGI app as
    ``scope["state"]["on_start_value"]``).
    """
    if not isinstance(cast(object, workload), Workload):  # a caller without a type checker
        raise ValueError(f"create_app takes a svc workload (app.workloads[i]), not a {type(workload).__name__}")
    factory = _APPS.get(workload.kind)
    if factory is None:
        raise ValueError(
            f"workload {workload.name!r} is a {workload.kind!r}; this runtime serves {', '.join(SERVED_KINDS)} workloads"
        )
    return factory(workload, on_start_value)


__all__ = [
    "ERROR_CODES",
    "HEALTH_PATH",
    "SERVED_KINDS",
    "AsgiApp",
    "EndpointApp",
    "FunctionApp",
    "RealtimeApp",
    "create_app",
    "run_on_start",
]
