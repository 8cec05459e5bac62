"""Workload options: one table that validates them, fills their defaults and documents them.

``KIND_OPTIONS`` says which options each kind takes, in manifest order;
``resolve_options`` checks what a decorator was given and returns the manifest
``options`` object. The decorator docstrings are generated from the same table
(``parameters_doc``), so the docs cannot drift from the checks.

The platform validates manifests with its own copy of these rules
(core/model/workload/rules.ts and core/model/workload/defaults.ts); ``describe_options``
dumps this table as JSON so that test/core/model/workload/sdk-parity.test.ts can
check that both agree on every option, default and bound.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from . import _checks
from ._autoscaler import Autoscaler, describe_fields
from ._checks import Problem
from ._cors import Cors
from ._gpu import check_gpu
from ._image import Image
from ._retries import Retries, check_retries
from ._retries import describe_fields as describe_retries
from ._schedule import Cron, Period, check_schedule

HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
RESERVED_ROUTE_PREFIX = "/_svc"

_MEMORY = re.compile(r"([1-9][0-9]*)(Mi|Gi)")
_MEMORY_LOOSE = re.compile(r"\s*([0-9]+)\s*([mMgG])(?:[iI]?[bB]?)\s*")
_MEMORY_RANGE_MI = (64, 256 * 1024)
_ROUTE_CHARS = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@/-]*")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# A callback URL's form, as the platform checks it (core/model/callback-url.ts); where it points
# (loopback, private networks) is checked by the server when a call is made.
MAX_CALLBACK_URL_LENGTH = 2048
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_PORT = re.compile(r"[0-9]{0,5}")


@_checks.describe(type="memory", min_mib=_MEMORY_RANGE_MI[0], max_mib=_MEMORY_RANGE_MI[1])
def _memory(value: Any) -> str:
    fix = "use a binary unit such as 512Mi or 1Gi"
    if not isinstance(value, str):
        raise Problem(f'is a {_checks.type_name(value)}, not a string: {fix} (written as a string, "512Mi")')
    match = _MEMORY.fullmatch(value)
    if match is None:
        loose = _MEMORY_LOOSE.fullmatch(value)
        hint = f" (did you mean {loose.group(1)}{loose.group(2).upper()}i?)" if loose else ""
        raise Problem(f"is not a size svc understands: {fix}{hint}")
    mebibytes = int(match.group(1)) * (1024 if match.group(2) == "Gi" else 1)
    if not _MEMORY_RANGE_MI[0] <= mebibytes <= _MEMORY_RANGE_MI[1]:
        raise Problem("is out of range: use 64Mi to 256Gi")
    return value


@_checks.describe(type="route", reserved_prefix=RESERVED_ROUTE_PREFIX)
def _route(value: Any) -> str:
    if not isinstance(value, str):
        raise Problem(f"is a {_checks.type_name(value)}, not a string: pass a path such as '/greet'")
    if not value.startswith("/"):
        raise Problem(f"does not start with '/': write '/{value}'")
    if any(char.isspace() or not char.isprintable() for char in value):
        raise Problem("contains whitespace or control characters: use a plain path such as '/greet'")
    if "?" in value or "#" in value:
        raise Problem("contains '?' or '#': a route is a path only; arguments come from the query or the body")
    if "//" in value:
        raise Problem("contains '//': separate path segments with a single '/'")
    if any(segment in (".", "..") for segment in value.split("/")):
        raise Problem("contains a '.' or '..' segment: write the path without them")
    if not _ROUTE_CHARS.fullmatch(value):
        # The gateway compares routes with the raw request path: nothing may need percent-encoding.
        raise Problem(
            "contains characters that need percent-encoding in a URL: use letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ /"
        )
    if value == RESERVED_ROUTE_PREFIX or value.startswith(RESERVED_ROUTE_PREFIX + "/"):
        raise Problem(f"is under {RESERVED_ROUTE_PREFIX}/, which svc reserves for itself: choose another path")
    return value


@_checks.describe(type="openapi", reserved_prefix=RESERVED_ROUTE_PREFIX)
def _openapi(value: Any) -> str:
    """The app's path of its OpenAPI description: the rules of a route (it is one of the app's)."""
    if not isinstance(value, str):
        raise Problem(
            f"is a {_checks.type_name(value)}, not a string: pass the app's path of it, such as '/openapi.json', or None"
        )
    return _route(value)


@_checks.describe(type="methods", allowed=list(HTTP_METHODS))
def _methods(value: Any) -> list[str]:
    allowed = ", ".join(HTTP_METHODS)
    if isinstance(value, str):
        raise Problem(f"is a single string: pass a list such as [{value.upper()!r}]")
    if not isinstance(value, (list, tuple)):
        raise Problem(f"is a {_checks.type_name(value)}, not a list: pass a list such as ['GET', 'POST']")
    if not value:
        raise Problem(f"is empty: list at least one of {allowed}")
    methods: list[str] = []
    for item in cast("Sequence[object]", value):
        method = item.upper() if isinstance(item, str) else None
        if method not in HTTP_METHODS:
            raise Problem(f"contains {item!r}, which is not an HTTP method svc serves: use one or more of {allowed}")
        if method in methods:
            raise Problem(f"lists {method} twice: list each method once")
        methods.append(method)
    return methods


@_checks.describe(type="domain")
def _domain(value: Any) -> str:
    example = "pass a hostname such as 'api.example.com'"
    if not isinstance(value, str):
        raise Problem(f"is a {_checks.type_name(value)}, not a string: {example}")
    if "/" in value:
        raise Problem(f"is not a bare hostname: {example}, without scheme or path")
    if value != value.lower():
        raise Problem(f"has upper-case letters: write {value.lower()!r}")
    labels = value.split(".")
    if len(labels) < 2:
        raise Problem(f"has no dot: {example}")
    if len(value) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise Problem(
            "is not a valid DNS hostname: each dot-separated label is 1 to 63 letters, digits "
            "or hyphens and neither starts nor ends with a hyphen"
        )
    return value


@_checks.describe(type="callbackUrl", max_length=MAX_CALLBACK_URL_LENGTH)
def _callback_url(value: Any) -> str:
    fix = "pass the http or https URL of your receiver, such as 'https://example.com/hooks/svc'"
    if not isinstance(value, str):
        raise Problem(f"is a {_checks.type_name(value)}, not a string: {fix}")
    if len(value) > MAX_CALLBACK_URL_LENGTH:
        raise Problem(f"is {len(value)} characters long; svc takes at most {MAX_CALLBACK_URL_LENGTH}")
    # What the platform's \\s and \\p{Cc} match (JavaScript's \\s also matches U+FEFF).
    if any(char.isspace() or char == "\ufeff" or unicodedata.category(char) == "Cc" for char in value):
        raise Problem("holds whitespace or a control character: percent-encode it (a space is %20)")
    scheme = _SCHEME.match(value)
    if scheme is None:
        raise Problem(f"is not an absolute URL: {fix}")
    if scheme.group(1).lower() not in ("http", "https"):
        raise Problem(f"has the scheme {scheme.group(1)}:, but svc POSTs callbacks over http: or https: only: {fix}")
    rest = value[scheme.end() :]
    if not rest.startswith("//"):
        raise Problem(f"does not go on with // and the host after {scheme.group(0)}: {fix}")
    # What a URL reader takes for user, host and port: up to the path, query or fragment (or a backslash).
    authority = re.split(r"[/?#\\]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        raise Problem(
            "holds a user name or password (user:pass@host), which svc would store and show to everyone who "
            "may read the app or its calls: check the X-Svc-Signature header in your receiver instead "
            "(docs/api.md#completion-callbacks)"
        )
    host, port = _host_and_port(authority)
    if host == "":
        raise Problem(f"has no host: {fix}")
    if not _PORT.fullmatch(port) or (port != "" and int(port) > 65535):
        raise Problem(f"has the port {port!r}, which is not a number from 0 to 65535")
    return value


def _host_and_port(authority: str) -> tuple[str, str]:
    """``example.com:8443`` → (``example.com``, ``8443``); an IPv6 address is in brackets; no port: ``""``."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise Problem("has a '[' without its ']' in its host: write an IPv6 address as [2001:db8::1]")
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest != "" and not rest.startswith(":"):
            raise Problem(f"has {rest!r} after its host {host}: write a port as {host}:8080")
        return host, rest[1:]
    host, _, port = authority.partition(":")
    return host, port


