"""Function workloads, called directly: pickled calls in, NDJSON frames out, with each call's
prints captured for that call alone."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import pickle
import sys
import threading

import pytest
import svc
from runtime_helpers import http_call, ndjson, run, serve

CALL = [("Content-Type", "application/vnd.svc.call+pickle")]


def call(handler, *args, **kwargs):
    """POSTs a pickled call; returns the reply and its frames."""
    body = pickle.dumps({"args": list(args), "kwargs": kwargs})
    reply = run(http_call(handler, "POST", "/", body=body, headers=CALL))
    return reply, ndjson(reply.body) if reply.status == 200 else None


def unpickle(frame):
    return pickle.loads(base64.b64decode(frame["pickle"]))


class Unpicklable(Exception):
    def __init__(self, a, b):  # pickle calls Unpicklable(*args): one argument is missing
        super().__init__(f"{a} {b}")


# Calls and results


def test_a_call_returns_the_pickled_result_after_its_log_lines():
    def square(x: int, shout: bool = False) -> int:
        print(f"squaring {x}")
        print("to stderr", file=sys.stderr)
        return x * x

    reply, frames = call(serve("function", square), 7, shout=True)
    assert reply.status == 200 and reply.complete
    assert reply.headers["content-type"] == "application/x-ndjson"
    assert frames[:-1] == [
        {"type": "log", "stream": "stdout", "line": "squaring 7"},
        {"type": "log", "stream": "stderr", "line": "to stderr"},
    ]
    assert frames[-1]["type"] == "result" and unpickle(frames[-1]) == 49


def test_async_functions_are_awaited_and_their_prints_captured():
    async def later(x: int) -> list:
        print("before")
        await asyncio.sleep(0)
        print("after", end="")  # an unfinished last line is sent at the end
        return [x]

    _, frames = call(serve("function", later), 3)
    assert [f.get("line") for f in frames[:-1]] == ["before", "after"]
    assert unpickle(frames[-1]) == [3]


def test_results_that_only_cloudpickle_can_pickle_come_back_when_it_is_installed():
    pytest.importorskip("cloudpickle", reason="cloudpickle is optional; results then use the standard pickle")

    def make():
        return lambda y: y + 1

    _, frames = call(serve("function", make))
    assert unpickle(frames[-1])(1) == 2


# Failures


def test_an_exception_comes_back_pickled_with_its_remote_traceback(capfd):
    def fail(x: int) -> int:
        raise ValueError(f"bad {x}")

    reply, frames = call(serve("function", fail), 4)
    assert reply.status == 200
    (frame,) = frames
    assert frame["type"] == "error" and frame["exception"] == "ValueError: bad 4"
    error = unpickle(frame)
    assert isinstance(error, ValueError) and error.args == ("bad 4",)
    assert frame["traceback"].startswith("Traceback (most recent call last):")
    assert 'raise ValueError(f"bad {x}")' in frame["traceback"]
    assert "svc/runtime" not in frame["traceback"]  # the user's frames only
    assert "svc runtime: fail raised:" in capfd.readouterr().err


def test_an_exception_that_cannot_be_pickled_comes_back_as_text():
    def fail() -> None:
        raise Unpicklable("a", "b")

    _, (frame,) = call(serve("function", fail))
    assert frame["pickle"] is None and frame["exception"].endswith("Unpicklable: a b")
    assert "Unpicklable" in frame["traceback"]


def test_a_result_that_cannot_be_pickled_is_an_error_frame():
    def lock():
        return threading.Lock()

    _, (frame,) = call(serve("function", lock))
    assert frame["type"] == "error" and "lock" in frame["exception"]


def test_sys_exit_in_a_call_is_an_error_not_the_end_of_the_worker():
    def leave():
        sys.exit(3)

    _, (frame,) = call(serve("function", leave))
    assert frame["exception"] == "SystemExit: 3" and unpickle(frame).code == 3


# Requests that are not calls


@pytest.mark.parametrize(
    "body,message",
    [
        (b"not a pickle", "the request body is not a pickled call ("),
        (
            pickle.dumps([1, 2]),
            "a pickled call is a dict with the keys 'args' and 'kwargs' (and 'method' for a class), got list",
        ),
        (
            pickle.dumps({"args": []}),
            "a pickled call is a dict with the keys 'args' and 'kwargs' (and 'method' for a class), got ['args']",
        ),
        (pickle.dumps({"args": 1, "kwargs": {}}), "'args' of a pickled call must be a list or tuple, got int"),
        (pickle.dumps({"args": [], "kwargs": {1: 2}}), "'kwargs' of a pickled call must be a dict with string keys"),
    ],
)
def test_a_body_that_is_not_a_pickled_call_is_400_bad_request(body, message):
    def f() -> None: ...

    reply = run(http_call(serve("function", f), "POST", "/", body=body, headers=CALL))
    assert reply.status == 400 and reply.json()["error"]["code"] == "bad_request"
    assert reply.json()["error"]["message"].startswith(message)


def test_other_methods_are_405_and_other_content_types_400():
    def f() -> None: ...

    handler = serve("function", f)
    reply = run(http_call(handler, "GET", "/"))
    assert (reply.status, reply.headers["allow"], reply.json()["error"]["code"]) == (405, "POST", "method_not_allowed")
    reply = run(http_call(handler, "POST", "/", body=b"{}", headers=[("Content-Type", "text/plain")]))
    assert reply.status == 400
    assert reply.json()["error"]["message"] == (
        "a function call is sent as application/vnd.svc.call+pickle (or application/json), not text/plain"
    )
    assert run(http_call(handler, "GET", "/_svc/health")).json() == {"status": "ok", "workload": "f"}


@dataclasses.dataclass
class Point:
    """At module level: the annotations of a function are resolved in its module."""

    x: int
    y: int


def test_a_json_call_binds_its_arguments_by_their_types_and_answers_its_result_as_json():
    def shift(p: Point, by: int = 1) -> Point:
        return Point(p.x + by, p.y + by)

    handler = serve("function", shift)
    json_call = [("Content-Type", "application/json")]
    reply = run(http_call(handler, "POST", "/", body=b'{"p": {"x": 1, "y": 2}, "by": 10}', headers=json_call))
    assert reply.status == 200
    assert [json.loads(line) for line in reply.body.splitlines()] == [{"type": "result", "json": {"x": 11, "y": 12}}]
    refused = run(http_call(handler, "POST", "/", body=b'{"p": {"x": "one", "y": 2}}', headers=json_call))
    assert (refused.status, refused.json()["error"]["code"]) == (422, "invalid_arguments")
    assert "p.x" in refused.json()["error"]["message"]


# Output capture


def test_concurrent_calls_keep_their_output_apart():
    turn = {name: threading.Event() for name in ("a1", "b1", "a2", "b2")}

    def chatty(name: str) -> str:
        for step in ("1", "2"):
            turn[name + step].wait(2)
            print(f"{name} says {step}")
            nxt = {"a1": "b1", "b1": "a2", "a2": "b2"}.get(name + step)
            if nxt:
                turn[nxt].set()
        return name

    async def scenario():
        handler = serve("function", chatty)
        calls = [
            http_call(handler, "POST", "/", body=pickle.dumps({"args": [n], "kwargs": {}}), headers=CALL)
            for n in ("a", "b")
        ]
        turn["a1"].set()
        return await asyncio.gather(*calls)

    first, second = run(scenario())
    assert [f.get("line") for f in ndjson(first.body)] == ["a says 1", "a says 2", None]
    assert [f.get("line") for f in ndjson(second.body)] == ["b says 1", "b says 2", None]


def test_log_frames_are_sent_while_the_call_runs():
    release = threading.Event()

    def waits() -> str:
        print("started")
        assert release.wait(2), "the test never saw the first line"
        return "done"

    async def scenario():
        chunks: list[bytes] = []
        task = asyncio.ensure_future(
            http_call(
                serve("function", waits),
                "POST",
                "/",
                chunks=chunks,
                headers=CALL,
                body=pickle.dumps({"args": [], "kwargs": {}}),
            )
        )
        for _ in range(200):
            if chunks:
                break
            await asyncio.sleep(0.01)
        first = list(chunks)
        release.set()
        await task
        return first

    assert ndjson(b"".join(run(scenario()))) == [{"type": "log", "stream": "stdout", "line": "started"}]


def test_prints_outside_calls_go_to_the_real_streams_and_sys_stdout_is_restored(capsys):
    original = sys.stdout
    helpers: list[threading.Thread] = []

    def spawn() -> None:
        print("inside")
        thread = threading.Thread(target=print, args=("from a thread of my own",))  # no call context
        helpers.append(thread)
        thread.start()
        thread.join()

    _, frames = call(serve("function", spawn))
    assert [f.get("line") for f in frames] == ["inside", None]
    assert "from a thread of my own" in capsys.readouterr().out
    assert sys.stdout is original


def test_a_named_call_also_prints_its_lines_to_the_container_log_tagged_with_its_id(capsys):
    def chatty(x: int) -> int:
        print(f"working on {x}")
        print("a warning", file=sys.stderr)
        return x

    body = pickle.dumps({"args": [3], "kwargs": {}})
    headers = [*CALL, ("X-Request-Id", "call-0123456789abcdef0123")]
    reply = run(http_call(serve("function", chatty), "POST", "/", body=body, headers=headers))
    frames = ndjson(reply.body)
    assert [f.get("line") for f in frames] == ["working on 3", "a warning", None], "the caller still gets its lines"
    logged = capsys.readouterr()
    assert "[call-0123456789abcdef0123] working on 3\n" in logged.out
    assert "[call-0123456789abcdef0123] a warning\n" in logged.err
    assert "working on 3" not in logged.err and "a warning" not in logged.out

    call(serve("function", chatty), 4)  # no id: nothing to tag it with, nothing in the container's log
    assert "working on 4" not in capsys.readouterr().out


# Context and on_start


def test_the_context_carries_the_on_start_value():
    def connect() -> str:
        return "db"

    def query(sql: str, context: svc.Context) -> str:
        return f"{context.on_start_value}: {sql}"

    handler = serve("function", query, on_start=connect)
    assert unpickle(call(handler, "select 1")[1][-1]) == "db: select 1"
    reply, _ = call(handler, "x", context="mine")
    assert (reply.status, reply.json()["error"]["code"]) == (422, "invalid_arguments")
