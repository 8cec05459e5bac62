"""Classes that load once per worker: what marks their methods, and what ``@app.cls`` reads from a class.

``@svc.enter()`` methods run once in each worker before its first call (``snap=True`` ones first, and
before a checkpoint once classes can be checkpointed), ``@svc.exit()`` once when the worker stops, and
``@svc.method()`` methods are what callers call: ``Model().predict.remote(x)``. The marks are plain
attributes on the functions, so a marked method is still an ordinary method of the class.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from ._hints import type_hints
from ._options import resolve_endpoint_method_options
from .exceptions import InvalidOptionError

ENTER_MARK = "__svc_enter__"
"""Set by ``@svc.enter()`` on the function: ``{"snap": bool}``."""
EXIT_MARK = "__svc_exit__"
METHOD_MARK = "__svc_method__"
ENDPOINT_MARK = "__svc_endpoint__"
"""Set by ``@svc.endpoint(...)`` on the function: its endpoint options, checked."""
MARKS = {
    ENTER_MARK: "@svc.enter()",
    EXIT_MARK: "@svc.exit()",
    METHOD_MARK: "@svc.method()",
    ENDPOINT_MARK: "@svc.endpoint()",
}


def enter(fn: Callable[..., Any] | None = None, /, *, snap: bool = False) -> Any:
    """Marks a method of an ``@app.cls`` class that sets up a worker: it runs once in each worker,
    before the worker takes its first call (load a model here, keep it on ``self``).

    It takes no arguments but ``self``. Several may be marked; they run in the order the class
    defines them, ``snap=True`` ones first (those are meant to run before a checkpoint, once classes
    can be checkpointed). A failing one fails the worker's start, with its traceback in the logs.
    Written ``@svc.enter()`` or ``@svc.enter``.

    Example::

        @svc.enter()
        def load(self) -> None:
            self.model = load_model("/models/small")
    """
    if not isinstance(cast(object, snap), bool):  # the annotation says bool; untyped callers may pass anything
        raise InvalidOptionError(f"@svc.enter(snap=...) takes True or False, not {snap!r}", option="snap")
    return _marker("@svc.enter()", ENTER_MARK, {"snap": snap}, fn, only_self=True)


def exit(fn: Callable[..., Any] | None = None, /) -> Any:  # noqa: A001 - the name users know from the peers (modal.exit)
    """Marks the method of an ``@app.cls`` class that runs once when a worker stops (scale-down, a new
    deploy, the server stopping), after its last call: close files, flush what it kept.

    It takes no arguments but ``self``, and a class has at most one. It has the platform's stop grace
    period to finish (5 s on the embedded default): past it the worker is killed. What it prints goes to
    the workload's logs. Written ``@svc.exit()`` or ``@svc.exit``.
    """
    return _marker("@svc.exit()", EXIT_MARK, True, fn, only_self=True)


def method(fn: Callable[..., Any] | None = None, /) -> Any:
    """Marks a method of an ``@app.cls`` class that callers call remotely:
    ``Model().predict.remote(x)``, ``.map(...)``, ``.spawn(...)``, or ``.local(...)`` in this process.

    It runs in a worker whose ``@svc.enter()`` methods have run, on the same instance for every call
    that worker takes, so what ``enter`` kept on ``self`` is there. Written ``@svc.method()`` or
    ``@svc.method``.
    """
    return _marker("@svc.method()", METHOD_MARK, True, fn, only_self=False)


def endpoint(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Serves a method of an ``@app.cls`` class over HTTP, as ``@app.endpoint`` serves a function: each request
    calls it once with the request's arguments, on an instance whose ``@svc.enter()`` methods ran in that worker.

    It takes ``@app.endpoint``'s options (``route``, ``methods``, ``authorized``, ``workers``, ``concurrency``,
    ``autoscaler``, ``max_pending_tasks``, ``domain``, ``keep_warm``, ``timeout``, ``callback_url``); the class
    gives ``cpu``, ``memory``, ``image`` and ``secrets``. It is a workload of its own, named
    ``<class>-<method>`` (``model-predict``), with containers of its own: its instances load as the class's do.

    Example::

        @svc.endpoint(route="/predict", methods=["POST"], authorized=False)
        def predict_http(self, text: str) -> dict:
            return {"score": self.model.score(text)}
    """
    checked = resolve_endpoint_method_options(options)
    return _marker("@svc.endpoint()", ENDPOINT_MARK, checked, fn, only_self=False)


def _marker(name: str, key: str, value: Any, fn: Any, *, only_self: bool) -> Any:
    """Marks ``fn`` now (the bare form), or returns the decorator that will (the called form)."""

    def mark(target: Any) -> Any:
        if not inspect.isfunction(target):
            raise InvalidOptionError(
                f"{name} decorates a method (def or async def inside a class), not a {type(target).__name__}"
            )
        _check_marked(name, target)
        if only_self:
            _check_takes_only_self(name, target)
        setattr(target, key, value)
        return target

    return mark if fn is None else mark(fn)