@_checks.describe(type="callable")
def _on_start(value: Any) -> Any:
    example = "pass a function that takes no arguments, e.g. on_start=load_model"
    if not callable(value) or isinstance(value, (str, bytes)):
        raise Problem(f"is a {_checks.type_name(value)}, not a callable: {example}")
    function = cast("Callable[..., Any]", value)
    target = _called(function)
    if inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target):
        raise Problem(
            "is an async function: on_start runs before the server's event loop starts, so it must be a "
            "plain function; create event-loop objects (clients, pools) in the handler instead"
        )
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature: nothing to check
        return function
    required = [
        p.name
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if required:
        names = ", ".join(repr(name) for name in required)
        raise Problem(
            f"takes required arguments ({names}), but svc calls on_start with none: give them defaults "
            "or wrap the call in a function without parameters"
        )
    return function


def _called(function: Callable[..., Any]) -> Callable[..., Any]:
    """The function a ``functools.partial`` calls, else ``function`` itself."""
    if isinstance(function, functools.partial):
        return cast("functools.partial[object]", function).func
    return function


def callable_name(value: Any) -> str:
    """How the manifest names a callable: its ``__qualname__`` (``load``, ``Model.load``,
    ``make.<locals>.load``); a ``functools.partial`` by its function; an object by its class."""
    if isinstance(value, functools.partial):
        return callable_name(value.func)
    name = getattr(value, "__qualname__", None)
    return name if isinstance(name, str) and name else type(value).__qualname__


@dataclass(frozen=True)
class Option:
    """One decorator option: its default, its check and its documentation."""

    name: str
    type: str
    default: Any
    check: _checks.Check
    doc: str
    example: str


_DEFAULT_AUTOSCALER = Autoscaler()

DEFAULT_TIMEOUT = 300.0
"""Five minutes, as Modal's functions: long enough for real work, short enough that a stuck call ends."""

OPTIONS: Mapping[str, Option] = {
    option.name: option
    for option in (
        Option(
            "name",
            "str | None",
            None,
            _checks.optional(_checks.name),
            f"Workload name: {_checks.NAME_RULE}, unique within the app. "
            "None names it after the function: lower case, '_' as '-' (say_hello: say-hello).",
            'name="greet"',
        ),
        Option(
            "image",
            "svc.Image | None",
            None,
            _checks.optional(_checks.instance(Image, 'svc.Image(python_version="3.11")')),
            "The Python environment to run in. None uses svc.Image(): the manifest "
            "writer's Python version and no extra packages.",
            'image=svc.Image(python_version="3.11").add_python_packages(["numpy"])',
        ),
        Option(
            "cpu",
            "float",
            1.0,
            _checks.number(0.125, 64, "a number of CPU cores", "0.5, 1 or 2"),
            "CPU cores per container, 0.125 to 64; fractions are allowed. A bool is not a number here.",
            "cpu=0.5",
        ),
        Option(
            "memory",
            "str",
            "512Mi",
            _memory,
            "Memory per container: a whole number with a binary unit, Mi or Gi, from 64Mi to 256Gi.",
            'memory="2Gi"',
        ),
        Option(
            "gpu",
            "str | list[str] | None",
            None,
            _checks.optional(check_gpu),
            'GPUs per container: a model with an optional count, "H100", "A100-80GB:2", "L4:1"; "any" or '
            '"any:2" for whatever GPU the platform has; or a list tried in order, ["H100", "A100"] (one count '
            'for all). At most 8. Names are matched against what the machine reports ("NVIDIA H100 80GB HBM3" is an '
            'H100; "A100" takes any A100, "A100-80GB" only those): docs/gpus.md. Checked against the platform\'s '
            "GPUs when deployed. None: no GPU.",
            'gpu="H100"',
        ),
        Option(
            "route",
            "str",
            "/",
            _route,
            "URL path the endpoint answers on. Starts with '/'; no '?', '#', whitespace, "
            "'//', '.' or '..' segments; /_svc/ is reserved.",
            'route="/greet"',
        ),
        Option(
            "methods",
            "list[str]",
            ("GET", "POST"),
            _methods,
            f"HTTP methods the endpoint accepts: a non-empty list of distinct methods from "
            f"{', '.join(HTTP_METHODS)} (any case; upper-cased). POST, PUT and PATCH take "
            "the arguments from the JSON body, the others from the query string.",
            'methods=["POST"]',
        ),
        Option("workers", "int", 1, _checks.integer(1, 64), "Processes per container, 1 to 64.", "workers=2"),
        Option(
            "concurrency",
            "int",
            1,
            _checks.integer(1, 1000),
            "Requests one worker handles at once, 1 to 1000. Capacity of a container is workers x concurrency.",
            "concurrency=8",
        ),
        Option(
            "concurrent_requests",
            "int",
            1,
            _checks.integer(1, 1000),
            "Requests (or WebSocket connections) one worker handles at once, 1 to 1000. "
            "Capacity of a container is workers x concurrent_requests.",
            "concurrent_requests=16",
        ),
        Option(
            "autoscaler",
            "svc.Autoscaler",
            _DEFAULT_AUTOSCALER,
            _checks.describe(type="autoscaler", fields=describe_fields())(
                _checks.instance(Autoscaler, "svc.Autoscaler(max_containers=3)")
            ),
            "Scaling bounds. The default runs at most one container and scales to zero.",
            "autoscaler=svc.Autoscaler(max_containers=5, tasks_per_container=8)",
        ),
        Option(
            "buffer_containers",
            "int",
            0,
            _checks.integer(0, 1000),
            "Idle containers kept ready beyond those the load needs, 0 to 1000 (within max_containers): a burst "
            "starts on warm ones. Change it on a running deployment with svc deployment scale --buffer.",
            "buffer_containers=1",
        ),
        Option(
            "max_pending_tasks",
            "int",
            100,
            _checks.integer(0, 100000),
            "Requests that may wait in the queue when every worker is busy, 0 to 100000; "
            "beyond it the gateway answers 429.",
            "max_pending_tasks=500",
        ),
        Option(
            "checkpoint_enabled",
            "bool",
            False,
            _checks.boolean,
            "Start new containers from a warmed process instead of re-running imports and start-up code "
            "(on_start; a class's @svc.enter(snap=True) methods, its others then run in each worker).",
            "checkpoint_enabled=True",
        ),
        Option(
            "authorized",
            "bool",
            True,
            _checks.boolean,
            "Require 'Authorization: Bearer <token>'. False makes the URL public; access "
            "control is then your code's job.",
            "authorized=False",
        ),
        Option(
            "domain",
            "str | None",
            None,
            _checks.optional(_domain),
            "Also serve the workload on this customer-owned hostname (lower-case, at "
            "least one dot). Team and Business plans only.",
            'domain="api.example.com"',
        ),
        Option(
            "keep_warm",
            "int",
            60,
            _checks.integer(0, 86400),
            "Seconds an idle container stays up before it may be stopped, 0 to 86400.",
            "keep_warm=300",
        ),
        Option(
            "keep_warm_seconds",
            "int",
            60,
            _checks.integer(0, 86400),
            "Seconds an idle container stays up before it may be stopped, 0 to 86400.",
            "keep_warm_seconds=300",
        ),
        Option(
            "on_start",
            "Callable[[], Any] | None",
            None,
            _checks.optional(_on_start),
            "A plain function called once in each worker before it takes requests, with no "
            "arguments (set up models, caches, connections). Its return value reaches the "
            "handler as context.on_start_value. If it raises, the worker does not start and "
            "the traceback goes to the workload logs.",
            "on_start=load_model",
        ),
        Option(
            "timeout",
            "float",
            DEFAULT_TIMEOUT,
            _checks.number(1, 86400, "a number of seconds", "30 or 600"),
            "Seconds one call may run, 1 to 86400 (a day). A call past it is abandoned: an endpoint "
            "answers 504 timeout, .remote() raises svc.FunctionTimeoutError, and the worker running "
            "it is replaced. For an endpoint it counts to the last byte, a stream's included.",
            "timeout=30",
        ),
        Option(
            "retries",
            "int | svc.Retries | None",
            None,
            _checks.describe(type="retries", nullable=True, fields=describe_retries())(check_retries),
            "Run a failed call again (it raised, its container died, or it timed out): a count, "
            "0 to 10, or svc.Retries for the pauses between attempts. Each attempt is in the logs.",
            "retries=svc.Retries(max_retries=3, initial_delay=0.5)",
        ),
        Option(
            "schedule",
            "svc.Cron | svc.Period | None",
            None,
            _checks.optional(check_schedule),
            "Run the deployed function by itself on this schedule, with no arguments: a cron "
            "expression (svc.Cron) or a period (svc.Period). Each tick runs once across svc's "
            "replicas; a tick that comes while the previous run still runs is skipped unless "
            "overlap=True. Runs and their logs: svc app runs <app>.",
            'schedule=svc.Cron("0 3 * * *")',
        ),
        Option(
            "callback_url",
            "str | None",
            None,
            _checks.optional(_callback_url),
            "Where svc POSTs the outcome of each kept call when the call names no URL itself: "
            ".spawn(), the HTTP calls API, and requests sent with Prefer: respond-async (not .remote(), "
            "nor each input of a .map()). Signed and retried as per-call callbacks are "
            "(docs/api.md#completion-callbacks). An absolute http:// or https:// URL, at most 2048 characters, "
            "without user:pass@. Its form is checked here; whether it points at loopback or a private "
            "network is checked by the server when a call is made.",
            'callback_url="https://example.com/hooks/svc"',
        ),
        Option(
            "cors",
            "svc.Cors | None",
            None,
            _checks.describe(type="cors", nullable=True)(
                _checks.optional(_checks.instance(Cors, "svc.Cors(origins=['https://app.example.com'])"))
            ),
            "Web pages of other origins that may call this URL from a browser: the gateway answers their "
            "preflight requests and adds the CORS headers to every answer to them (docs/sdk.md#cors). None: "
            "browsers of other origins may not read the answers.",
            'cors=svc.Cors(origins=["https://app.example.com"])',
        ),
        Option(
            "openapi",
            "str | None",
            "/openapi.json",
            _checks.optional(_openapi),
            "The app's path of its OpenAPI description (FastAPI serves one at /openapi.json), read once "
            "at each deploy: svc app export then gives each operation its own typed method. None: not "
            "read (the client keeps only request() and connect()). A deploy never fails over it.",
            'openapi="/api/schema.json"',
        ),
    )
}

_SERVED = ("cpu", "memory", "gpu")
_SCALED = ("autoscaler", "buffer_containers", "max_pending_tasks", "checkpoint_enabled", "authorized", "domain")
_ASGI = _SERVED + ("workers", "concurrent_requests") + _SCALED + ("keep_warm_seconds",)

KIND_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "function": _SERVED
    + (
        "autoscaler",
        "buffer_containers",
        "checkpoint_enabled",
        "keep_warm_seconds",
        "on_start",
        "timeout",
        "retries",
        "schedule",
        "callback_url",
    ),
    "endpoint": _SERVED
    + ("route", "methods", "workers", "concurrency")
    + _SCALED
    + ("keep_warm", "on_start", "timeout", "callback_url", "cors"),
    "asgi": _ASGI + ("openapi", "on_start", "callback_url"),
    "realtime": _ASGI + ("on_start", "cors"),
}

