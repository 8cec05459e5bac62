"""The pickles of the function protocol: the call that arrives, the result or exception that leaves.

Results and exceptions are pickled with ``cloudpickle`` when it is importable (it
pickles lambdas, local classes and classes defined in ``__main__`` by value),
otherwise with the standard ``pickle``; both use protocol 5, which every Python the
SDK supports reads.
"""

from __future__ import annotations

import base64
import pickle
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ._errors import RequestError

CALL_CONTENT_TYPE = "application/vnd.svc.call+pickle"
PROTOCOL = 5

try:
    import cloudpickle  # pyright: ignore[reportMissingModuleSource] # optional; typings/ has its stub

    _dumps: Callable[..., bytes] = cloudpickle.dumps
except ImportError:  # cloudpickle is optional
    _dumps = pickle.dumps


def load_call(body: bytes) -> tuple[list[Any], dict[str, Any], str | None]:
    """``(args, kwargs, method)`` from a pickled ``{"args": [...], "kwargs": {...}}``, which names the
    ``"method"`` too for a method of an ``@app.cls`` class (else None); RequestError ``bad_request`` otherwise."""
    try:
        call = pickle.loads(body)
    except Exception as exc:
        raise RequestError(
            "bad_request",
            f"the request body is not a pickled call ({describe(exc)}): send "
            f"pickle.dumps({{'args': [...], 'kwargs': {{...}}}}) as {CALL_CONTENT_TYPE}",
        ) from None
    wanted = "a pickled call is a dict with the keys 'args' and 'kwargs' (and 'method' for a class), got"
    if not isinstance(call, dict):
        raise RequestError("bad_request", f"{wanted} {type(call).__name__}")
    fields = cast("Mapping[Any, Any]", call)
    if set(fields) not in ({"args", "kwargs"}, {"args", "kwargs", "method"}):
        raise RequestError("bad_request", f"{wanted} {sorted(fields, key=repr)}")
    method = fields.get("method")
    if method is not None and (not isinstance(method, str) or not method.isidentifier()):
        raise RequestError("bad_request", f"'method' of a pickled call must be a method's name, got {method!r}")
    args, kwargs = fields["args"], fields["kwargs"]
    if not isinstance(args, (list, tuple)):
        raise RequestError(
            "bad_request", f"'args' of a pickled call must be a list or tuple, got {type(args).__name__}"
        )
    if not isinstance(kwargs, dict) or not all(isinstance(key, str) for key in cast("dict[object, Any]", kwargs)):
        raise RequestError("bad_request", "'kwargs' of a pickled call must be a dict with string keys")
    return list(cast("Sequence[Any]", args)), cast("dict[str, Any]", kwargs), method  # checked above


def dump(value: Any) -> str:
    """``value`` pickled and base64-encoded; raises what the pickler raises."""
    return base64.b64encode(_dumps(value, protocol=PROTOCOL)).decode("ascii")


def dump_exception(exc: BaseException) -> str | None:
    """The exception pickled and base64-encoded, or None when it cannot be pickled (or unpickled)."""
    try:
        data = _dumps(exc, protocol=PROTOCOL)
        pickle.loads(data)  # an exception whose __init__ takes other arguments than its args fails here
    except Exception:
        return None
    return base64.b64encode(data).decode("ascii")


def describe(exc: BaseException) -> str:
    """``Type: message``, as the last line of a traceback says it."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()
