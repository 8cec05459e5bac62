"""Realtime workloads, called directly: one call per message, typed messages, replies, errors
that keep the socket open, 426 for plain HTTP, concurrency and on_start."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional, TypedDict, Union

import pytest
import svc
from helpers import call_asgi
from runtime_helpers import Session, run, serve


@dataclass
class Move:
    x: int
    y: int = 0


class Chat(TypedDict):
    user: str
    text: str


try:  # module level, so that the annotations of this file resolve
    import pydantic

    class Order(pydantic.BaseModel):
        item: str
        count: int
except ImportError:
    Order = None  # type: ignore[assignment,misc]


def talk(handler: Any, messages: list[str | bytes], expect: int, **options: Any) -> list[Any]:
    """Sends ``messages`` one after another and returns the first ``expect`` replies."""

    async def scenario():
        session = Session(serve("realtime", handler, **options), "/room/1")
        await session.accepted()
        for message in messages:
            session.send(message)
        replies = await session.replies(expect)
        assert await session.nothing_more(), "more replies than expected"
        await session.close()
        return replies

    return run(scenario())


def error(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}})


# Messages in


def test_each_message_calls_the_handler_once_and_its_result_goes_back():
    calls = []

    def shout(message: str) -> str:
        calls.append(message)
        return message.upper()

    assert talk(shout, ["a", "b", "c"], 3) == ["A", "B", "C"]
    assert calls == ["a", "b", "c"]


def test_text_arrives_as_str_and_binary_as_bytes_without_an_annotation():
    def kind(message):
        return f"{type(message).__name__}:{len(message)}"

    assert talk(kind, ["hé", b"\x00\x01\x02"], 2) == ["str:2", "bytes:3"]


@pytest.mark.parametrize(
    "annotation,frame,reply",
    [
        (str, b"\x00", error("invalid_arguments", "'message' takes text (str) messages, got a binary message")),
        (bytes, "hi", error("invalid_arguments", "'message' takes binary (bytes) messages, got a text message")),
        (Union[str, bytes], b"ok", "ok"),
        (Optional[bytes], b"ok", "ok"),
    ],
)
def test_a_frame_of_the_kind_the_annotation_leaves_out_gets_an_error(annotation, frame, reply):
    def handler(message) -> str:
        return message.decode() if isinstance(message, bytes) else message

    handler.__annotations__["message"] = annotation  # the parameter's value, not this file's text

    assert talk(handler, [frame], 1) == [reply]


def test_a_structured_annotation_decodes_and_checks_the_json():
    def move(step: Move) -> dict:
        return {"to": [step.x * 2, step.y]}

    assert talk(move, ['{"x": 2}', b'{"x": 1, "y": 5}'], 2) == ['{"to":[4,0]}', '{"to":[2,5]}']


GOOD = {Move: '{"x": 1}', dict: "{}", Chat: '{"user": "a", "text": "b"}'}


@pytest.mark.parametrize(
    "annotation,message,reply",
    [
        (Move, '{"x": "far"}', error("invalid_arguments", "argument 'step.x' must be an integer, got string \"far\"")),
        (
            Move,
            '{"y": 1, "z": 2}',
            error(
                "invalid_arguments",
                "2 problems: argument 'step' has unknown field 'z' "
                "(Move has x, y); argument 'step' is missing the field 'x' of Move",
            ),
        ),
        (Move, "[1, 2]", error("invalid_arguments", "argument 'step' must be a Move object, got array")),
        (dict, "3", error("invalid_arguments", "argument 'step' must be an object, got integer 3")),
        (list[int], '[1, "x"]', error("invalid_arguments", "argument 'step[1]' must be an integer, got string \"x\"")),
        (Chat, '{"user": "a"}', error("invalid_arguments", "argument 'step' is missing the field 'text' of Chat")),
        (dict, "{nope", None),
    ],
    ids=str,
)
def test_a_bad_message_gets_an_error_message_and_the_socket_stays_open(annotation, message, reply):
    def handler(step) -> str:
        return "ok"

    handler.__annotations__["step"] = annotation
    replies = talk(handler, [message, GOOD.get(annotation, "[2]")], 2)
    if reply is None:
        body = json.loads(replies[0])
        assert body["error"]["code"] == "invalid_json" and body["error"]["message"].startswith(
            "the message is not valid JSON"
        )
    else:
        assert replies[0] == reply
    assert replies[1] == "ok"  # the next message is answered as usual


def test_a_pydantic_message_is_validated_by_the_model():
    if Order is None:
        pytest.skip("pydantic is optional and not installed")

    def order(message: Order) -> Order:
        return Order(item=message.item, count=message.count * 2)

    good, bad = talk(order, ['{"item": "tea", "count": 2}', '{"item": "tea", "count": "x"}'], 2)
    assert json.loads(good) == {"item": "tea", "count": 4}
    assert json.loads(bad)["error"]["code"] == "invalid_arguments"


# Replies out


@pytest.mark.parametrize(
    "result,replies",
    [
        ("text", ["text"]),
        (b"\x00raw", [b"\x00raw"]),
        ({"a": 1}, ['{"a":1}']),
        (Move(1, 2), ['{"x":1,"y":2}']),
        (3.5, ["3.5"]),
        (True, ["true"]),
        ([1, "two", b"3"], ["1", "two", b"3"]),
        (("a", {"b": 2}), ["a", '{"b":2}']),
        ([], []),
    ],
)
def test_the_result_goes_back_and_an_iterable_as_one_message_per_item(result, replies):
    def handler(message: str):
        return result

    assert talk(handler, ["go"], len(replies)) == replies


def test_none_sends_nothing():
    def quiet(message: str) -> None:
        return None

    assert talk(quiet, ["a"], 0) == []


@pytest.mark.parametrize("asynchronous", [False, True], ids=["generator", "async generator"])
def test_generators_send_each_item_as_it_is_made(asynchronous):
    def count(message: str):
        for i in range(int(message)):
            yield {"i": i}

    async def count_async(message: str):
        for i in range(int(message)):
            await asyncio.sleep(0)
            yield {"i": i}

    assert talk(count_async if asynchronous else count, ["2", "1"], 3) == ['{"i":0}', '{"i":1}', '{"i":0}']


def test_async_handlers_are_awaited():
    async def later(message: str) -> str:
        await asyncio.sleep(0)
        return f"later {message}"

    assert talk(later, ["x"], 1) == ["later x"]


def test_sync_handlers_run_in_worker_threads():
    def where(message: str) -> str:
        return threading.current_thread().name

    assert talk(where, ["x"], 1)[0].startswith("svc-where")


# Failures


def test_an_exception_sends_handler_error_and_the_socket_stays_open(capfd):
    def fragile(message: str) -> str:
        if message == "boom":
            raise ValueError("the secret detail")
        return message

    replies = talk(fragile, ["boom", "fine"], 2)
    assert replies == [error("handler_error", "ValueError in fragile; see the workload logs"), "fine"]
    err = capfd.readouterr().err
    assert "svc runtime: fragile failed on a message at /room/1:" in err
    assert "ValueError: the secret detail" in err and "Traceback" in err


def test_a_generator_failing_midway_sends_its_items_then_the_error():
    def items(message: str):
        yield "one"
        raise RuntimeError("midway")

    assert talk(items, ["go"], 2) == ["one", error("handler_error", "RuntimeError in items; see the workload logs")]


def test_a_result_without_a_json_form_is_a_handler_error():
    def odd(message: str):
        return object()

    assert talk(odd, ["x"], 1) == [error("handler_error", "TypeError in odd; see the workload logs")]


def test_a_client_closing_mid_stream_stops_the_generator():
    closed = threading.Event()

    def forever(message: str):
        try:
            while True:
                yield "tick"
                time.sleep(0.002)
        finally:
            closed.set()

    async def scenario():
        session = Session(serve("realtime", forever), "/")
        await session.accepted()
        session.send("go")
        await session.reply()
        await session.close()

    run(scenario())
    assert closed.wait(10)


# HTTP


def test_plain_http_gets_426_upgrade_required():
    def echo(message: str) -> str:
        return message

    reply = call_asgi(serve("realtime", echo), "GET", "/")
    assert reply.status == 426 and reply.headers["upgrade"] == "websocket"
    body = reply.json()["error"]
    assert body["code"] == "upgrade_required"
    assert body["message"].startswith("echo is a realtime workload: connect with a WebSocket client")
    health = call_asgi(serve("realtime", echo), "GET", "/_svc/health")
    assert (health.status, health.json()) == (200, {"status": "ok", "workload": "echo"})


# Context, on_start and concurrency


def test_the_context_describes_the_session_and_carries_the_on_start_value():
    def warm() -> str:
        return "model"

    def handler(message: str, context: svc.Context) -> dict:
        return {"path": context.path, "value": context.on_start_value, "workload": context.workload}

    assert json.loads(talk(handler, ["x"], 1, on_start=warm)[0]) == {
        "path": "/room/1",
        "value": "model",
        "workload": "handler",
    }


@pytest.mark.parametrize("limit", [1, 2])
def test_at_most_concurrent_requests_sessions_at_once(limit):
    now = peak = 0

    async def counted(message: str) -> str:
        nonlocal now, peak
        now += 1
        peak = max(peak, now)
        await asyncio.sleep(0.02)
        now -= 1
        return "done"

    async def one_session(web):
        session = Session(web, "/")
        await session.next(timeout=5)  # accepted once a slot is free
        session.send("x")
        assert await session.reply(timeout=5) == "done"
        await session.close()

    async def scenario():
        web = serve("realtime", counted, concurrent_requests=limit)
        await asyncio.gather(*(one_session(web) for _ in range(4)))

    run(scenario())
    assert peak == limit
