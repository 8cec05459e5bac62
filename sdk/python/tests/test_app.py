"""svc.App and its decorators: forms, handles, names and signature checks."""

from __future__ import annotations

import asyncio
import inspect

import pytest
import svc


def test_app_keeps_its_name_and_starts_empty():
    app = svc.App("quickstart")
    assert app.name == "quickstart"
    assert app.workloads == ()


@pytest.mark.parametrize("name", ["", "has space", "Quickstart", "quick_start", "-quick", None, 3])
def test_app_name_is_checked(name):
    with pytest.raises(svc.InvalidOptionError, match=r"^svc\.App: name="):
        svc.App(name)


@pytest.mark.parametrize("kind", ["function", "endpoint", "realtime"])
def test_bare_and_called_decorators_both_register(app, kind):
    decorator = getattr(app, kind)

    @decorator
    def bare(message: str) -> str:
        return message

    @decorator()
    def called(message: str) -> str:
        return message

    assert [(w.name, w.kind) for w in app.workloads] == [("bare", kind), ("called", kind)]


def test_a_decorated_function_stays_callable_and_local_is_the_same_call(app):
    @app.function
    def add(x: int, y: int = 1) -> int:
        """Adds."""
        return x + y

    assert add(2) == 3
    assert add.local(2, y=5) == 7
    assert add.__name__ == "add" and add.__doc__ == "Adds."
    assert str(inspect.signature(add)) == "(x: 'int', y: 'int' = 1) -> 'int'"
    assert add.workload.target(1, 1) == 2


def test_an_async_function_returns_its_coroutine(app):
    @app.endpoint
    async def slow(x: int) -> int:
        return x * 2

    assert asyncio.run(slow.local(4)) == 8


def test_remote_says_where_remote_calls_come_from(app):
    @app.function
    def square(x: int) -> int:
        return x * x

    with pytest.raises(svc.Error, match=r"svc run <module>:square") as caught:
        square.remote(3)
    assert not isinstance(caught.value, svc.InvalidOptionError)
    assert ".local()" in str(caught.value)


def test_workloads_keep_declaration_order_and_their_details(app):
    image = svc.Image(python_version="3.11")

    @app.endpoint(name="second", image=image, route="/b")
    def b() -> None: ...

    @app.function
    def a() -> None: ...

    first, second = app.workloads
    assert (first.name, first.kind, first.image, first.target) == ("second", "endpoint", image, b.workload.target)
    assert (second.name, second.image) == ("a", None)
    with pytest.raises(TypeError):
        first.options["cpu"] = 2  # read-only


def test_a_handle_can_be_declared_again_under_another_name(app):
    @app.function
    def f() -> int:
        return 1

    g = app.endpoint(name="g")(f)
    assert g.workload.target is f.workload.target


def test_a_lambda_needs_a_name(app):
    with pytest.raises(svc.InvalidOptionError, match=r"cannot name the workload after '<lambda>'.*pass name="):
        app.function(lambda: 1)
    assert app.function(name="one")(lambda: 1)() == 1


def test_a_private_function_name_loses_its_underscores(app):
    def _helper() -> None: ...

    assert app.function(_helper).workload.name == "helper"


@pytest.mark.parametrize("target", [42, object(), int, print])
def test_only_functions_can_be_decorated(app, target):
    with pytest.raises(svc.InvalidOptionError, match=r"@app\.function decorates a function"):
        app.function(target)


def test_a_positional_string_hints_at_the_name_keyword(app):
    with pytest.raises(svc.InvalidOptionError, match=r"write @app\.endpoint\(name='greet'\)"):
        app.endpoint("greet")


def test_endpoint_rejects_positional_only_parameters(app):
    with pytest.raises(svc.InvalidOptionError, match=r"parameter 'x' is positional-only"):

        @app.endpoint
        def f(x: int, /) -> int:
            return x


def test_endpoint_rejects_star_args(app):
    with pytest.raises(svc.InvalidOptionError, match=r"\*rest cannot be filled from a JSON object"):

        @app.endpoint
        def f(x: int, *rest: int) -> int:
            return x


def test_endpoint_accepts_kwargs_and_functions_accept_star_args(app):
    @app.endpoint
    def e(x: int, **extra: str) -> int:
        return x

    @app.function
    def f(*values: int) -> int:
        return sum(values)

    assert f(1, 2) == 3


@pytest.mark.parametrize(
    "source",
    [
        "def h() -> str: ...",
        "def h(a: str, b: str) -> str: ...",
        "def h(*, message: str) -> str: ...",
    ],
)
def test_realtime_needs_exactly_one_message_parameter(app, source):
    namespace: dict = {}
    exec(source, namespace)
    with pytest.raises(svc.InvalidOptionError, match="must take one incoming message"):
        app.realtime(namespace["h"])


def test_realtime_accepts_a_message_and_a_context(app):
    @app.realtime
    def echo(message: str, context: svc.Context | None = None) -> str:
        return message

    assert echo("hi") == "hi"


async def web_app(scope, receive, send):
    await send({"type": "seen", "path": scope["path"]})


def test_asgi_wraps_an_app_that_still_serves(app):
    handle = app.asgi(name="web")(web_app)
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(handle({"path": "/x"}, None, send))
    assert sent == [{"type": "seen", "path": "/x"}]
    assert app.workloads[0].kind == "asgi" and app.workloads[0].target is web_app


def test_asgi_reads_attributes_through_to_the_application(app):
    class Framework:
        routes = ["/a"]

        async def __call__(self, scope, receive, send): ...

    handle = app.asgi(name="web")(Framework())
    assert handle.routes == ["/a"]


def test_asgi_defaults_its_name_to_the_function_name_or_asks_for_one(app):
    assert app.asgi(web_app).workload.name == "web-app"

    class Framework:
        async def __call__(self, scope, receive, send): ...

    with pytest.raises(svc.InvalidOptionError, match="has no __name__ to name the workload: pass name="):
        app.asgi()(Framework())


@pytest.mark.parametrize("target", [42, "web", type("Klass", (), {"__call__": lambda self: None})])
def test_asgi_needs_an_application_instance(app, target):
    with pytest.raises(svc.InvalidOptionError, match="wraps an ASGI application instance"):
        app.asgi(name="web")(target)