DECORATORS: Mapping[str, str] = {
    "function": "@app.function",
    "endpoint": "@app.endpoint",
    "asgi": "app.asgi",
    "realtime": "@app.realtime",
}

_ROUTES_HINT = {
    "asgi": "ASGI apps define their own routes; declare them in the ASGI app and remove {option}=",
    "realtime": "a realtime handler answers WebSocket messages at its own URL; remove {option}=",
}
_RENAMED = {"concurrency": "concurrent_requests", "keep_warm": "keep_warm_seconds"}


def _wrong_option_hint(kind: str, option: str) -> str:
    """Why ``option`` is not accepted by ``kind`` and what to write instead."""
    accepted = ("name", "image") + KIND_OPTIONS[kind]
    if option in ("route", "methods") and kind in _ROUTES_HINT:
        return _ROUTES_HINT[kind].format(option=option)
    renamed = {**_RENAMED, **{new: old for old, new in _RENAMED.items()}}
    if option in OPTIONS and renamed.get(option) in accepted:
        return f"use {renamed[option]}= ({DECORATORS[kind]} calls this option {renamed[option]})"
    if option in OPTIONS:
        owners = " and ".join(DECORATORS[k] for k, names in KIND_OPTIONS.items() if option in names)
        return f"{option} belongs to {owners}; {DECORATORS[kind]} takes {', '.join(accepted)}"
    close = difflib.get_close_matches(option, accepted, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]}=? " if close else ""
    return f"{guess}{DECORATORS[kind]} takes {', '.join(accepted)}"


