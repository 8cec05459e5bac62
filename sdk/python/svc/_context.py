"""``svc.Context``: what the runtime tells a handler about the request it serves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Context:
    """Request details, passed to a handler that declares a parameter named ``context``,
    with the value the workload's ``on_start`` returned.

    ``context`` is reserved: it is left out of the workload's argument schema and
    the runtime fills it in. With ``.local()`` or a plain call, pass it yourself or
    give it a default.

    Example::

        def load_model() -> dict:
            return {"weights": [0.5, 1.5]}

        @app.endpoint(route="/whoami", on_start=load_model)
        def whoami(context: svc.Context) -> dict:
            model = context.on_start_value
            return {"workload": context.workload, "request_id": context.request_id, "model": model}
    """

    workload: str
    """Name of the workload being served."""
    method: str = "GET"
    """HTTP method of the request, upper-case."""
    path: str = "/"
    """Path of the request as the container received it."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Request headers, names lower-cased; repeated headers joined with ', '."""
    request_id: str | None = None
    """The ``x-request-id`` header, when the gateway or the client sent one."""
    on_start_value: Any = None
    """What the workload's ``on_start`` returned in this worker; None without ``on_start``."""
