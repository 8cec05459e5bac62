"""Exceptions raised by svc.

Hierarchy::

    Error                        base class of every exception svc raises on purpose
     ├── InvalidOptionError      (also a ValueError) a definition cannot be used:
     │                           an option of App, Image, Autoscaler or a workload
     │                           decorator, or the decorated function itself
     └── RemoteError             an error with one of svc's stable codes (core/model/errors.ts),
          │                      answered by the server, or found by the client on its
          │                      behalf: .code, .status, .message, .hint, .details
          ├── UnauthorizedError  unauthorized (401): no token, or one the server refuses
          │    └── NotSignedInError   not_signed_in: the client found no token at all
          ├── ForbiddenError     forbidden (403)
          ├── NotFoundError      not_found (404): no such app, deployment, preview, run or call
          ├── CallCancelledError call_cancelled (409): the spawned call was cancelled: no result
          ├── CallExpiredError   call_expired (410): its outcome is past the server's retention
          ├── InvalidRequestError     bad_request, invalid_arguments, ... (4xx)
          ├── ConfigError        config_invalid: a SVC_* value or the credentials file
          ├── ProjectError       manifest_failed, manifest_invalid, bundle_*: the project
          │                      could not be described, bundled or accepted
          ├── TooManyRequestsError    429: too_many_runs, too_many_maps, rate_limited,
          │                      quota_exceeded (the workspace's quota: Retry-After)
          │    └── QueueFullError     queue_full: max_pending_tasks calls already wait
          ├── UnavailableError   503: starting, app_paused, no_capacity, shutting_down, ...;
          │                      disk_full (507): the server's disk is full, for now
          ├── WorkerCrashedError worker_crashed, upstream_unreachable, memory_limit_exceeded
          │                      (502): the container died while it handled the call;
          │                      call_interrupted: svc stopped while a spawned call's last attempt ran
          ├── FunctionTimeoutError    timeout (504): the call ran past the workload's
          │                      ``timeout=`` (also the builtin TimeoutError)
          ├── StartFailedError   image_build_failed, container_failed, python_unavailable,
          │                      gpu_unavailable (no GPU of the kind asked for)
          ├── RemoteCallError    handler_error: the remote code raised and its exception
          │                      cannot be re-raised here (.type, .traceback)
          └── ServerUnreachableError  (also a ConnectionError) no answer from the server

    RemoteTraceback              not raised: the ``__cause__`` of an exception re-raised
                                 from a remote call, holding the remote traceback's text

Definition errors are raised while your module is imported (at decoration time), so
``python -m svc.manifest`` and ``svc deploy`` report them before anything runs.

Why one class for wrong types and wrong values: the fix is the same in both
cases (edit the value written in the decorator), the line between the two is
blurry (``memory="512MB"`` is a string, as required, in a form svc rejects),
and callers then need one ``except`` clause. It subclasses ``ValueError`` so
that generic ``except ValueError`` handlers keep working. ``option`` names the
option at fault when there is one.

Why remote errors are classes by code: the server's codes are stable and the
statuses are not specific (several codes share 400 or 503), so callers catch
what they can act on (``except svc.NotFoundError``) and read ``.code`` for the
rest. ``svc._client._errors`` holds the code-to-class table.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CallCancelledError",
    "CallExpiredError",
    "ConfigError",
    "Error",
    "ForbiddenError",
    "FunctionTimeoutError",
    "InvalidOptionError",
    "InvalidRequestError",
    "NotFoundError",
    "NotSignedInError",
    "ProjectError",
    "QueueFullError",
    "RemoteCallError",
    "RemoteError",
    "RemoteTraceback",
    "ServerUnreachableError",
    "StartFailedError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnavailableError",
    "WorkerCrashedError",
]


class Error(Exception):
    """Base class of the exceptions svc raises."""


class InvalidOptionError(Error, ValueError):
    """An option, or the decorated object, cannot be used as written.

    The message names the decorator or class, the option, the value given
    and how to fix it.
    """

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class RemoteError(Error):
    """An error with one of svc's stable codes, from the server or from the client on its behalf.

    Attributes:
        code: the stable error code (``not_found``, ``queue_full``, ...); docs/errors.md lists them.
        status: the HTTP status it came with, or None when no answer came.
        message: what went wrong.
        hint: what to do about it, or None.
        details: the error body's ``details`` (a field name, a rule, ...), or None.
    """

    default_code = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        hint: str | None = None,
        details: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.status = status
        self.hint = hint
        self.details = details

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nHint: {self.hint}"

    def __reduce__(self) -> Any:
        # Keyword-only fields: the default reduce would call cls(message) and lose them.
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


def _rebuild(cls: type[RemoteError], message: str, state: dict[str, Any]) -> RemoteError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class UnauthorizedError(RemoteError):
    """401 ``unauthorized``: the token is missing, malformed, unknown, expired or revoked."""

    default_code = "unauthorized"


class NotSignedInError(UnauthorizedError):
    """``not_signed_in``: no token in SVC_TOKEN, the credentials file or a local owner token."""

    default_code = "not_signed_in"


class ForbiddenError(RemoteError):
    """403 ``forbidden``: the token is valid but may not do this."""

    default_code = "forbidden"


class NotFoundError(RemoteError):
    """404 ``not_found``: no such app, deployment, preview, run, bundle or route."""

    default_code = "not_found"


class InvalidRequestError(RemoteError):
    """A 4xx the caller can fix: ``bad_request``, ``invalid_arguments``, ``payload_too_large``, ..."""

    default_code = "bad_request"


class ConfigError(RemoteError):
    """``config_invalid``: a SVC_* variable or the credentials file cannot be used."""

    default_code = "config_invalid"


class ProjectError(RemoteError):
    """The project could not be described, bundled or accepted: ``manifest_failed``, ``bundle_too_large``, ..."""

    default_code = "manifest_failed"


class TooManyRequestsError(RemoteError):
    """429: too many runs (``too_many_runs``), maps (``too_many_maps``) or requests (``rate_limited``) at once, or the workspace's quota (``quota_exceeded``)."""

    default_code = "rate_limited"