def reject_unknown(kind: str, unknown: Mapping[str, Any]) -> None:
    """Raises InvalidOptionError for the first option ``kind`` does not take, with a fix."""
    for option, value in unknown.items():
        where = DECORATORS[kind]
        _checks.reject(where, option, value, f"is not an option of {where}: {_wrong_option_hint(kind, option)}")


def check_option(kind: str, option: str, value: Any) -> Any:
    """The normalised value of one option, or InvalidOptionError naming the decorator."""
    return check_option_of(DECORATORS[kind], option, value)


def check_option_of(where: str, option: str, value: Any) -> Any:
    """``check_option`` for the decorator named ``where`` (``@app.cls`` declares a ``function``)."""
    try:
        return OPTIONS[option].check(value)
    except Problem as problem:
        _checks.reject(where, option, value, problem)


def resolve_options(kind: str, given: Mapping[str, Any], unknown: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest ``options`` of a workload: every option of ``kind``, checked, in table order.

    ``given`` holds the decorator's keyword arguments (its own defaults included);
    ``unknown`` the keywords it did not declare.
    """
    reject_unknown(kind, unknown)
    return {option: check_option(kind, option, given[option]) for option in KIND_OPTIONS[kind]}


CLASS_DECORATOR = "@app.cls"
CLASS_OPTIONS = (
    "cpu",
    "memory",
    "gpu",
    "autoscaler",
    "buffer_containers",
    "checkpoint_enabled",
    "keep_warm_seconds",
    "timeout",
    "retries",
    "callback_url",
)
"""What ``@app.cls`` takes besides name, image and secrets: a function's options but ``schedule`` (a class has
no one method to run on a schedule) and ``on_start`` (its ``@svc.enter()`` methods are its set-up)."""


ENDPOINT_METHOD_DECORATOR = "@svc.endpoint"
ENDPOINT_METHOD_OPTIONS = (
    "route",
    "methods",
    "workers",
    "concurrency",
    "autoscaler",
    "buffer_containers",
    "max_pending_tasks",
    "authorized",
    "domain",
    "keep_warm",
    "timeout",
    "callback_url",
    "cors",
)
"""What ``@svc.endpoint(...)`` takes: ``@app.endpoint``'s options but those the class gives (``name``, ``image``,
``secrets``, ``cpu``, ``memory``, ``gpu``), ``on_start`` (its ``@svc.enter()`` methods are its set-up) and
``checkpoint_enabled``."""


def resolve_endpoint_method_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """The options of an endpoint method, checked, the others of ``@app.endpoint`` at their defaults but ``cpu``,
    ``memory`` and ``gpu``, which ``@app.cls`` fills in (``class_endpoint_options``)."""
    for option, value in given.items():
        if option not in ENDPOINT_METHOD_OPTIONS:
            close = difflib.get_close_matches(option, ENDPOINT_METHOD_OPTIONS, n=1, cutoff=0.6)
            guess = f"did you mean {close[0]}=? " if close else ""
            _checks.reject(
                ENDPOINT_METHOD_DECORATOR,
                option,
                value,
                f"is not an option of {ENDPOINT_METHOD_DECORATOR}: {guess}it takes {', '.join(ENDPOINT_METHOD_OPTIONS)} "
                "(the class gives cpu, memory, gpu, image and secrets)",
            )
    return {
        option: check_option_of(ENDPOINT_METHOD_DECORATOR, option, given.get(option, OPTIONS[option].default))
        for option in ENDPOINT_METHOD_OPTIONS
    }


def class_endpoint_options(method_options: Mapping[str, Any], class_options: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest ``options`` of the endpoint that serves a class's method: every option of ``endpoint``, in table
    order, from the method's, the class's ``cpu``, ``memory``, ``gpu`` and ``checkpoint_enabled``, and the defaults."""
    return {
        option: method_options[option]
        if option in method_options
        else class_options[option]
        if option in ("cpu", "memory", "gpu", "checkpoint_enabled")
        else OPTIONS[option].default
        for option in KIND_OPTIONS["endpoint"]
    }


