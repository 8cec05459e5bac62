"""The container runtime: serves one workload of an app over a Unix socket.

``python -m svc.runtime --root DIR --entry MODULE --workload NAME --socket PATH``
(see ``__main__``). ``create_app`` builds the ASGI application without
importing uvicorn, which only ``_serve`` needs.
"""

from __future__ import annotations

from .._workloads import Workload
from ._endpoint import HEALTH_PATH, EndpointApp
from ._errors import ERROR_CODES

SERVED_KINDS = ("endpoint",)


def create_app(workload: Workload) -> EndpointApp:
    """The ASGI application serving ``workload``; ValueError for kinds not served yet."""
    if workload.kind not in SERVED_KINDS:
        raise ValueError(
            f"workload {workload.name!r} is a {workload.kind}; this runtime serves only "
            f"{', '.join(SERVED_KINDS)} workloads so far"
        )
    return EndpointApp(workload)


__all__ = ["ERROR_CODES", "HEALTH_PATH", "SERVED_KINDS", "EndpointApp", "create_app"]