class QueueFullError(TooManyRequestsError):
    """429 ``queue_full``: ``max_pending_tasks`` calls already wait for this workload."""

    default_code = "queue_full"


class UnavailableError(RemoteError):
    """503: the workload cannot take calls now (``starting``, ``app_paused``, ``no_capacity``, ...)."""

    default_code = "no_capacity"


class WorkerCrashedError(RemoteError):
    """502 ``worker_crashed``: the container died while it handled the call."""

    default_code = "worker_crashed"


class FunctionTimeoutError(RemoteError, TimeoutError):
    """504 ``timeout``: the call ran past the function's or endpoint's ``timeout=``.

    The call was abandoned and the worker running it replaced. Also a builtin
    ``TimeoutError``, so ``except TimeoutError`` catches it; named apart from it so that
    ``svc.FunctionTimeoutError`` never shadows the builtin in ``from svc import *``.
    """

    default_code = "timeout"


class CallCancelledError(RemoteError):
    """409 ``call_cancelled``: the spawned call was cancelled before it ended, so it has no result."""

    default_code = "call_cancelled"


class CallExpiredError(RemoteError):
    """410 ``call_expired``: the spawned call ended longer ago than the server keeps outcomes."""

    default_code = "call_expired"


class StartFailedError(RemoteError):
    """``image_build_failed``, ``container_failed`` or ``gpu_unavailable``: the code could not be started; the logs say why."""

    default_code = "container_failed"


class RemoteCallError(RemoteError):
    """The remote code raised, and its exception cannot be re-raised here.

    That happens when the exception could not be pickled remotely, or its class
    cannot be imported here. ``type`` is its class name (``ValueError``), ``message``
    its text and ``traceback`` the remote traceback (or None); ``str()`` shows all three.
    """

    default_code = "handler_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        hint: str | None = None,
        details: Any = None,
        type: str | None = None,
        traceback: str | None = None,
    ) -> None:
        super().__init__(message, code=code, status=status, hint=hint, details=details)
        self.type = type
        self.traceback = traceback

    def __str__(self) -> str:
        text = super().__str__()
        if self.traceback:
            text += "\n\nRemote traceback:\n" + self.traceback.rstrip("\n")
        return text


class ServerUnreachableError(RemoteError, ConnectionError):
    """No answer from the svc server: it is not running, or not at that address."""

    default_code = "server_unreachable"


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a container, as text.

    Not raised on its own: a remote exception re-raised by ``.remote()`` carries one
    as its ``__cause__``, so Python prints the remote traceback above the local one.
    """

    def __init__(self, traceback: str) -> None:
        super().__init__(traceback)
        self.traceback = traceback

    def __str__(self) -> str:
        return "\n\nRemote traceback (in the svc container):\n" + self.traceback.rstrip("\n")
