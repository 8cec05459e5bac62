"""Every workload kind through a real ``python -m svc.runtime`` process on a Unix socket:
SSE read as it streams, a realtime session and an ASGI app's own WebSocket with a real
``websockets`` client, root_path behind the gateway's prefix, and concurrent function calls
whose prints stay apart.

They need a Python with the runtime's requirements: SVC_TEST_RUNTIME_PYTHON (``npm run test:py``
builds one), or the test interpreter itself when it has uvicorn and websockets.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import pickle
import socket
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT
from runtime_helpers import RUNTIME_PYTHON, needs_runtime

APP = """
import asyncio, json, os, threading, time
import svc

app = svc.App("kinds")

def warm():
    return "warmed"

@app.endpoint(methods=["GET"])
def ticks(n: int = 3):
    yield {"tick": 0}
    gate = os.environ["SVC_TEST_GATE"]
    deadline = time.monotonic() + 5
    while not os.path.exists(gate) and time.monotonic() < deadline:  # the test reads tick 0 first
        time.sleep(0.01)
    for i in range(1, n):
        yield {"tick": i}
    raise RuntimeError("out of ticks")

@app.realtime(concurrent_requests=4)
def chat(message: dict, context: svc.Context):
    if message.get("fail"):
        raise ValueError("asked to fail")
    return [{"echo": message, "path": context.path}, "done"]

@app.realtime(name="raw")
def raw(message):
    return message

barrier = threading.Barrier(2, timeout=5)

@app.function(on_start=warm)
def chatty(name: str, context: svc.Context) -> str:
    for step in (1, 2, 3):
        print(f"{name} line {step}")
        barrier.wait()  # both calls print each line before either goes on
    return f"{name}:{context.on_start_value}"

async def web(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                scope["state"]["started"] = "yes"
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    elif scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        message = await receive()
        await send({"type": "websocket.send", "text": json.dumps(
            {"got": message.get("text"), "root_path": scope["root_path"], "path": scope["path"]})})
        await send({"type": "websocket.close", "code": 1000})
    else:
        body = json.dumps({"root_path": scope["root_path"], "path": scope["path"],
                           "link": scope["root_path"] + "/items/1", "started": scope["state"].get("started")})
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})

app.asgi(name="web")(web)
"""


PYTHON = RUNTIME_PYTHON
pytestmark = needs_runtime


class Runtime:
    """A running ``python -m svc.runtime`` for one workload of APP."""

    def __init__(self, root: Path, workload: str) -> None:
        self.socket = f"/tmp/svc-kinds-{os.getpid()}-{workload}.sock"  # AF_UNIX paths are short
        self.gate = root / "gate"
        env = {**os.environ, "PYTHONPATH": str(SDK_ROOT), "SVC_TEST_GATE": str(self.gate)}
        self.process = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "svc.runtime",
                "--root",
                str(root),
                "--entry",
                "app",
                "--workload",
                workload,
                "--socket",
                self.socket,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        # Until it accepts a connection: the socket's file exists from its bind(), a moment before listen().
        deadline = time.monotonic() + 10
        while not self._accepts():
            if self.process.poll() is not None:
                raise AssertionError(self.process.stderr.read().decode())
            assert time.monotonic() < deadline, "the runtime did not listen on its socket within 10 s"
            time.sleep(0.02)

    def _accepts(self) -> bool:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.socket)
            return True
        except OSError:  # not bound yet, or bound and not listening
            return False
        finally:
            probe.close()

    def connection(self) -> http.client.HTTPConnection:
        path = self.socket

        class UnixConnection(http.client.HTTPConnection):
            def connect(self) -> None:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(10)
                self.sock.connect(path)

        return UnixConnection("localhost", timeout=10)

    def stop(self) -> str:
        """Stops the runtime (by closing its lifeline); returns what it wrote to stdout and stderr."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        finally:
            self.process.kill()
            self.process.wait()
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        return self.process.stdout.read().decode() + self.process.stderr.read().decode()


