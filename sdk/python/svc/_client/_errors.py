"""From the server's error answers to typed exceptions, by stable error code.

Every svc error body is ``{"error": {"code", "message", "hint", "details"}}``
(docs/errors.md); the code picks the class, so callers catch what they can act on.
A code this SDK does not know yet (a newer server) still raises ``RemoteError``
with that code; a body that is not svc's (a proxy's page) is classed by status.
"""

from __future__ import annotations

import json
from typing import Any, cast

from .. import exceptions as ex
from .._json import is_object

#: Every code of core/model/errors.ts and the class raised for it (a test keeps the two in step).
CODE_CLASSES: dict[str, type[ex.RemoteError]] = {
    "bad_request": ex.InvalidRequestError,
    "name_invalid": ex.InvalidRequestError,
    "invalid_json": ex.InvalidRequestError,
    "invalid_arguments": ex.InvalidRequestError,
    "manifest_invalid": ex.ProjectError,
    "manifest_failed": ex.ProjectError,
    "config_invalid": ex.ConfigError,
    "payload_too_large": ex.InvalidRequestError,
    "volume_full": ex.InvalidRequestError,
    "range_not_satisfiable": ex.InvalidRequestError,
    "volume_in_use": ex.InvalidRequestError,
    "volume_not_found": ex.NotFoundError,
    "bundle_invalid": ex.ProjectError,
    "bundle_too_large": ex.ProjectError,
    "bundle_failed": ex.ProjectError,
    "headers_too_large": ex.InvalidRequestError,
    "client_closed": ex.RemoteError,
    "usage_invalid": ex.InvalidRequestError,
    "confirmation_required": ex.InvalidRequestError,
    "unauthorized": ex.UnauthorizedError,
    "not_signed_in": ex.NotSignedInError,
    "forbidden": ex.ForbiddenError,
    "login_denied": ex.ForbiddenError,
    "login_expired": ex.UnauthorizedError,
    "artifact_url_invalid": ex.ForbiddenError,
    "plan_forbids_domain": ex.ForbiddenError,
    "not_operator": ex.ForbiddenError,
    "not_found": ex.NotFoundError,
    "method_not_allowed": ex.InvalidRequestError,
    "upgrade_required": ex.InvalidRequestError,
    "conflict": ex.InvalidRequestError,
    "call_cancelled": ex.CallCancelledError,
    "call_expired": ex.CallExpiredError,
    "call_interrupted": ex.WorkerCrashedError,
    "secret_not_found": ex.NotFoundError,
    "domain_taken": ex.InvalidRequestError,
    "queue_full": ex.QueueFullError,
    "too_many_runs": ex.TooManyRequestsError,
    "too_many_maps": ex.TooManyRequestsError,
    "rate_limited": ex.TooManyRequestsError,
    # A deploy past a quota is the CLI's (403); what reaches Python is traffic's 429 with Retry-After.
    "quota_exceeded": ex.TooManyRequestsError,
    "no_capacity": ex.UnavailableError,
    "starting": ex.UnavailableError,
    "app_paused": ex.UnavailableError,
    "deployment_stopped": ex.UnavailableError,
    "not_leader": ex.UnavailableError,
    "shutting_down": ex.UnavailableError,
    # The server's disk is full (507): the write was refused and works again once the operator frees space.
    "disk_full": ex.UnavailableError,
    "crash_loop": ex.UnavailableError,
    "worker_crashed": ex.WorkerCrashedError,
    "upstream_unreachable": ex.WorkerCrashedError,
    "memory_limit_exceeded": ex.WorkerCrashedError,
    "server_unreachable": ex.ServerUnreachableError,
    "unexpected_response": ex.RemoteError,
    "handler_error": ex.RemoteCallError,
    "timeout": ex.FunctionTimeoutError,
    "image_build_failed": ex.StartFailedError,
    "python_unavailable": ex.StartFailedError,
    "container_failed": ex.StartFailedError,
    "gpu_unavailable": ex.StartFailedError,
    "scheduler_unreachable": ex.UnavailableError,
    "nomad_rejected": ex.StartFailedError,
    "plugin_invalid": ex.RemoteError,
    "plugin_incompatible": ex.RemoteError,
    "plugin_error": ex.RemoteError,
    "state_key_invalid": ex.RemoteError,
    "state_value_too_large": ex.RemoteError,
    "state_corrupt": ex.RemoteError,
    "secrets_key_invalid": ex.RemoteError,
    "state_locked": ex.RemoteError,
    "data_format_newer": ex.RemoteError,
    "state_unavailable": ex.UnavailableError,
    "internal": ex.RemoteError,
}