def resolve_class_options(given: Mapping[str, Any], unknown: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest ``options`` of an ``@app.cls`` class, a ``function`` in the manifest: ``given`` checked,
    and the function's other options at their defaults."""
    accepted = ("name", "image", "secrets", "volumes") + CLASS_OPTIONS
    for option, value in unknown.items():
        close = difflib.get_close_matches(option, accepted, n=1, cutoff=0.6)
        guess = f"did you mean {close[0]}=? " if close else ""
        why = " (its @svc.enter() methods are its set-up)" if option == "on_start" else ""
        _checks.reject(
            CLASS_DECORATOR,
            option,
            value,
            f"is not an option of {CLASS_DECORATOR}{why}: {guess}it takes {', '.join(accepted)}",
        )
    options: dict[str, Any] = {}
    for option in KIND_OPTIONS["function"]:
        if option not in CLASS_OPTIONS:
            options[option] = OPTIONS[option].default
            continue
        options[option] = check_option_of(CLASS_DECORATOR, option, given[option])
    return options


def parameters_doc(kind: str) -> str:
    """The ``Parameters:`` section of a decorator docstring, from the option table."""
    lines = ["Parameters:"]
    for option in ("name", "image") + KIND_OPTIONS[kind]:
        entry, value = OPTIONS[option], OPTIONS[option].default
        default = "svc.Autoscaler()" if isinstance(value, Autoscaler) else repr(value)
        if isinstance(value, tuple):
            default = repr(list(cast("tuple[object, ...]", value)))
        lines += [
            f"    {option} ({entry.type}):",
            f"        {entry.doc}",
            f"        Default: ``{default}``. Example: ``{entry.example}``",
        ]
    return "\n".join(lines)


def manifest_value(option: str, value: Any) -> Any:
    """An option's value as the manifest writes it: an Autoscaler, Retries, Cron or Period as an object, a tuple as a
    list, ``on_start`` as the callable's name (``callable_name``) or null."""
    if isinstance(value, (Autoscaler, Retries, Cron, Period, Cors)):
        return value.to_dict()
    if option == "on_start" and value is not None:
        return callable_name(value)
    return list(cast("tuple[object, ...]", value)) if isinstance(value, tuple) else value


def describe_options() -> dict[str, dict[str, dict[str, Any]]]:
    """The manifest options of every kind, as JSON-ready data: kind → option → rule.

    Each rule holds ``default`` (as the manifest writes it) and ``type``: ``number`` and
    ``integer`` with ``min`` and ``max``; ``memory`` with ``min_mib`` and ``max_mib``;
    ``methods`` with ``allowed``; ``route`` with ``reserved_prefix``; ``boolean``;
    ``domain`` with ``nullable``; ``callable`` (``on_start``, written as the callable's name) with
    ``nullable``; ``autoscaler`` with ``fields``, each field's own
    ``default`` and integer rule; ``retries`` (``nullable``) with ``fields`` the same way
    (``max_retries`` has no default: None). The bounds are read from the checks themselves, so
    this is what the decorators enforce. Options and kinds come in manifest order.

    The platform's parity test (test/core/model/workload/sdk-parity.test.ts) compares it with
    core/model/workload/rules.ts. To look at it::

        PYTHONPATH=sdk/python python3 -c "import json, svc._options as o; print(json.dumps(o.describe_options(), indent=2))"
    """
    return {
        kind: {
            option: {
                "default": manifest_value(option, OPTIONS[option].default),
                **_checks.rule_of(OPTIONS[option].check),
            }
            for option in options
        }
        for kind, options in KIND_OPTIONS.items()
    }


SCALEDOWN_WINDOW = "scaledown_window"


def keep_warm_of(where: str, option: str, keep_warm: Any, scaledown_window: Any) -> Any:
    """``scaledown_window=`` is the keep-warm option's other name (as other platforms call it): either, not both."""
    if scaledown_window is None:
        return keep_warm
    if keep_warm != OPTIONS[option].default:
        _checks.reject(
            where,
            SCALEDOWN_WINDOW,
            scaledown_window,
            f"is {option} under another name, and {option}={keep_warm!r} is given too: give one of them",
        )
    try:
        return _checks.integer(0, 86400)(scaledown_window)
    except Problem as problem:
        _checks.reject(where, SCALEDOWN_WINDOW, scaledown_window, problem)
