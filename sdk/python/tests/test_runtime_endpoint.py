"""The runtime's ASGI app for endpoints, called directly (no uvicorn): arguments, results, errors."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Literal

import pytest
import svc
from helpers import call_asgi
from svc.runtime import create_app


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Segment:
    start: Point
    end: Point


@dataclass
class Greeting:
    message: str
    length: int


try:  # module level, so that the string annotations of this file resolve
    import pydantic

    class User(pydantic.BaseModel):
        name: str
        age: int
except ImportError:
    User = None  # type: ignore[assignment,misc]


def serve(handler, **options):
    """The runtime ASGI app for ``handler`` declared as an endpoint (of a fresh App)."""
    return create_app(svc.App("test").endpoint(**options)(handler).workload)


def error_of(reply) -> tuple[int, str, str]:
    body = reply.json()
    assert list(body) == ["error"] and list(body["error"]) == ["code", "message"]
    return reply.status, body["error"]["code"], body["error"]["message"]


# Health


def test_health_answers_first_even_when_arguments_are_required(app):
    def needs(x: int) -> int:
        raise AssertionError("the handler must not run for a health check")

    reply = call_asgi(serve(needs), "GET", "/_svc/health")
    assert reply.status == 200
    assert reply.json() == {"status": "ok", "workload": "needs"}
    assert reply.headers["content-type"] == "application/json"


def test_head_sends_headers_without_a_body(app):
    def hello() -> dict:
        return {"a": 1}

    reply = call_asgi(serve(hello), "HEAD", "/")
    assert reply.status == 200 and reply.body == b"" and reply.headers["content-length"] == "7"


# JSON bodies


def test_json_body_fields_become_keyword_arguments(app):
    def greet(name: str, excited: bool = False) -> Greeting:
        message = f"Hello, {name}{'!' if excited else '.'}"
        return Greeting(message, len(message))

    reply = call_asgi(serve(greet), "POST", "/greet", body='{"name": "Ada", "excited": true}')
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == {"message": "Hello, Ada!", "length": 11}
    assert reply.headers["content-length"] == str(len(reply.body))


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_put_and_patch_also_take_the_body(app, method):
    def echo(x: int) -> int:
        return x

    assert call_asgi(serve(echo), method, "/", body='{"x": 5}').json() == 5


def test_an_empty_body_means_no_arguments_and_defaults_apply(app):
    def hello(name: str = "world") -> str:
        return f"Hello, {name}"

    assert call_asgi(serve(hello), "POST", "/", body=b"").json() == "Hello, world"
    assert call_asgi(serve(hello), "POST", "/", body=b"  \n").json() == "Hello, world"


@pytest.mark.parametrize("body", [b'{"name":', b"not json", b'{"x": NaN}', b"\xff\xfe{"])
def test_unparseable_json_is_400_invalid_json(app, body):
    def f(**kw) -> None: ...

    status, code, message = error_of(call_asgi(serve(f), "POST", "/", body=body))
    assert (status, code) == (400, "invalid_json")
    assert message.startswith("the request body is not valid JSON")


@pytest.mark.parametrize("body,got", [(b"[1, 2]", "array"), (b'"x"', "string"), (b"3", "integer"), (b"null", "null")])
def test_a_body_that_is_not_an_object_is_422(app, body, got):
    def f(x: int = 0) -> None: ...

    status, code, message = error_of(call_asgi(serve(f), "POST", "/", body=body))
    assert (status, code) == (422, "invalid_arguments")
    assert message.endswith(f"got {got}")


def test_a_missing_required_argument_is_named(app):
    def f(name: str, age: int, city: str = "x") -> None: ...

    status, code, message = error_of(call_asgi(serve(f), "POST", "/", body='{"age": 3}'))
    assert (status, code, message) == (422, "invalid_arguments", "missing required argument 'name'")
    _, _, message = error_of(call_asgi(serve(f), "POST", "/", body="{}"))
    assert message == "2 problems: missing required argument 'name'; missing required argument 'age'"


def test_every_problem_is_reported_at_once_each_naming_its_field(app):
    def greet(name: str, excited: bool = False) -> None: ...

    status, code, message = error_of(call_asgi(serve(greet), "POST", "/", body='{"excited": "yes"}'))
    assert (status, code) == (422, "invalid_arguments")
    assert (
        message
        == "2 problems: missing required argument 'name'; argument 'excited' must be a boolean, got string \"yes\""
    )


def test_problems_come_missing_first_then_unknown_then_wrong_types(app):
    def f(name: str, age: int, excited: bool = False, count: int = 1) -> None: ...

    body = '{"count": "many", "nmae": "Ada", "excited": 1, "context": {}}'
    _, _, message = error_of(call_asgi(serve(f), "POST", "/", body=body))
    assert message == (
        "6 problems: missing required argument 'name'; missing required argument 'age'; "
        "unknown argument 'nmae' (did you mean 'name'? it takes name, age, excited, count); "
        "argument 'context' is reserved: svc fills it in, do not send it; "
        "argument 'count' must be an integer, got string \"many\"; "
        "argument 'excited' must be a boolean, got integer 1"
    )


def test_every_bad_item_and_field_inside_an_argument_is_reported(app):
    def f(items: list[int] = [], point: Point | None = None, segment: Segment | None = None) -> None: ...  # noqa: B006

    body = json.dumps(
        {
            "items": [1, "2", 3, None],
            "point": {"y": "up", "z": 0},
            "segment": {"start": {"x": "a"}, "end": {"x": 1, "y": "b"}},
        }
    )
    _, _, message = error_of(call_asgi(serve(f), "POST", "/", body=body))
    assert message.split("; ") == [
        "7 problems: argument 'items[1]' must be an integer, got string \"2\"",
        "argument 'items[3]' must be an integer, got null",
        "argument 'point' has unknown field 'z' (Point has x, y)",
        "argument 'point' is missing the field 'x' of Point",
        "argument 'point.y' must be an integer, got string \"up\"",
        "argument 'segment.start.x' must be an integer, got string \"a\"",
        "argument 'segment.end.y' must be an integer, got string \"b\"",
    ]


def test_an_unknown_field_is_named_with_a_suggestion(app):
    def f(name: str) -> None: ...

    status, code, message = error_of(call_asgi(serve(f), "POST", "/", body='{"nmae": "Ada"}'))
    assert (status, code) == (422, "invalid_arguments")
    assert (
        message
        == "2 problems: missing required argument 'name'; unknown argument 'nmae' (did you mean 'name'? it takes name)"
    )


def test_kwargs_accept_unknown_fields_checked_by_their_annotation(app):
    def f(a: int, **rest: int) -> dict:
        return {"a": a, **rest}

    handler = serve(f)
    assert call_asgi(handler, "POST", "/", body='{"a": 1, "b": 2}').json() == {"a": 1, "b": 2}
    _, code, message = error_of(call_asgi(handler, "POST", "/", body='{"a": 1, "b": "two"}'))
    assert (code, message) == ("invalid_arguments", "argument 'b' must be an integer, got string \"two\"")


@pytest.mark.parametrize(
    "annotation_body,message",
    [
        ('{"n": "3"}', "argument 'n' must be an integer, got string \"3\""),
        ('{"n": true}', "argument 'n' must be an integer, got boolean true"),
        ('{"n": 1.5}', "argument 'n' must be an integer, got number 1.5"),
        ('{"f": "x"}', "argument 'f' must be a number, got string \"x\""),
        ('{"s": 3}', "argument 's' must be a string, got integer 3"),
        ('{"b": 1}', "argument 'b' must be a boolean, got integer 1"),
        ('{"items": [1, "2"]}', "argument 'items[1]' must be an integer, got string \"2\""),
        ('{"items": {"a": 1}}', "argument 'items' must be an array, got object"),
        ('{"scores": {"a": "x"}}', "argument 'scores.a' must be a number, got string \"x\""),
        ('{"maybe": "x"}', "argument 'maybe' must be an integer or null, got string \"x\""),
        ('{"mode": "c"}', 'argument \'mode\' must be one of "a", "b", got string "c"'),
        ('{"point": {"y": 1}}', "argument 'point' is missing the field 'x' of Point"),
        ('{"point": {"x": 1, "z": 2}}', "argument 'point' has unknown field 'z' (Point has x, y)"),
        ('{"point": [1, 2]}', "argument 'point' must be a Point object, got array"),
        (
            '{"segment": {"start": {"x": 1}, "end": {"x": "far"}}}',
            "argument 'segment.end.x' must be an integer, got string \"far\"",
        ),
    ],
)
def test_a_value_of_the_wrong_json_type_is_422_naming_the_field(app, annotation_body, message):
    def f(
        n: int = 0,
        f: float = 0.0,
        s: str = "",
        b: bool = False,
        items: list[int] = [],  # noqa: B006
        scores: dict[str, float] = {},
        maybe: int | None = None,  # noqa: B006
        mode: Literal["a", "b"] = "a",
        point: Point = Point(0),
        segment: Segment | None = None,
    ) -> None: ...

    status, code, got = error_of(call_asgi(serve(f), "POST", "/", body=annotation_body))
    assert (status, code, got) == (422, "invalid_arguments", message)


def test_values_are_converted_to_the_annotated_types(app):
    seen = {}

    def f(
        n: int,
        f: float,
        maybe: int | None,
        point: Point,
        segment: Segment,
        pair: tuple[int, str],
        tags: set[str],
        raw: bytes,
        anything=None,
    ) -> None:
        seen.update(locals())

    body = {
        "n": 2.0,
        "f": 1,
        "maybe": None,
        "point": {"x": 1},
        "segment": {"start": {"x": 1}, "end": {"x": 2, "y": 3}},
        "pair": [1, "a"],
        "tags": ["a", "a", "b"],
        "raw": "aGk=",
        "anything": {"k": [1]},
    }
    reply = call_asgi(serve(f), "POST", "/", body=json.dumps(body))
    assert reply.status == 200, reply.body
    assert seen["n"] == 2 and type(seen["n"]) is int
    assert seen["f"] == 1.0 and type(seen["f"]) is float
    assert seen["maybe"] is None
    assert seen["point"] == Point(1, 0)
    assert seen["segment"] == Segment(Point(1), Point(2, 3))
    assert seen["pair"] == (1, "a")
    assert seen["tags"] == {"a", "b"}
    assert seen["raw"] == b"hi"
    assert seen["anything"] == {"k": [1]}


def test_a_pydantic_parameter_is_validated_by_the_model(app):
    if User is None:
        pytest.skip("pydantic is optional and not installed")

    def f(user: User) -> User:
        return user

    handler = serve(f)
    assert call_asgi(handler, "POST", "/", body='{"user": {"name": "a", "age": 3}}').json() == {"name": "a", "age": 3}
    status, code, message = error_of(call_asgi(handler, "POST", "/", body='{"user": {"name": "a", "age": "old"}}'))
    assert (status, code) == (422, "invalid_arguments")
    assert message.startswith("argument 'user' is not a valid User: age:")


# Query strings


def test_get_query_parameters_are_converted_by_annotation(app):
    def f(n: int, x: float, flag: bool, name: str, maybe: int | None = None, mode: Literal["a", "b"] = "a") -> dict:
        return {"n": n, "x": x, "flag": flag, "name": name, "maybe": maybe, "mode": mode}

    reply = call_asgi(serve(f), "GET", "/", query="n=-3&x=2.5&flag=yes&name=Ada%20L&maybe=4&mode=b")
    assert reply.json() == {"n": -3, "x": 2.5, "flag": True, "name": "Ada L", "maybe": 4, "mode": "b"}


@pytest.mark.parametrize(
    "text,value", [("true", True), ("1", True), ("YES", True), ("false", False), ("0", False), ("no", False)]
)
def test_booleans_from_the_query(app, text, value):
    def f(flag: bool) -> bool:
        return flag

    assert call_asgi(serve(f), "GET", "/", query=f"flag={text}").json() is value


@pytest.mark.parametrize(
    "query,message",
    [
        ("n=abc", "query parameter 'n' must be an integer, got 'abc'"),
        ("n=1.5", "query parameter 'n' must be an integer, got '1.5'"),
        ("x=fast", "query parameter 'x' must be a number, got 'fast'"),
        ("x=inf", "query parameter 'x' must be a number, got 'inf'"),
        ("flag=maybe", "query parameter 'flag' must be a boolean, got 'maybe'"),
        ("ids=1&ids=two", "query parameter 'ids[1]' must be an integer, got 'two'"),
        ("n=1&n=2", "query parameter 'n' is given 2 times: give it once"),
        ("point=nope", "query parameter 'point' must be a Point object written as JSON, got 'nope'"),
        ("name=x", "unknown argument 'name' (it takes n, x, flag, ids, point)"),
    ],
)
def test_bad_query_values_are_422_naming_parameter_and_type(app, query, message):
    def f(n: int = 0, x: float = 0, flag: bool = False, ids: list[int] = [], point: Point | None = None) -> None: ...  # noqa: B006

    status, code, got = error_of(call_asgi(serve(f), "GET", "/", query=query))
    assert (status, code, got) == (422, "invalid_arguments", message)


def test_every_bad_query_value_is_reported_at_once(app):
    def f(name: str, n: int = 0, ids: list[int] = [], x: float = 0) -> None: ...  # noqa: B006

    _, code, message = error_of(call_asgi(serve(f), "GET", "/", query="n=abc&ids=1&ids=two&ids=x&x=1&x=2&nme=Ada"))
    assert code == "invalid_arguments"
    assert message.split("; ") == [
        "6 problems: missing required argument 'name'",
        "unknown argument 'nme' (did you mean 'name'? it takes name, n, ids, x)",
        "query parameter 'n' must be an integer, got 'abc'",
        "query parameter 'ids[1]' must be an integer, got 'two'",
        "query parameter 'ids[2]' must be an integer, got 'x'",
        "query parameter 'x' is given 2 times: give it once",
    ]


def test_query_lists_repeat_the_key_and_complex_values_are_json(app):
    def f(ids: list[int], point: Point, names: set[str] = set(), raw: bytes = b"") -> dict:  # noqa: B006
        return {"ids": ids, "point": point, "names": sorted(names), "raw": raw.decode()}

    reply = call_asgi(serve(f), "GET", "/", query='ids=1&ids=2&point={"x":%205}&names=b&names=a&raw=aGk%3D')
    assert reply.json() == {"ids": [1, 2], "point": {"x": 5, "y": 0}, "names": ["a", "b"], "raw": "hi"}


@pytest.mark.parametrize("method", ["DELETE", "OPTIONS"])
def test_delete_and_options_read_the_query_and_ignore_the_body(app, method):
    def f(n: int = 1) -> int:
        return n

    assert call_asgi(serve(f), method, "/", query="n=7", body='{"n": 9}').json() == 7


def test_a_missing_query_parameter_is_named(app):
    def f(name: str) -> str:
        return name

    assert error_of(call_asgi(serve(f), "GET", "/"))[2] == "missing required argument 'name'"


# Calling


def test_sync_handlers_run_in_a_worker_thread(app):
    def where() -> str:
        return threading.current_thread().name

    assert call_asgi(serve(where), "GET", "/").json().startswith("svc-where")


def test_async_handlers_are_awaited_on_the_loop(app):
    async def slow(n: int = 2) -> int:
        await asyncio.sleep(0)
        return n * 2

    assert call_asgi(serve(slow), "GET", "/", query="n=4").json() == 8


def test_a_context_parameter_is_filled_in_by_the_runtime(app):
    def whoami(context: svc.Context, n: int = 0) -> dict:
        return {
            "workload": context.workload,
            "method": context.method,
            "path": context.path,
            "request_id": context.request_id,
            "agent": context.headers.get("user-agent"),
        }

    reply = call_asgi(serve(whoami), "GET", "/who", headers=[("X-Request-Id", "r-1"), ("User-Agent", "t")])
    assert reply.json() == {"workload": "whoami", "method": "GET", "path": "/who", "request_id": "r-1", "agent": "t"}
    _, code, message = error_of(call_asgi(serve(whoami, name="w2"), "POST", "/", body='{"context": 1}'))
    assert (code, message) == ("invalid_arguments", "argument 'context' is reserved: svc fills it in, do not send it")


# Results


@pytest.mark.parametrize(
    "value,body",
    [
        (None, "null"),
        ("hi", '"hi"'),
        (3, "3"),
        (2.5, "2.5"),
        (True, "true"),
        ([1, "a"], '[1,"a"]'),
        ({"k": Point(1)}, '{"k":{"x":1,"y":0}}'),
        (Point(2, 3), '{"x":2,"y":3}'),
        ({"é": "ü"}, '{"é":"ü"}'),
    ],
)
def test_results_are_sent_as_json(app, value, body):
    def f():
        return value

    reply = call_asgi(serve(f), "GET", "/")
    assert (reply.status, reply.headers["content-type"], reply.body.decode()) == (200, "application/json", body)


def test_a_pydantic_result_uses_model_dump(app):
    pydantic = pytest.importorskip("pydantic", reason="pydantic is optional")

    class Out(pydantic.BaseModel):
        when: __import__("datetime").date

    def f():
        return Out(when="2024-01-02")

    assert call_asgi(serve(f), "GET", "/").json() == {"when": "2024-01-02"}


def test_bytes_are_sent_raw_as_octet_stream(app):
    def f() -> bytes:
        return b"\x00\x01raw"

    reply = call_asgi(serve(f), "GET", "/")
    assert (reply.status, reply.headers["content-type"], reply.body) == (
        200,
        "application/octet-stream",
        b"\x00\x01raw",
    )


# Failures in user code


def test_an_exception_is_500_handler_error_with_the_traceback_on_stderr(app, capfd):
    def explode(x: int = 1) -> int:
        raise ValueError("the secret detail")

    reply = call_asgi(serve(explode), "GET", "/boom")
    assert error_of(reply) == (500, "handler_error", "ValueError in explode; see the workload logs")
    assert b"secret" not in reply.body
    err = capfd.readouterr().err
    assert "svc runtime: explode failed on GET /boom:" in err
    assert "Traceback (most recent call last)" in err
    assert 'raise ValueError("the secret detail")' in err and "ValueError: the secret detail" in err
    first_frame = next(line for line in err.splitlines() if line.strip().startswith("File "))
    assert "test_runtime_endpoint.py" in first_frame  # the user's frame comes first


def test_a_result_without_a_json_form_is_500(app, capfd):
    def f():
        return object()

    assert error_of(call_asgi(serve(f), "GET", "/")) == (500, "handler_error", "TypeError in f; see the workload logs")
    assert "a object cannot be sent as JSON: return a dataclass" in capfd.readouterr().err


# The app itself


def test_create_app_refuses_what_is_not_a_workload(app):
    with pytest.raises(ValueError, match="create_app takes a svc workload"):
        create_app("greet")


def test_lifespan_messages_are_acknowledged(app):
    def f() -> None: ...

    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent = []

    async def receive():
        return messages.pop(0)

    async def send(message):
        sent.append(message["type"])

    asyncio.run(serve(f)({"type": "lifespan"}, receive, send))
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
