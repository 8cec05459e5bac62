"""What ``@app.cls`` hands back, and ``svc.Cls.from_name``: a class whose methods run remotely.

``Model()`` is an instance handle; ``Model().predict`` a method handle with ``.remote``, ``.spawn``,
``.spawn_map``, ``.map``, ``.starmap``, ``.for_each`` (from ``RemoteCalls``: every call names the
method, and the class's workers call it on the instance their ``@svc.enter()`` methods set up) and
``.local``, which makes the instance in this process once (its ``enter`` methods run then) and calls
the method on it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._cls import ClassSpec, bind_parameters, to_wire
from ._function import deployed_name
from ._remote_calls import RemoteCalls
from ._workloads import Workload, local_secrets

if TYPE_CHECKING:
    from ._client._remote import Target


def make_instance(cls: type, spec: ClassSpec, parameters: dict[str, Any], *, snap: bool | None = None) -> Any:
    """A new instance of ``cls`` with its parameters' values as attributes and its ``@svc.enter()`` methods run:
    all of them (``snap=None``), or only those with that ``snap``."""
    instance = cls()
    for name, value in parameters.items():
        setattr(instance, name, value)
    run_enter(instance, spec, snap)
    return instance


def run_enter(instance: Any, spec: ClassSpec, snap: bool | None) -> None:
    for name, is_snap in spec.enter:
        if snap is None or is_snap == snap:
            result = getattr(instance, name)()
            if inspect.isawaitable(result):
                close = getattr(result, "close", None)
                if callable(close):
                    close()
                raise TypeError(
                    f"@svc.enter() method {type(instance).__qualname__}.{name} is async; it runs before the worker's "
                    "event loop starts, so it must do its work synchronously"
                )


class ClassHandle:
    """What ``@app.cls`` returns: call it (``Model()``) for an instance whose methods run remotely."""

    def __init__(self, workload: Workload, spec: ClassSpec) -> None:
        self.workload = workload
        self.spec = spec
        functools.update_wrapper(self, workload.target, updated=())

    def __call__(self, *args: Any, **parameters: Any) -> ClassInstance:
        """``Model(size="large")``: the values of its ``svc.parameter()`` attributes, checked here (a ``TypeError``
        at the call line), choose the pool of containers its calls go to."""
        qualname = self.workload.target.__qualname__
        if args:
            raise TypeError(
                f"{qualname}() takes its parameters by name ({', '.join(p.name for p in self.spec.parameters) or 'none'}), "
                "not by position: the platform makes its instances; load what a worker needs in an @svc.enter() method"
            )
        return ClassInstance(self, bind_parameters(self.spec, qualname, parameters))

    def __repr__(self) -> str:
        return f"<svc class {self.workload.name!r}, methods {', '.join(self.spec.methods)}>"


class ClassInstance:
    """``Model()``: its ``@svc.method()`` methods as handles (``Model().predict.remote(x)``). Its own state
    has ``_svc_`` names, so that any method name the class marks is found."""

    def __init__(self, handle: ClassHandle, parameters: dict[str, Any]) -> None:
        self._svc_handle = handle
        self._svc_parameters = parameters
        self._svc_local: Any = None
        self._svc_lock = threading.Lock()

    def __getattr__(self, name: str) -> MethodHandle:
        if name.startswith("_"):
            raise AttributeError(name)
        handle = self._svc_handle
        if name not in handle.spec.methods:
            raise AttributeError(_unknown_method(handle.workload.target.__qualname__, name, handle.spec.methods))
        wire = to_wire(self._svc_parameters) if handle.spec.parameters else None
        return MethodHandle(handle.workload, name, self._svc_local_instance, wire)

    def _svc_local_instance(self) -> Any:
        """The instance ``.local()`` calls run on: made here on first use, its ``enter`` methods run once."""
        with self._svc_lock:
            if self._svc_local is None:
                handle = self._svc_handle
                with local_secrets(handle.workload.secrets):
                    self._svc_local = make_instance(handle.workload.target, handle.spec, self._svc_parameters)
            return self._svc_local

    def __repr__(self) -> str:
        return f"<svc instance of {self._svc_handle.workload.name!r}>"


class MethodHandle(RemoteCalls):
    """``Model().predict``: the method's remote calls, and ``.local`` in this process."""

    def __init__(
        self, workload: Workload, name: str, local_instance: Callable[[], Any], parameters: dict[str, Any] | None
    ) -> None:
        self._workload = workload
        self._local_instance = local_instance
        self._parameters = parameters
        self.name = name
        self.__doc__ = getattr(workload.target, name).__doc__

    def _label(self) -> str:
        return f"{self._workload.target.__qualname__}.{self.name}"

    def _target(self) -> Target:
        from ._client._remote import target_of

        return dataclasses.replace(target_of(self._workload), method=self.name, parameters=self._parameters)

    def local(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the method in this Python process, on an instance made here once per ``Model()`` (its
        ``@svc.enter()`` methods run then); ``Secret.from_dict`` values are in ``os.environ`` meanwhile."""
        instance = self._local_instance()
        with local_secrets(self._workload.secrets):
            return getattr(instance, self.name)(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.local(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<svc method {self._label()}>"


class Cls:
    """A deployed class, called from any Python signed in to its workspace with no source of the app:
    ``svc.Cls.from_name("app", "Model")().predict.remote(x)``."""

    def __init__(self, app: str, name: str) -> None:
        self.app = app
        self.name = name

    @classmethod
    def from_name(cls, app: str, name: str) -> Cls:
        """The class ``name`` (its Python name or its workload name) of the deployed app ``app``. Nothing is
        asked of the server until the first call, which fails with ``svc.NotFoundError`` when the workspace
        has no such deployed class."""
        return cls(*deployed_name("svc.Cls.from_name()", app, name))

    def __call__(self, **parameters: Any) -> DeployedInstance:
        """An instance handle; the values of the class's parameters are checked by the server at the first call."""
        for name, value in parameters.items():
            if type(value) not in (str, int, bool, bytes):
                raise TypeError(
                    f"svc.Cls.from_name(...)(): the parameter {name!r} must be str, int, bool or bytes, "
                    f"not {type(value).__name__}"
                )
        return DeployedInstance(self, to_wire(parameters) if parameters else None)

    def __repr__(self) -> str:
        return f"<svc.Cls {self.app}/{self.name} (deployed)>"


class DeployedInstance:
    """``svc.Cls.from_name(...)()``: any attribute is a method of the deployed class; a name it does not
    have fails at the first call (the server's error names the method and the ones it has)."""

    def __init__(self, deployed: Cls, parameters: dict[str, Any] | None) -> None:
        self._deployed = deployed
        self._parameters = parameters

    def __getattr__(self, name: str) -> DeployedMethod:
        if name.startswith("_"):
            raise AttributeError(name)
        return DeployedMethod(self._deployed, name, self._parameters)


class DeployedMethod(RemoteCalls):
    def __init__(self, deployed: Cls, name: str, parameters: dict[str, Any] | None) -> None:
        self._deployed = deployed
        self._parameters = parameters
        self.name = name

    def _label(self) -> str:
        return f"{self._deployed.app}.{self._deployed.name}.{self.name}"

    def _target(self) -> Target:
        from ._client._remote import deployed_target

        target = deployed_target(self._deployed.app, self._deployed.name)
        return dataclasses.replace(target, method=self.name, parameters=self._parameters)

    def __repr__(self) -> str:
        return f"<svc method {self._label()} (deployed)>"


def _unknown_method(qualname: str, name: str, methods: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, methods, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"{qualname} has no @svc.method() method {name!r} ({hint}its methods: {', '.join(methods)})"
