"""Workload records and what the decorators hand back to the user.

``Workload`` is the frozen record an App keeps; ``FunctionHandle`` wraps a
decorated function (plain call, ``.local``, ``.request``, and from ``RemoteCalls``
``.remote``, ``.spawn``, ``.map``, ``.starmap``, ``.for_each``); ``AsgiHandle``
wraps an ASGI application, stays a working ASGI application and adds ``.request``.
The client behind ``.remote`` and ``.request`` (``svc._client``) is imported on first
use, so declaring an app imports nothing of it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import _checks
from ._cls import MARKS, ClassSpec
from ._hints import CONTEXT_PARAMETER
from ._image import Image
from ._mounts import VolumeMount, check_code_overlap
from ._options import DECORATORS
from ._remote_calls import RemoteCalls
from ._secret import Secret
from .exceptions import InvalidOptionError

if TYPE_CHECKING:
    from ._client._remote import Target

KINDS = ("function", "endpoint", "asgi", "realtime")


@dataclass(frozen=True, eq=False)
class Workload:
    """One workload of an App, as declared."""

    name: str
    kind: str
    """``function``, ``endpoint``, ``asgi`` or ``realtime``."""
    target: Any
    """The decorated function, or the ASGI application for ``asgi``."""
    image: Image | None
    """The image given, or None for the default ``svc.Image()``."""
    options: Mapping[str, Any]
    """Every option of the kind, checked, defaults filled in (manifest order)."""
    derived_from: str | None = None
    """The Python name (``__name__``) the workload name was made from, or None when ``name=`` was given."""
    secrets: tuple[Secret, ...] = ()
    """``secrets=``: the secrets whose keys its workers get as environment variables."""
    volumes: tuple[VolumeMount, ...] = ()
    """``volumes=``: the volumes its containers mount, each at its path."""
    cls: ClassSpec | None = None
    """For an ``@app.cls`` class (a ``function`` whose target is the class) and the endpoints that serve its
    ``@svc.endpoint()`` methods: the class's marked methods."""
    serves: str | None = None
    """For an endpoint that serves a class's method: that method's name (``target`` is the class)."""


