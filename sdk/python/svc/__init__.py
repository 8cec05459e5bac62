"""svc: run Python functions, HTTP endpoints, ASGI apps and WebSocket handlers on your own machines.

Declare an app and its workloads::

    import svc

    app = svc.App("quickstart")

    @app.endpoint(route="/hello", methods=["GET"], authorized=False)
    def hello(name: str = "world") -> dict:
        return {"message": f"Hello, {name}!"}

Run a function remotely with ``square.remote(3)``, call a served endpoint with
``hello.request(name="Ada")``; failures raise the typed exceptions exported here.

Reference: docs/sdk.md. The manifest the platform reads: docs/manifest.md.
"""

from ._app import App
from ._autoscaler import Autoscaler
from ._cls import endpoint, enter, exit, method, parameter
from ._cls_handle import Cls
from ._context import Context
from ._cors import Cors
from ._function import Function
from ._function_call import FunctionCall
from ._image import Image
from ._retries import Retries
from ._schedule import Cron, Period
from ._secret import Secret
from ._version import __version__
from ._volume import Volume
from .exceptions import (
    CallCancelledError,
    CallExpiredError,
    ConfigError,
    Error,
    ForbiddenError,
    FunctionTimeoutError,
    InvalidOptionError,
    InvalidRequestError,
    NotFoundError,
    NotSignedInError,
    ProjectError,
    QueueFullError,
    RemoteCallError,
    RemoteError,
    RemoteTraceback,
    ServerUnreachableError,
    StartFailedError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
    WorkerCrashedError,
)

__all__ = [
    "App",
    "Autoscaler",
    "CallCancelledError",
    "CallExpiredError",
    "Cls",
    "ConfigError",
    "Context",
    "Cors",
    "Cron",
    "Error",
    "ForbiddenError",
    "Function",
    "FunctionCall",
    "FunctionTimeoutError",
    "Image",
    "InvalidOptionError",
    "InvalidRequestError",
    "NotFoundError",
    "NotSignedInError",
    "Period",
    "ProjectError",
    "QueueFullError",
    "RemoteCallError",
    "RemoteError",
    "RemoteTraceback",
    "Retries",
    "Secret",
    "ServerUnreachableError",
    "StartFailedError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnavailableError",
    "Volume",
    "WorkerCrashedError",
    "__version__",
    "endpoint",
    "enter",
    "exit",
    "method",
    "parameter",
]


def _present_as_svc() -> None:
    """Public classes say `svc.Image`, not `svc._image.Image`, in reprs and tracebacks."""
    for name in __all__:
        member = globals()[name]
        if isinstance(member, type):
            member.__module__ = "svc"


_present_as_svc()
del _present_as_svc