@pytest.fixture
def start(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    running: list[Runtime] = []

    def start(workload: str) -> Runtime:
        running.append(Runtime(tmp_path, workload))
        return running[-1]

    yield start
    for runtime in running:
        runtime.stop()


def websocket_client(
    socket_path: str, path: str, messages: list[str | bytes], replies: int, headers: dict[str, str] | None = None
) -> list:
    """Runs a real ``websockets`` client in the runtime's Python (the test Python may lack it):
    sends ``messages``, reads ``replies`` replies, returns them (bytes as {"bytes": hex})."""
    script = textwrap.dedent("""
        import json, sys
        from websockets.sync.client import unix_connect
        socket_path, path, messages, count, headers = json.loads(sys.stdin.read())
        replies = []
        with unix_connect(socket_path, "ws://localhost" + path, additional_headers=headers, open_timeout=10) as ws:
            for message in messages:
                ws.send(bytes.fromhex(message["bytes"]) if isinstance(message, dict) else message)
            for _ in range(count):
                reply = ws.recv(timeout=10)
                replies.append({"bytes": reply.hex()} if isinstance(reply, bytes) else reply)
        print(json.dumps(replies))
    """)
    wire = [{"bytes": m.hex()} if isinstance(m, bytes) else m for m in messages]
    result = subprocess.run(
        [PYTHON, "-c", script],
        input=json.dumps([socket_path, path, wire, replies, headers or {}]),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_an_endpoint_generator_streams_sse_events_as_they_are_made(start):
    runtime = start("ticks")
    connection = runtime.connection()
    connection.request("GET", "/?n=3")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
    received = b""
    while b"\n\n" not in received:  # tick 0 arrives while the generator still waits for the gate
        received += response.read1(1024)
    assert received == b'data: {"tick":0}\n\n'
    runtime.gate.touch()
    received += response.read()
    assert received.decode().split("\n\n") == [
        'data: {"tick":0}',
        'data: {"tick":1}',
        'data: {"tick":2}',
        'event: error\ndata: {"error": {"code": "handler_error", "message": "RuntimeError in ticks; see the workload logs"}}',
        "",
    ]
    connection.close()
    assert "RuntimeError: out of ticks" in runtime.stop()


def test_a_realtime_session_with_a_real_websocket_client(start):
    runtime = start("chat")
    replies = websocket_client(
        runtime.socket, "/room/7", ['{"text": "hi"}', "not json", '{"fail": true}', '{"n": 1}'], 6
    )
    assert replies[:2] == ['{"echo":{"text":"hi"},"path":"/room/7"}', "done"]
    assert json.loads(replies[2])["error"]["code"] == "invalid_json"
    assert json.loads(replies[3]) == {
        "error": {"code": "handler_error", "message": "ValueError in chat; see the workload logs"}
    }
    assert replies[4:] == ['{"echo":{"n":1},"path":"/room/7"}', "done"]  # the socket stayed open throughout
    connection = runtime.connection()
    connection.request("GET", "/room/7")
    response = connection.getresponse()
    assert (response.status, json.loads(response.read())["error"]["code"]) == (426, "upgrade_required")
    assert "ValueError: asked to fail" in runtime.stop()


def test_realtime_text_comes_back_as_text_and_binary_as_binary(start):
    runtime = start("raw")
    assert websocket_client(runtime.socket, "/", ["plain", b"\x00\xff"], 2) == ["plain", {"bytes": "00ff"}]


def test_an_asgi_app_serves_http_and_its_own_websocket_under_the_prefix(start):
    runtime = start("web")
    connection = runtime.connection()
    connection.request("GET", "/items/1", headers={"x-forwarded-prefix": "/default/kinds/web"})
    response = connection.getresponse()
    assert response.status == 200
    assert json.loads(response.read()) == {
        "root_path": "/default/kinds/web",
        "path": "/default/kinds/web/items/1",
        "link": "/default/kinds/web/items/1",
        "started": "yes",
    }
    (reply,) = websocket_client(
        runtime.socket, "/live", ["hello"], 1, headers={"x-forwarded-prefix": "/default/kinds/web"}
    )
    assert json.loads(reply) == {"got": "hello", "root_path": "/default/kinds/web", "path": "/default/kinds/web/live"}


def test_concurrent_function_calls_stream_their_own_prints_and_results(start):
    runtime = start("chatty")
    results: dict[str, list[dict]] = {}

    def call(name: str) -> None:
        connection = runtime.connection()
        body = pickle.dumps({"args": [name], "kwargs": {}})
        connection.request("POST", "/", body=body, headers={"content-type": "application/vnd.svc.call+pickle"})
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("content-type") == "application/x-ndjson"
        results[name] = [json.loads(line) for line in response.read().splitlines()]
        connection.close()

    threads = [threading.Thread(target=call, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    for name in ("a", "b"):
        frames = results[name]
        assert frames[:3] == [{"type": "log", "stream": "stdout", "line": f"{name} line {step}"} for step in (1, 2, 3)]
        assert frames[3]["type"] == "result"
        assert pickle.loads(base64.b64decode(frames[3]["pickle"])) == f"{name}:warmed"
    log = runtime.stop()
    assert "line 1" not in log  # captured for the callers, not written to the container's logs