def _check_marked(name: str, fn: Any) -> None:
    if inspect.isfunction(fn):
        already = [MARKS[key] for key in MARKS if hasattr(fn, key)]
        if already:
            raise InvalidOptionError(
                f"{name}: {fn.__qualname__} is already marked {already[0]}; a method has one role "
                "(set-up, tear-down or a method callers call)"
            )


def _check_takes_only_self(name: str, fn: Callable[..., Any]) -> None:
    parameters = list(inspect.signature(fn).parameters.values())
    if len(parameters) != 1 or parameters[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        taken = ", ".join(p.name for p in parameters) or "nothing"
        raise InvalidOptionError(
            f"{name}: {fn.__qualname__} must take only self (it takes {taken}): the platform calls it with "
            "no arguments; keep what it needs on self or read it from the environment"
        )


_REQUIRED: Any = object()
PARAMETER_TYPES: dict[type, str] = {str: "str", int: "int", bool: "bool", bytes: "bytes"}


class _Parameter:
    """What ``svc.parameter()`` leaves on the class until ``@app.cls`` reads it."""

    def __init__(self, default: Any) -> None:
        self.default = default


def parameter(*, default: Any = _REQUIRED) -> Any:
    """Declares a parameter of an ``@app.cls`` class, as an annotated class attribute::

        @app.cls()
        class Model:
            size: str = svc.parameter(default="small")

    ``Model(size="large")`` then runs in containers of its own, apart from ``Model()``'s: each distinct set
    of values gets its pool of containers, whose instances have the values as attributes (``self.size``)
    before their ``@svc.enter()`` methods run. Types: ``str``, ``int``, ``bool`` and ``bytes``. Without
    ``default``, ``Model(...)`` must give it.
    """
    return _Parameter(default)


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    type: str
    """``str``, ``int``, ``bool`` or ``bytes``."""
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(frozen=True)
class ClassSpec:
    """What ``@app.cls`` found in a class: the names of its marked methods, in the order it defines them."""

    methods: tuple[str, ...]
    enter: tuple[tuple[str, bool], ...]
    """``(name, snap)`` of each ``@svc.enter()`` method, in the order they run (``snap=True`` first)."""
    exit: str | None
    parameters: tuple[ParameterSpec, ...] = ()
    endpoints: tuple[tuple[str, dict[str, Any]], ...] = ()
    """``(method, options)`` of each ``@svc.endpoint()`` method: each is served by an endpoint workload of its own."""


def read_class(where: str, cls: Any) -> ClassSpec:
    """The spec of ``cls``, or InvalidOptionError naming what is wrong with it and where."""
    if not isinstance(cls, type):
        raise InvalidOptionError(
            f"{where} decorates a class (put {where} on the line above 'class'), not a {type(cls).__name__}"
        )
    init = cls.__dict__.get("__init__")
    if init is not None and len(inspect.signature(init).parameters) > 1:
        raise InvalidOptionError(
            f"{where}: {cls.__qualname__}.__init__ takes arguments, but the platform makes the instance with none; "
            "load what it needs in an @svc.enter() method"
        )
    methods: list[str] = []
    enters: list[tuple[str, bool]] = []
    exits: list[str] = []
    endpoints: list[tuple[str, dict[str, Any]]] = []
    for name, member in _members(cls):
        marked = next((MARKS[key] for key in MARKS if hasattr(member, key)), None)
        if marked is not None and name.startswith("_"):
            raise InvalidOptionError(
                f"{where}: {cls.__qualname__}.{name} is marked {marked}, but svc calls no method whose name "
                "starts with '_': rename it"
            )
        if hasattr(member, METHOD_MARK):
            methods.append(name)
        elif hasattr(member, ENTER_MARK):
            enters.append((name, bool(getattr(member, ENTER_MARK)["snap"])))
        elif hasattr(member, EXIT_MARK):
            exits.append(name)
        elif hasattr(member, ENDPOINT_MARK):
            endpoints.append((name, dict(getattr(member, ENDPOINT_MARK))))
    if len(exits) > 1:
        raise InvalidOptionError(
            f"{where}: {cls.__qualname__} marks {len(exits)} methods @svc.exit() ({', '.join(exits)}); "
            "a class has at most one: call the others from it"
        )
    if not methods and not endpoints:
        raise InvalidOptionError(
            f"{where}: {cls.__qualname__} has no @svc.method() method, so nothing could call it: "
            "mark the methods callers call with @svc.method() (or serve one over HTTP with @svc.endpoint())"
        )
    ordered = [e for e in enters if e[1]] + [e for e in enters if not e[1]]
    parameters = _parameters(where, cls)
    required = [p.name for p in parameters if p.required]
    if endpoints and required:
        raise InvalidOptionError(
            f"{where}: {cls.__qualname__} serves {endpoints[0][0]} over HTTP, whose containers make their instance with "
            f"the parameters' defaults, but {', '.join(required)} has none: give it a default"
        )
    return ClassSpec(
        methods=tuple(methods),
        enter=tuple(ordered),
        exit=exits[0] if exits else None,
        parameters=parameters,
        endpoints=tuple(endpoints),
    )


def _parameters(where: str, cls: type) -> tuple[ParameterSpec, ...]:
    """The ``svc.parameter()`` attributes of ``cls`` (and its bases), each with its annotated type."""
    hints = type_hints(cls)
    found: dict[str, ParameterSpec] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if not isinstance(value, _Parameter):
                continue
            kind = PARAMETER_TYPES.get(hints.get(name))  # type: ignore[arg-type]
            if kind is None:
                given = hints.get(name, None)
                shown = "no annotation" if given is None else f"the type {getattr(given, '__name__', given)!r}"
                raise InvalidOptionError(
                    f"{where}: {cls.__qualname__}.{name} is a svc.parameter() with {shown}; annotate it str, int, "
                    f"bool or bytes: {name}: str = svc.parameter(...)"
                )
            if value.default is not _REQUIRED:
                problem = value_problem(kind, value.default)
                if problem is not None:
                    raise InvalidOptionError(f"{where}: {cls.__qualname__}.{name}'s default {problem}")
            found[name] = ParameterSpec(name, kind, value.default)
    return tuple(found.values())


def value_problem(kind: str, value: Any) -> str | None:
    """What is wrong with ``value`` for a parameter of type ``kind`` (``str``, …), or None."""
    wanted = {"str": str, "int": int, "bool": bool, "bytes": bytes}[kind]
    if type(value) is not wanted:  # bool is an int, but an int parameter takes no bool
        return f"must be {kind}, not {type(value).__name__} {value!r}"
    return None


def bind_parameters(spec: ClassSpec, qualname: str, given: dict[str, Any]) -> dict[str, Any]:
    """The values of every parameter for ``Model(**given)``, defaults filled in; TypeError saying what is wrong."""
    known = {p.name: p for p in spec.parameters}
    for name in given:
        if name not in known:
            takes = ", ".join(known) or "no parameters"
            raise TypeError(f"{qualname}() has no parameter {name!r} (it takes {takes})")
    values: dict[str, Any] = {}
    for p in spec.parameters:
        if p.name not in given and p.required:
            raise TypeError(
                f"{qualname}() needs its parameter {p.name!r} ({'an' if p.type == 'int' else 'a'} {p.type})"
            )
        value = given.get(p.name, p.default)
        problem = value_problem(p.type, value)
        if problem is not None:
            raise TypeError(f"{qualname}(): the parameter {p.name!r} {problem}")
        values[p.name] = value
    return values


def to_wire(values: dict[str, Any]) -> dict[str, Any]:
    """Parameter values as JSON carries them: bytes as ``{"base64": ...}``."""
    return {
        name: {"base64": base64.b64encode(value).decode("ascii")} if isinstance(value, bytes) else value
        for name, value in values.items()
    }


def from_wire(values: dict[str, Any]) -> dict[str, Any]:
    """``to_wire``'s values back: ``{"base64": ...}`` as bytes."""
    return {name: _value_from_wire(value) for name, value in values.items()}


def _value_from_wire(value: Any) -> Any:
    if isinstance(value, dict):
        text: str = cast("dict[str, str]", value)["base64"]
        return base64.b64decode(text)
    return value


def _members(cls: type) -> list[tuple[str, Any]]:
    """The functions defined in ``cls`` and its bases (a subclass's own first, as attribute lookup finds them)."""
    seen: dict[str, Any] = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, member in vars(klass).items():
            if name not in seen and inspect.isfunction(member):
                seen[name] = member
    return list(seen.items())


def stray_marks(namespace: dict[str, Any], registered: set[type]) -> str | None:
    """What is marked where nothing will run it, in a module's ``namespace``: a marked function at module
    level, or a class with marked methods that no ``@app.cls`` declared. None when there is none."""
    for name, value in namespace.items():
        if inspect.isfunction(value):
            mark = next((MARKS[key] for key in MARKS if hasattr(value, key)), None)
            if mark is not None:
                return f"{mark} marks {name}() ({_place(value)}), which is not inside a class: it marks methods of an @app.cls class"
        elif isinstance(value, type) and value not in registered:
            marked = [n for n, member in _members(value) if any(hasattr(member, key) for key in MARKS)]
            if marked and getattr(value, "__module__", None) == namespace.get("__name__"):
                return (
                    f"class {name} ({_place(value)}) marks {', '.join(marked)} with svc's method marks, but is not "
                    "declared with @app.cls: put @app.cls() on the line above 'class'"
                )
    return None


def _place(obj: Any) -> str:
    try:
        return f"{inspect.getsourcefile(obj)}:{inspect.getsourcelines(obj)[1]}"
    except (OSError, TypeError):
        return getattr(obj, "__module__", "?")
