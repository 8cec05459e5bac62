"""The on_start option: checked at the decorator line, named in the manifest, run by run_on_start."""

from __future__ import annotations

import functools

import pytest
import svc
from svc.manifest import build_manifest
from svc.runtime import run_on_start


def load_model() -> dict:
    return {"weights": 1}


class Model:
    @staticmethod
    def load(path: str = "model.bin") -> str:
        return path


class Loader:
    def __call__(self) -> str:
        return "loaded"


def make_loader():
    def load() -> str:
        return "inner"

    return load


def declare(kind: str, on_start):
    app = svc.App("t")
    if kind == "asgi":

        async def web(scope, receive, send): ...

        return app.asgi(name="web", on_start=on_start)(web).workload

    def handler(message: str = "") -> str:
        return message

    return getattr(app, kind)(on_start=on_start)(handler).workload


@pytest.mark.parametrize("kind", ["function", "endpoint", "asgi", "realtime"])
def test_every_kind_takes_on_start_and_keeps_the_callable(kind):
    workload = declare(kind, load_model)
    assert workload.options["on_start"] is load_model
    # Last of the options before the call limits of functions and endpoints (timeout, retries), a
    # function's schedule, the callback_url of functions, endpoints and ASGI apps and the cors of
    # endpoints and realtime handlers, which follow it in that order (docs/manifest.md).
    later = ("timeout", "retries", "schedule", "callback_url", "cors")
    assert [name for name in workload.options if name not in later][-1] == "on_start"


@pytest.mark.parametrize(
    "on_start,name",
    [
        (load_model, "load_model"),
        (Model.load, "Model.load"),
        (make_loader(), "make_loader.<locals>.load"),
        (lambda: 1, "<lambda>"),
        (functools.partial(Model.load, "other.bin"), "Model.load"),
        (Loader(), "Loader"),
        (None, None),
    ],
)
def test_the_manifest_names_the_callable(on_start, name):
    app = svc.App("t")

    @app.endpoint(on_start=on_start)
    def handler() -> None: ...

    assert build_manifest(app, "app")["workloads"][0]["options"]["on_start"] == name


@pytest.mark.parametrize(
    "value,problem",
    [
        (5, "is a int, not a callable: pass a function that takes no arguments, e.g. on_start=load_model."),
        ("load_model", "is a str, not a callable"),
        (lambda path: path, "takes required arguments ('path'), but svc calls on_start with none"),
        (functools.partial(lambda a, b: a, 1), "takes required arguments ('b')"),
    ],
)
def test_a_bad_on_start_is_rejected_naming_the_decorator(value, problem):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.App("t").endpoint(on_start=value)
    assert str(caught.value).startswith("@app.endpoint: on_start=")
    assert problem in str(caught.value)
    assert caught.value.option == "on_start"


def test_an_async_on_start_is_rejected_with_the_reason():
    async def connect() -> None: ...

    with pytest.raises(
        svc.InvalidOptionError, match="is an async function: on_start runs before the server's event loop"
    ):
        svc.App("t").realtime(on_start=connect)


def test_run_on_start_returns_the_value_once_per_call():
    calls = []

    def count() -> int:
        calls.append(1)
        return len(calls)

    workload = declare("endpoint", count)
    assert run_on_start(workload) == 1
    assert run_on_start(declare("function", None)) is None
    assert calls == [1]


def test_run_on_start_lets_the_users_exception_through():
    def broken() -> None:
        raise ConnectionError("database down")

    with pytest.raises(ConnectionError, match="database down"):
        run_on_start(declare("asgi", broken))


def test_an_on_start_object_returning_a_coroutine_is_a_type_error():
    class Sneaky:
        def __call__(self):
            async def later() -> None: ...

            return later()

    with pytest.raises(TypeError, match="returned an awaitable \\(coroutine\\); on_start runs before the event loop"):
        run_on_start(declare("endpoint", Sneaky()))
