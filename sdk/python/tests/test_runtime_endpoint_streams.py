"""Endpoints, called directly: generators as Server-Sent Events, TypedDict results, concurrency
limits, and on_start's value in the context."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import TypedDict

import pytest
import svc
from helpers import call_asgi
from runtime_helpers import http_call, run, serve, sse_events
from svc.runtime import create_app, run_on_start


@dataclass
class Point:
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: int
    where: Point


# Server-Sent Events


def test_a_generator_streams_one_sse_data_event_per_item(app):
    def count(n: int):
        for i in range(n):
            yield {"i": i}

    reply = call_asgi(serve("endpoint", count), "GET", "/", query="n=3")
    assert reply.status == 200 and reply.complete
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    assert "content-length" not in reply.headers
    assert reply.body == b'data: {"i":0}\n\ndata: {"i":1}\n\ndata: {"i":2}\n\n'
    assert call_asgi(serve("endpoint", count), "GET", "/", query="n=0").body == b""


def test_an_async_generator_streams_too(app):
    async def count(n: int = 2):
        for i in range(n):
            await asyncio.sleep(0)
            yield Point(i)

    assert sse_events(call_asgi(serve("endpoint", count), "GET", "/").body) == [
        ("message", {"x": 0, "y": 0}),
        ("message", {"x": 1, "y": 0}),
    ]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_each_event_is_sent_before_the_next_item_is_made(app, asynchronous):
    log: list[str] = []

    def produce():
        for i in range(3):
            log.append(f"made {i}")
            yield i

    async def produce_async():
        for item in produce():
            yield item

    class Chunks(list):  # the body messages, as the server receives them
        def append(self, chunk: bytes) -> None:
            log.append(f"sent {chunk.decode().strip()}")
            super().append(chunk)

    chunks = Chunks()
    run(http_call(serve("endpoint", produce_async if asynchronous else produce, name="produce"), chunks=chunks))
    assert log == ["made 0", "sent data: 0", "made 1", "sent data: 1", "made 2", "sent data: 2"]
    assert chunks == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n"]


def test_an_exception_midway_ends_the_stream_with_an_error_event(app, capfd):
    def count():
        yield 1
        raise RuntimeError("the secret detail")

    reply = call_asgi(serve("endpoint", count), "GET", "/")
    assert reply.status == 200 and reply.complete
    assert sse_events(reply.body) == [
        ("message", 1),
        ("error", {"error": {"code": "handler_error", "message": "RuntimeError in count; see the workload logs"}}),
    ]
    assert b"secret" not in reply.body
    err = capfd.readouterr().err
    assert "svc runtime: count failed on GET /:" in err and "RuntimeError: the secret detail" in err


def test_an_item_without_a_json_form_ends_the_stream_with_an_error_event(app, capfd):
    def items():
        yield "fine"
        yield object()

    events = sse_events(call_asgi(serve("endpoint", items), "GET", "/").body)
    assert events[0] == ("message", "fine")
    assert events[1][0] == "error" and events[1][1]["error"]["message"] == "TypeError in items; see the workload logs"


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_client_that_goes_away_stops_and_closes_the_generator(app, asynchronous):
    closed = threading.Event()
    made = []

    def forever():
        try:
            while True:
                made.append(len(made))
                yield made[-1]
                time.sleep(0.005)
        finally:
            closed.set()

    async def forever_async():
        try:
            while True:
                made.append(len(made))
                yield made[-1]
                await asyncio.sleep(0.005)
        finally:
            closed.set()

    async def scenario():
        gone = asyncio.Event()
        handler = serve("endpoint", forever_async if asynchronous else forever, name="forever")
        call = asyncio.ensure_future(http_call(handler, gone=gone))
        await asyncio.sleep(0.05)
        gone.set()
        return await asyncio.wait_for(call, 2)

    reply = run(scenario())
    assert closed.wait(10), "the generator was not closed"
    assert not reply.complete and made
    assert len(made) < 100


def test_head_on_a_generator_sends_only_the_headers(app):
    def items():
        yield 1

    reply = call_asgi(serve("endpoint", items, methods=["GET", "HEAD"]), "HEAD", "/")
    assert (reply.status, reply.body, reply.complete) == (200, b"", True)
    assert reply.headers["content-type"] == "text/event-stream"


# Typed results


def test_a_typeddict_result_is_a_json_object_with_its_fields_typed(app):
    def movie() -> Movie:
        return Movie(title="Alien", year=1979, where=Point(1, 2))

    reply = call_asgi(serve("endpoint", movie), "GET", "/")
    assert reply.json() == {"title": "Alien", "year": 1979, "where": {"x": 1, "y": 2}}


def test_a_typeddict_argument_is_checked_field_by_field(app):
    def rate(movie: Movie) -> int:
        return movie["year"]

    handler = serve("endpoint", rate)
    body = '{"movie": {"title": "Alien", "year": 1979, "where": {"x": 1}}}'
    assert call_asgi(handler, "POST", "/", body=body).json() == 1979
    reply = call_asgi(handler, "POST", "/", body='{"movie": {"title": "Alien", "year": "old", "where": {"x": 1}}}')
    assert reply.status == 422 and "movie.year" in reply.json()["error"]["message"]


# Concurrency


def _peak_of(handler, requests: int) -> int:
    async def scenario():
        await asyncio.gather(*(http_call(handler) for _ in range(requests)))

    run(scenario())
    return handler_peak["peak"]


handler_peak = {"now": 0, "peak": 0}
_peak_lock = threading.Lock()


def _enter() -> None:
    with _peak_lock:
        handler_peak["now"] += 1
        handler_peak["peak"] = max(handler_peak["peak"], handler_peak["now"])


def _leave() -> None:
    with _peak_lock:
        handler_peak["now"] -= 1


@pytest.fixture
def peak():
    handler_peak.update(now=0, peak=0)
    return handler_peak


@pytest.mark.parametrize("concurrency", [1, 3])
def test_async_handlers_run_at_most_concurrency_at_once(app, peak, concurrency):
    async def slow() -> None:
        _enter()
        await asyncio.sleep(0.02)
        _leave()

    assert _peak_of(serve("endpoint", slow, concurrency=concurrency), 8) == concurrency


@pytest.mark.parametrize("concurrency", [1, 3])
def test_sync_handlers_run_at_most_concurrency_at_once_in_threads(app, peak, concurrency):
    def slow() -> None:
        _enter()
        time.sleep(0.02)
        _leave()

    assert _peak_of(serve("endpoint", slow, concurrency=concurrency), 8) == concurrency


def test_health_needs_no_slot(app):
    release = None

    async def busy() -> None:
        await release.wait()

    async def scenario():
        nonlocal release
        release = asyncio.Event()
        handler = serve("endpoint", busy)
        call = asyncio.ensure_future(http_call(handler))
        await asyncio.sleep(0.01)
        health = await asyncio.wait_for(http_call(handler, path="/_svc/health"), 1)
        release.set()
        await call
        return health

    assert run(scenario()).status == 200


# on_start


def test_on_start_value_reaches_the_handler_through_the_context(app):
    calls = []

    def load() -> dict:
        calls.append(1)
        return {"model": "weights"}

    @app.endpoint(on_start=load)
    def predict(x: int, context: svc.Context) -> dict:
        return {"x": x, "model": context.on_start_value["model"]}

    value = run_on_start(predict.workload)
    handler = create_app(predict.workload, on_start_value=value)
    assert call_asgi(handler, "GET", "/", query="x=2").json() == {"x": 2, "model": "weights"}
    assert call_asgi(handler, "GET", "/", query="x=3").json() == {"x": 3, "model": "weights"}
    assert calls == [1]  # create_app and requests never run it again


def test_without_on_start_the_value_is_none(app):
    @app.endpoint
    def value(context: svc.Context) -> dict:
        return {"value": context.on_start_value}

    assert run_on_start(value.workload) is None
    assert call_asgi(create_app(value.workload), "GET", "/").json() == {"value": None}
