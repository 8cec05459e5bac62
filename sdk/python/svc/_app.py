"""``svc.App``: a named group of workloads, declared with its decorators."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from . import _checks
from ._autoscaler import Autoscaler
from ._cls import read_class
from ._cls_handle import ClassHandle
from ._cors import Cors
from ._image import Image
from ._mounts import check_volumes
from ._options import (
    CLASS_DECORATOR,
    DECORATORS,
    DEFAULT_TIMEOUT,
    OPTIONS,
    check_option,
    check_option_of,
    class_endpoint_options,
    keep_warm_of,
    parameters_doc,
    resolve_class_options,
    resolve_options,
)
from ._retries import Retries
from ._schedule import Cron, Period
from ._secret import Secret, check_secrets
from ._volume import Volume
from ._workloads import (
    AsgiHandle,
    FunctionHandle,
    Workload,
    class_endpoint_workload,
    class_workload,
    create_workload,
    handle_for,
)
from .exceptions import InvalidOptionError

_AUTOSCALER = OPTIONS["autoscaler"].default
_NO_VOLUMES: Mapping[str, Volume] = MappingProxyType({})


class _Default(str):
    """A default the decorator can tell from the same text passed on purpose."""


_OPENAPI = _Default(OPTIONS["openapi"].default)


class App:
    """A named group of workloads: functions, HTTP endpoints, ASGI apps and realtime handlers.

    A module defines exactly one App at module level; ``svc deploy`` and
    ``python -m svc.manifest`` find it there.

    Parameters:
        name (str): The app's name, used by the CLI (``svc deploy``, ``svc app pause``)
            and in URLs: a lowercase DNS label, 1 to 63 characters from a-z, 0-9 and '-',
            not starting or ending with '-', without '--'.
            Example: ``app = svc.App("quickstart")``

    Raises:
        svc.InvalidOptionError: the name is not valid.
    """

    def __init__(self, name: str) -> None:
        try:
            self._name = _checks.name(name)
        except _checks.Problem as problem:
            _checks.reject("svc.App", "name", name, problem)
        self._workloads: dict[str, Workload] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def workloads(self) -> tuple[Workload, ...]:
        """The registered workloads, in the order they were declared."""
        return tuple(self._workloads.values())

    def __repr__(self) -> str:
        return f"App({self._name!r}, workloads={list(self._workloads)})"

    def function(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        image: Image | None = None,
        cpu: float = 1.0,
        memory: str = "512Mi",
        gpu: str | Sequence[str] | None = None,
        autoscaler: Autoscaler = _AUTOSCALER,
        buffer_containers: int = 0,
        checkpoint_enabled: bool = False,
        keep_warm_seconds: int = 60,
        scaledown_window: int | None = None,
        secrets: Sequence[Secret] = (),
        volumes: Mapping[str, Volume] = _NO_VOLUMES,
        on_start: Callable[[], Any] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int | Retries | None = None,
        schedule: Cron | Period | None = None,
        callback_url: str | None = None,
        **unknown: Any,
    ) -> Any:
        """Declares a function: Python code run on demand with ``svc run`` or in-process,
        or, deployed with ``schedule=``, by itself on a schedule.

        Works bare (``@app.function``) or with options (``@app.function(cpu=2)``). The
        decorated function stays an ordinary function: call it, or ``square.local(3)``.

        Example::

            @app.function(cpu=0.5, memory="256Mi")
            def square(x: int) -> int:
                return x * x

            @app.function(autoscaler=svc.Autoscaler(max_containers=4))  # .map() fans out over 4
            def embed(text: str) -> list[float]:
                ...

            @app.function(schedule=svc.Cron("0 3 * * *"))
            def nightly_cleanup() -> None:
                ...

            @app.function(callback_url="https://example.com/hooks/svc")  # each .spawn() is POSTed there
            def transcode(path: str) -> str:
                ...
        """
        return self._declare(
            "function",
            fn,
            name,
            image,
            dict(
                cpu=cpu,
                memory=memory,
                gpu=gpu,
                autoscaler=autoscaler,
                buffer_containers=buffer_containers,
                checkpoint_enabled=checkpoint_enabled,
                keep_warm_seconds=keep_warm_of(
                    "@app.function", "keep_warm_seconds", keep_warm_seconds, scaledown_window
                ),
                on_start=on_start,
                timeout=timeout,
                retries=retries,
                schedule=schedule,
                callback_url=callback_url,
            ),
            unknown,
            secrets,
            volumes,
        )

    def endpoint(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        route: str = "/",
        methods: Sequence[str] = ("GET", "POST"),
        image: Image | None = None,
        cpu: float = 1.0,
        memory: str = "512Mi",
        gpu: str | Sequence[str] | None = None,
        workers: int = 1,
        concurrency: int = 1,
        autoscaler: Autoscaler = _AUTOSCALER,
        buffer_containers: int = 0,
        max_pending_tasks: int = 100,
        checkpoint_enabled: bool = False,
        authorized: bool = True,
        domain: str | None = None,
        keep_warm: int = 60,
        scaledown_window: int | None = None,
        secrets: Sequence[Secret] = (),
        volumes: Mapping[str, Volume] = _NO_VOLUMES,
        on_start: Callable[[], Any] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        callback_url: str | None = None,
        cors: Cors | None = None,
        **unknown: Any,
    ) -> Any:
        """Declares an HTTP endpoint: each request calls the function once.

        The function's parameters are the request's arguments: the fields of the JSON
        body for POST, PUT and PATCH, the query parameters for the other methods. Its
        return value is the JSON response. Positional-only parameters and ``*args``
        are rejected, because arguments arrive by name.

        Example::

            @app.endpoint(route="/greet", methods=["POST"], authorized=False)
            def greet(name: str, excited: bool = False) -> Greeting:
                return Greeting(message=f"Hello, {name}" + ("!" if excited else "."))
        """
        options = dict(
            route=route,
            methods=methods,
            cpu=cpu,
            memory=memory,
            gpu=gpu,
            workers=workers,
            concurrency=concurrency,
            autoscaler=autoscaler,
            buffer_containers=buffer_containers,
            max_pending_tasks=max_pending_tasks,
            checkpoint_enabled=checkpoint_enabled,
            authorized=authorized,
            domain=domain,
            keep_warm=keep_warm_of("@app.endpoint", "keep_warm", keep_warm, scaledown_window),
            on_start=on_start,
            timeout=timeout,
            callback_url=callback_url,
            cors=cors,
        )
        return self._declare("endpoint", fn, name, image, options, unknown, secrets, volumes)

    def cls(
        self,
        target: Any = None,
        /,
        *,
        name: str | None = None,
        image: Image | None = None,
        cpu: float = 1.0,
        memory: str = "512Mi",
        gpu: str | Sequence[str] | None = None,
        autoscaler: Autoscaler = _AUTOSCALER,
        buffer_containers: int = 0,
        checkpoint_enabled: bool = False,
        keep_warm_seconds: int = 60,
        scaledown_window: int | None = None,
        secrets: Sequence[Secret] = (),
        volumes: Mapping[str, Volume] = _NO_VOLUMES,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int | Retries | None = None,
        callback_url: str | None = None,
        **unknown: Any,
    ) -> Any:
        """Declares a class whose workers set up once and then answer many calls: load a model in an
        ``@svc.enter()`` method, call its ``@svc.method()`` methods remotely.

        Each worker makes one instance (with no arguments), runs its ``@svc.enter()`` methods before its
        first call and its ``@svc.exit()`` method when it stops; every call that worker takes runs on that
        instance. Calls go ``Model().predict.remote(x)``, ``.map(...)``, ``.spawn(...)`` as for a function
        (docs/sdk.md, "Classes"); ``Model().predict.local(x)`` runs in this process. It takes a function's
        options but ``schedule`` and ``on_start``, and is a ``function`` in the manifest, with its methods.

        Example::

            @app.cls(memory="2Gi", autoscaler=svc.Autoscaler(max_containers=2))
            class Model:
                @svc.enter()
                def load(self) -> None:
                    self.weights = load_weights("/models/small.bin")

                @svc.method()
                def predict(self, text: str) -> float:
                    return score(self.weights, text)
        """
        options = resolve_class_options(
            dict(
                cpu=cpu,
                memory=memory,
                gpu=gpu,
                autoscaler=autoscaler,
                buffer_containers=buffer_containers,
                checkpoint_enabled=checkpoint_enabled,
                keep_warm_seconds=keep_warm_of(
                    CLASS_DECORATOR, "keep_warm_seconds", keep_warm_seconds, scaledown_window
                ),
                timeout=timeout,
                retries=retries,
                callback_url=callback_url,
            ),
            unknown,
        )
        name = check_option_of(CLASS_DECORATOR, "name", name)
        image = check_option_of(CLASS_DECORATOR, "image", image)
        checked_secrets = check_secrets(CLASS_DECORATOR, secrets)
        mounts = check_volumes(CLASS_DECORATOR, volumes)

        def register(declared: Any) -> ClassHandle:
            spec = read_class(CLASS_DECORATOR, declared)
            workload = class_workload(declared, spec, name, image, options, checked_secrets, mounts)
            served = [
                class_endpoint_workload(workload, method, class_endpoint_options(method_options, options))
                for method, method_options in spec.endpoints
            ]
            added: list[Workload] = []
            try:
                for each in (workload, *served):
                    self._add(each)
                    added.append(each)
            except InvalidOptionError:
                for each in added:  # all of the class or nothing of it
                    del self._workloads[each.name]
                raise
            return ClassHandle(workload, spec)

        return register if target is None else register(target)

    # A static method, defined in the class so that its decorators may call self._declare.
    @staticmethod
    def _app_decorator(kind: str, doc: str) -> Callable[..., Any]:
        """``App.asgi`` or ``App.realtime``: the two take the same options and differ only in kind.

        Errors name the decorator of ``kind`` (``app.asgi``, ``@app.realtime``, from the option
        table); ``doc`` is the method's own docstring, before the generated ``Parameters:``.
        """

        def decorator(
            self: App,
            target: Any = None,
            /,
            *,
            name: str | None = None,
            image: Image | None = None,
            cpu: float = 1.0,
            memory: str = "512Mi",
            gpu: str | Sequence[str] | None = None,
            workers: int = 1,
            concurrent_requests: int = 1,
            autoscaler: Autoscaler = _AUTOSCALER,
            buffer_containers: int = 0,
            max_pending_tasks: int = 100,
            checkpoint_enabled: bool = False,
            authorized: bool = True,
            domain: str | None = None,
            keep_warm_seconds: int = 60,
            scaledown_window: int | None = None,
            secrets: Sequence[Secret] = (),
            volumes: Mapping[str, Volume] = _NO_VOLUMES,
            on_start: Callable[[], Any] | None = None,
            openapi: str | None = _OPENAPI,
            callback_url: str | None = None,
            cors: Cors | None = None,
            **unknown: Any,
        ) -> Any:
            options: dict[str, Any] = dict(
                cpu=cpu,
                memory=memory,
                gpu=gpu,
                workers=workers,
                concurrent_requests=concurrent_requests,
                autoscaler=autoscaler,
                buffer_containers=buffer_containers,
                max_pending_tasks=max_pending_tasks,
                checkpoint_enabled=checkpoint_enabled,
                authorized=authorized,
                domain=domain,
                keep_warm_seconds=keep_warm_of(
                    DECORATORS[kind], "keep_warm_seconds", keep_warm_seconds, scaledown_window
                ),
                on_start=on_start,
            )
            # Only an ASGI app has an OpenAPI description and calls kept for later (Prefer: respond-async);
            # realtime refuses them as any option it does not take.
            if kind == "asgi":
                options["openapi"] = str(openapi) if isinstance(openapi, _Default) else openapi
                options["callback_url"] = callback_url
                # An ASGI app answers CORS itself (CORSMiddleware): the gateway lets its preflights through.
                unknown = {**({"cors": cors} if cors is not None else {}), **unknown}
            else:
                options["cors"] = cors
                asgi_only = {"openapi": openapi} if not isinstance(openapi, _Default) else {}
                unknown = {
                    **asgi_only,
                    **({"callback_url": callback_url} if callback_url is not None else {}),
                    **unknown,
                }
            return self._declare(kind, target, name, image, options, unknown, secrets, volumes)

        decorator.__name__ = kind
        decorator.__qualname__ = f"App.{kind}"
        decorator.__doc__ = doc
        if kind != "asgi":  # what help() and editors show: the options this kind takes
            signature = inspect.signature(decorator)
            setattr(
                decorator,
                "__signature__",
                signature.replace(
                    parameters=[p for p in signature.parameters.values() if p.name not in ("openapi", "callback_url")]
                ),
            )
        else:  # an ASGI app answers CORS itself
            signature = inspect.signature(decorator)
            setattr(
                decorator,
                "__signature__",
                signature.replace(parameters=[p for p in signature.parameters.values() if p.name != "cors"]),
            )
        return decorator

    asgi = _app_decorator(
        "asgi",
        """Declares an ASGI application (FastAPI, Starlette, ...) served with all its routes.

        Call it with options, then with the application: ``app.asgi(name="web")(web_app)``.
        It returns the application, still usable as one. The ASGI framework must be
        installed where you run ``svc``, because the CLI imports your file; add it to
        the image too. ASGI apps define their own routes, so ``route`` and ``methods``
        do not apply.

        Example::

            web = FastAPI()
            app.asgi(name="web", concurrent_requests=16)(web)
        """,
    )

    realtime = _app_decorator(
        "realtime",
        """Declares a realtime (WebSocket) handler: called once per incoming message.

        The function takes the message as its first parameter and returns the reply;
        a returned iterable is sent as one message per item.

        Example::

            @app.realtime(concurrent_requests=32)
            def echo(message: str) -> str:
                return message.upper()
        """,
    )

    def _declare(
        self,
        kind: str,
        target: Any,
        name: Any,
        image: Any,
        given: dict[str, Any],
        unknown: dict[str, Any],
        secrets: Any = (),
        volumes: Any = _NO_VOLUMES,
    ) -> Any:
        """Checks the options now (at the decorator line), then registers the target."""
        options = resolve_options(kind, given, unknown)
        name = check_option(kind, "name", name)
        image = check_option(kind, "image", image)
        # Not in the option table: secrets and volumes are no manifest options but the workload's own lists (docs/manifest.md).
        checked_secrets = check_secrets(DECORATORS[kind], secrets)
        mounts = check_volumes(DECORATORS[kind], volumes)

        def register(obj: Any) -> FunctionHandle | AsgiHandle:
            workload = create_workload(kind, obj, name, image, options, checked_secrets, mounts)
            self._add(workload)
            return handle_for(workload)

        return register if target is None else register(target)

    def _add(self, workload: Workload) -> None:
        existing = self._workloads.get(workload.name)
        if existing is not None:
            raise InvalidOptionError(
                f"App {self._name!r} already has a workload named {workload.name!r} "
                f"(a {existing.kind}, {_origin(existing)}); this {workload.kind} ({_origin(workload)}) gets the "
                f"same name, but workload names are unique within an app: pass name= to name it differently",
                option="name",
            )
        self._workloads[workload.name] = workload


def _origin(workload: Workload) -> str:
    """Where a workload's name came from, for messages: its Python name, or name=."""
    if workload.derived_from is None:
        return f"named with name={workload.name!r}"
    what = "object" if workload.kind == "asgi" else "class" if workload.cls is not None else "function"
    return f"named after the Python {what} {workload.derived_from!r}"