class FunctionHandle(RemoteCalls):
    """What ``@app.function``, ``@app.endpoint`` and ``@app.realtime`` return.

    Calling it runs the function in this process, exactly like the undecorated
    function; ``.local(...)`` is the same call, spelled out.
    """

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        functools.update_wrapper(self, workload.target)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.workload.target(*args, **kwargs)

    def local(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function in this Python process and returns its result.

        The values of its ``Secret.from_dict`` secrets are in ``os.environ`` during the call
        (then restored); named secrets are not fetched: the server never hands values back.
        """
        with local_secrets(self.workload.secrets):
            return self.workload.target(*args, **kwargs)

    def _label(self) -> str:
        return self.workload.name

    def _check(self, call: str) -> None:
        from ._client._remote import check_function

        check_function(self.workload, call)

    def _target(self) -> Target:
        from ._client._remote import target_of

        return target_of(self.workload)

    def request(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the endpoint at its URL with the function's arguments; returns the response.

        Goes to the app's running preview when there is one, else to its deployment
        (``target="deployed"`` or ``target="preview"`` picks one). The response has
        ``status_code``, ``json()``, ``text``, ``headers``, ``ok`` and ``raise_for_status()``.
        Only for ``@app.endpoint``; see docs/sdk.md, "Calling your code".
        """
        from ._client import endpoint_request

        return endpoint_request(self.workload, args, kwargs)

    def __repr__(self) -> str:
        return f"<svc {self.workload.kind} {self.workload.name!r}>"


class AsgiHandle:
    """What ``app.asgi(...)`` returns: still the ASGI application, now registered.

    Calls and attribute reads go to the wrapped application, so it can still be
    served by any ASGI server or extended (``handle.routes``).
    """

    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        return self.workload.target(scope, receive, send)

    def request(
        self,
        method: str = "GET",
        path: str = "/",
        *,
        json: Any = None,
        data: Any = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        target: str | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Sends one HTTP request to a route of the served ASGI app; returns the response.

        ``path`` is the app's own route (``/items/3``); ``json`` a JSON body, ``data`` a form
        (a dict) or raw body, ``params`` query parameters. Goes to the app's running preview
        when there is one, else to its deployment (``target="deployed"`` or ``"preview"``
        picks one). See docs/sdk.md, "Calling your code".
        """
        from ._client import asgi_request

        return asgi_request(
            self.workload,
            method,
            path,
            json=json,
            data=data,
            headers=headers,
            params=params,
            target=target,
            timeout=timeout,
        )

    def __getattr__(self, name: str) -> Any:
        if name == "workload":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.workload.target, name)

    def __repr__(self) -> str:
        return f"<svc asgi {self.workload.name!r} wrapping {self.workload.target!r}>"


def unwrap(target: Any) -> Any:
    """The user's object behind a handle (so a function can be declared twice)."""
    return target.workload.target if isinstance(target, (FunctionHandle, AsgiHandle)) else target


@contextlib.contextmanager
def local_secrets(secrets: tuple[Secret, ...]) -> Generator[None, None, None]:
    """Sets the ``from_dict`` values in ``os.environ`` for a ``.local()`` call, then puts back what was there."""
    values: dict[str, str] = {}
    for secret in secrets:
        values.update(secret.local_values())
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def create_workload(
    kind: str,
    target: Any,
    name: str | None,
    image: Image | None,
    options: dict[str, Any],
    secrets: tuple[Secret, ...] = (),
    volumes: tuple[VolumeMount, ...] = (),
) -> Workload:
    """Checks the decorated object and builds its Workload record."""
    where = DECORATORS[kind]
    target = unwrap(target)
    if kind == "asgi":
        _check_asgi(target)
    else:
        _check_function(where, target)
        if kind == "endpoint":
            _check_endpoint_signature(target)
        elif kind == "realtime":
            _check_realtime_signature(target)
    check_code_overlap(where, volumes, _code_folder(target))
    derived_from = None
    if name is None:
        derived_from, name = _default_name(where, target)
    return Workload(
        name=name,
        kind=kind,
        target=target,
        image=image,
        options=MappingProxyType(options),
        derived_from=derived_from,
        secrets=secrets,
        volumes=volumes,
    )


def class_workload(
    cls: type,
    spec: ClassSpec,
    name: str | None,
    image: Image | None,
    options: dict[str, Any],
    secrets: tuple[Secret, ...],
    volumes: tuple[VolumeMount, ...] = (),
) -> Workload:
    """The Workload record of an ``@app.cls`` class: a ``function`` whose target is the class."""
    check_code_overlap("@app.cls", volumes, _code_folder(cls))
    derived_from = None
    if name is None:
        derived_from, name = _default_name("@app.cls", cls)
    return Workload(
        name=name,
        kind="function",
        target=cls,
        image=image,
        options=MappingProxyType(options),
        derived_from=derived_from,
        secrets=secrets,
        volumes=volumes,
        cls=spec,
    )


def class_endpoint_workload(cls_workload: Workload, method: str, options: dict[str, Any]) -> Workload:
    """The endpoint that serves ``method`` of the class ``cls_workload`` over HTTP: named ``<class>-<method>``."""
    assert cls_workload.cls is not None
    name = f"{cls_workload.name}-{_checks.derive_name(method)}"
    problem = _checks.name_problem(name)
    if problem is not None:
        raise InvalidOptionError(
            f"@svc.endpoint(): the workload serving {cls_workload.target.__qualname__}.{method} would be named {name!r}, "
            f"which {problem}: give the class a shorter name= or the method a shorter name",
            option="name",
        )
    _check_endpoint_signature(getattr(cls_workload.target, method), skip_first=True)
    return Workload(
        name=name,
        kind="endpoint",
        target=cls_workload.target,
        image=cls_workload.image,
        options=MappingProxyType(options),
        derived_from=None,
        secrets=cls_workload.secrets,
        volumes=cls_workload.volumes,
        cls=cls_workload.cls,
        serves=method,
    )


def _code_folder(target: Any) -> str | None:
    """The folder of the file that defines ``target`` (None when it has none: an object made in a REPL)."""
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(file)) if isinstance(file, str) else None


def handle_for(workload: Workload) -> FunctionHandle | AsgiHandle:
    return AsgiHandle(workload) if workload.kind == "asgi" else FunctionHandle(workload)


def _check_function(where: str, target: Any) -> None:
    if isinstance(target, str):
        raise InvalidOptionError(
            f"{where}({target!r}): options are keywords; write {where}(name={target!r})", option="name"
        )
    if isinstance(target, type):
        raise InvalidOptionError(
            f"{where} decorates a function, not the class {target.__qualname__}: declare a class with @app.cls(), "
            "its methods with @svc.method() (called from Python) or @svc.endpoint() (served over HTTP)"
        )
    if not inspect.isfunction(target):
        raise InvalidOptionError(
            f"{where} decorates a function (def or async def), not a {_checks.type_name(target)}: "
            f"put {where} on the line above 'def'"
        )
    mark = next((MARKS[key] for key in MARKS if hasattr(target, key)), None)
    if mark is not None:
        raise InvalidOptionError(
            f"{where}: {target.__qualname__} is marked {mark}, which marks a method of an @app.cls class; "
            f"a function declared with {where} takes no such mark"
        )


def _check_asgi(target: Any) -> None:
    if not callable(target) or isinstance(target, type):
        raise InvalidOptionError(
            f"app.asgi(...) wraps an ASGI application instance, not a {_checks.type_name(target)}: "
            'write app.asgi(name="web")(fastapi_app)'
        )


def _default_name(where: str, target: Any) -> tuple[str, str]:
    """``(Python name, workload name)`` for a workload declared without ``name=``.

    The workload name is made from the target's ``__name__`` by ``_checks.derive_name``
    (``say_hello`` → ``say-hello``, ``Greet`` → ``greet``); when no valid name comes out,
    InvalidOptionError asks for ``name=``.
    """
    default = getattr(target, "__name__", None)
    if not isinstance(default, str):
        problem = f'has no __name__ to name the workload: pass name=, e.g. {where}(name="web")'
        raise InvalidOptionError(f"{where}: {_checks.type_name(target)} {problem}", option="name")
    derived = _checks.derive_name(default)
    invalid = _checks.name_problem(derived)
    if invalid is None:
        return default, derived
    made = "nothing" if not derived else repr(derived)
    raise InvalidOptionError(
        f"{where}: cannot name the workload after {default!r}: it makes {made}"
        + ("" if not derived else f", which {invalid}")
        + f' (a workload name is {_checks.NAME_RULE}): pass name=, e.g. {where}(name="my-workload")',
        option="name",
    )


def _check_endpoint_signature(fn: Callable[..., Any], *, skip_first: bool = False) -> None:
    for parameter in list(inspect.signature(fn).parameters.values())[1 if skip_first else 0 :]:
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            problem = f"parameter {parameter.name!r} is positional-only, but arguments arrive by name from JSON"
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            problem = f"*{parameter.name} cannot be filled from a JSON object, whose fields are named"
        else:
            continue
        raise InvalidOptionError(
            f"@app.endpoint: {fn.__qualname__}: {problem}; use ordinary keyword parameters (or **kwargs)"
        )


def _check_realtime_signature(fn: Callable[..., Any]) -> None:
    takes_message = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.name != CONTEXT_PARAMETER and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    required = [p for p in takes_message if p.default is p.empty and p.kind is not p.VAR_POSITIONAL]
    if not takes_message or len(required) > 1:
        raise InvalidOptionError(
            f"@app.realtime: {fn.__qualname__} must take one incoming message as its first "
            "parameter (plus an optional 'context'), e.g. def handler(message: str) -> str"
        )