_STATUS_CLASSES: dict[int, type[ex.RemoteError]] = {
    401: ex.UnauthorizedError,
    403: ex.ForbiddenError,
    404: ex.NotFoundError,
    429: ex.TooManyRequestsError,
    502: ex.WorkerCrashedError,
    503: ex.UnavailableError,
    504: ex.FunctionTimeoutError,
}
_STATUS_CODES = {
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    429: "rate_limited",
    502: "upstream_unreachable",
    503: "no_capacity",
    504: "timeout",
}


def error_for(
    code: str, message: str, *, status: int | None = None, hint: str | None = None, details: Any = None
) -> ex.RemoteError:
    """The typed exception of ``code``."""
    cls = CODE_CLASSES.get(code, ex.RemoteError)
    return cls(message, code=code, status=status, hint=hint, details=details)


def error_from_answer(status: int, body: bytes, what: str, *, api: bool = True) -> ex.RemoteError:
    """The exception for an error answer (status >= 400) to ``what`` (``GET /api/v1/runs``).

    An answer without svc's error shape is classed by its status; its code is
    ``unexpected_response`` from the API (a proxy's page, another program on the port),
    and the status's usual code from a workload (an ASGI app's own error bodies).
    """
    error = _svc_error(body)
    if error is not None:
        code = str(error["code"])
        message = error.get("message")
        hint = error.get("hint")
        return error_for(
            code,
            message if isinstance(message, str) and message else f"{what} failed with {code}",
            status=status,
            hint=hint if isinstance(hint, str) else None,
            details=error.get("details"),
        )
    cls = _STATUS_CLASSES.get(status, ex.InvalidRequestError if 400 <= status < 500 else ex.RemoteError)
    detail = None if api else _detail(body)
    text = _detail_text(detail) if detail is not None else body[:300].decode("utf-8", "replace").strip()
    foreign = api and bool(body.strip())  # an empty body (HEAD) is just the status
    code = (
        "unexpected_response" if foreign else _STATUS_CODES.get(status, "internal" if status >= 500 else "bad_request")
    )
    return cls(
        f"{what} answered HTTP {status}" + (f": {text}" if text else ""), code=code, status=status, details=detail
    )


def _detail(body: bytes) -> Any:
    """The ``detail`` of an ASGI app's error body (FastAPI and Starlette answer ``{"detail": ...}``), else None."""
    try:
        data: object = json.loads(body)
    except ValueError:
        return None
    return data.get("detail") if is_object(data) else None


def _detail_text(detail: Any) -> str:
    """A ``detail`` as one line: the text itself, or FastAPI's validation errors as ``body.title: Field required``."""
    if isinstance(detail, str):
        return detail[:300]
    if isinstance(detail, list):
        parts: list[str] = []
        for item in cast("list[object]", detail)[:5]:
            if is_object(item) and "msg" in item:
                loc: object = item.get("loc")
                where = ".".join(str(part) for part in cast("list[object]", loc)) if isinstance(loc, list) else ""
                parts.append(f"{where}: {item['msg']}" if where else str(item["msg"]))
        if parts:
            return "; ".join(parts)[:300]
    return json.dumps(detail)[:300]


def _svc_error(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    error = data.get("error") if is_object(data) else None
    if is_object(error) and isinstance(error.get("code"), str):
        return error
    return None