# Documented where the signatures have it: right before on_start, which every kind takes.
_SECRETS_DOC = """    secrets (Sequence[svc.Secret]):
        Secrets whose keys every worker gets as environment variables (a later one's key wins): svc.Secret.from_name for the workspace's, svc.Secret.from_dict for values from this process; a deploy naming one the workspace lacks is refused (docs/secrets.md).
        Default: ``[]``. Example: ``secrets=[svc.Secret.from_name("db")]``
"""

_VOLUMES_DOC = """    volumes (Mapping[str, svc.Volume]):
        Volumes of the workspace each container mounts, by absolute path: what one container writes there the others (and svc volume get) see at once; vol.read_only() mounts one read-only. A deploy naming one the workspace lacks is refused (docs/volumes.md).
        Default: ``{}``. Example: ``volumes={"/models": svc.Volume.from_name("models")}``
"""

_SCALEDOWN_DOC = """    scaledown_window (int | None):
        The keep-warm option under the name other platforms use: idle seconds before a container may stop, 0 to 86400. Give it or the keep-warm option, not both.
        Default: ``None``. Example: ``scaledown_window=300``
"""

for _kind in ("function", "endpoint", "asgi", "realtime"):
    _method = getattr(App, _kind)
    _parameters = parameters_doc(_kind).replace(
        "    on_start (", _SECRETS_DOC + _VOLUMES_DOC + _SCALEDOWN_DOC + "    on_start (", 1
    )
    _method.__doc__ = f"{_method.__doc__.rstrip()}\n\n        " + _parameters.replace("\n", "\n        ")
del _kind, _method, _parameters
