"""``python -m svc.runtime`` in TCP mode, as a Nomad allocation runs it: no socket options, worker ``i``
on ``SVC_WORKER_HOST:SVC_WORKER_PORTS[i]`` (or ``--host``/``--ports``/``--port``).

The serving tests need a Python with the runtime's requirements (SVC_TEST_RUNTIME_PYTHON, which
``npm run test:py`` sets); the argument errors are found before anything is imported and run anywhere.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT
from runtime_helpers import RUNTIME_PYTHON, needs_runtime

APP = """
import os
import svc

app = svc.App("tcp")

def warm():
    return os.getpid()

@app.endpoint(route="/greet", methods=["GET"], workers=2)
def greet(name: str = "world") -> dict:
    return {"message": f"Hello, {name}!", "pid": os.getpid()}

@app.endpoint(route="/who", methods=["GET"], workers=2, checkpoint_enabled=True, on_start=warm)
def who(context: svc.Context) -> dict:
    return {"warmed_in": context.on_start_value, "pid": os.getpid()}

@app.function
def square(x: int) -> int:
    print(f"squaring {x}")
    return x * x

@app.realtime
def chat(message: dict, context: svc.Context):
    return {"echo": message, "path": context.path}

async def web(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    else:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": ("asgi " + scope["path"]).encode()})

app.asgi(name="web")(web)
"""


PYTHON = RUNTIME_PYTHON
BANNER = re.compile(r"listening on (\S+):(\d+) \(worker (\d+), pid (\d+)\)")


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on: bound to port 0 together (so they differ), then closed."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT left by closed calls is fine
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


class Runtime:
    """A running runtime in TCP mode; its stderr is collected line by line (the workers' banners name their pids)."""

    def __init__(self, root: Path, workload: str, args: list[str], env: dict[str, str]) -> None:
        full_env = {**os.environ, "PYTHONPATH": str(SDK_ROOT), **env}
        self.process = subprocess.Popen(
            [PYTHON, "-m", "svc.runtime", "--root", str(root), "--entry", "app", "--workload", workload, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def worker_pid(self, index: int, not_pid: int | None = None, timeout: float = 20.0) -> int:
        """The pid of worker ``index`` once it listens (one other than ``not_pid``: its replacement)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    match = BANNER.search(line)
                    if match and int(match[3]) == index and int(match[4]) != not_pid:
                        return int(match[4])
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"worker {index} never listened:\n{''.join(self.lines)}")
                self._changed.wait(remaining)

    def output(self) -> str:
        with self._changed:
            return "".join(self.lines)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def start(root: Path):
    started: list[Runtime] = []

    def run(workload: str, args: list[str] = (), env: dict[str, str] | None = None) -> Runtime:
        started.append(Runtime(root, workload, list(args), env or {}))
        return started[-1]

    yield run
    for runtime in started:
        runtime.kill()


def get(port: int, path: str, host: str = "127.0.0.1") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_healthy(port: int, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status, body = get(port, "/_svc/health")
            if status == 200:
                return json.loads(body)
        except OSError:
            pass
        assert time.monotonic() < deadline, f"nothing answered /_svc/health on port {port}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False


# -- serving ---------------------------------------------------------------


@needs_runtime
def test_two_workers_serve_their_ports_restart_in_place_and_drain_on_sigterm(start):
    ports = free_ports(2)
    runtime = start(
        "greet", ["--workers", "2"], {"SVC_WORKER_HOST": "127.0.0.1", "SVC_WORKER_PORTS": f"{ports[0]},{ports[1]}"}
    )
    for port in ports:
        assert wait_healthy(port) == {"status": "ok", "workload": "greet"}
    pids = [runtime.worker_pid(0), runtime.worker_pid(1)]
    for port, pid in zip(ports, pids, strict=False):
        status, body = get(port, "/greet?name=Ada")
        assert status == 200
        assert json.loads(body) == {"message": "Hello, Ada!", "pid": pid}  # worker i answers on port i

    os.kill(pids[0], signal.SIGKILL)
    replacement = runtime.worker_pid(0, not_pid=pids[0])
    wait_healthy(ports[0])
    assert json.loads(get(ports[0], "/greet")[1])["pid"] == replacement
    assert json.loads(get(ports[1], "/greet")[1])["pid"] == pids[1]  # the other worker never noticed

    assert runtime.stop() == 0
    assert not any(alive(pid) for pid in (replacement, pids[1]))
    assert all(port_is_free(port) for port in ports)
    assert "restarting it in" in runtime.output()


@needs_runtime
def test_a_function_call_streams_its_frames_over_tcp(start):
    (port,) = free_ports(1)
    runtime = start("square", ["--port", str(port)])
    wait_healthy(port)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(
        "POST",
        "/",
        body=pickle.dumps({"args": [7], "kwargs": {}}),
        headers={"content-type": "application/vnd.svc.call+pickle"},
    )
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("content-type") == "application/x-ndjson"
    frames = [json.loads(line) for line in response.read().splitlines()]
    connection.close()
    assert frames[0] == {"type": "log", "stream": "stdout", "line": "squaring 7"}
    assert frames[-1]["type"] == "result" and pickle.loads(base64.b64decode(frames[-1]["pickle"])) == 49
    assert runtime.stop() == 0


@needs_runtime
def test_a_checkpointed_workload_forks_warmed_workers_onto_the_ports(start):
    ports = free_ports(2)
    runtime = start("who", ["--ports", ",".join(map(str, ports))])
    answers = []
    for port in ports:
        wait_healthy(port)
        answers.append(json.loads(get(port, "/who")[1]))
    supervisor = runtime.process.pid
    assert [answer["warmed_in"] for answer in answers] == [
        supervisor,
        supervisor,
    ]  # on_start ran once, before the forks
    assert len({answer["pid"] for answer in answers} | {supervisor}) == 3
    assert runtime.stop() == 0


@needs_runtime
def test_an_asgi_app_and_a_realtime_websocket_over_tcp(start):
    web_port, chat_port = free_ports(2)
    web = start("web", ["--port", str(web_port), "--host", "127.0.0.1"])
    chat = start("chat", [], {"SVC_WORKER_PORTS": str(chat_port)})
    wait_healthy(web_port)
    assert get(web_port, "/items/1") == (200, b"asgi /items/1")
    wait_healthy(chat_port)
    script = textwrap.dedent("""
        import json, sys
        from websockets.sync.client import connect
        with connect(f"ws://127.0.0.1:{sys.argv[1]}/room/7", open_timeout=10) as ws:
            ws.send('{"text": "hi"}')
            print(ws.recv(timeout=10))
    """)
    result = subprocess.run([PYTHON, "-c", script, str(chat_port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"echo": {"text": "hi"}, "path": "/room/7"}
    assert web.stop() == 0 and chat.stop() == 0


@needs_runtime
def test_flags_win_over_the_environment(start):
    env_port, flag_port = free_ports(2)
    with socket.socket() as squatter:  # the environment's port is taken: only the flag's may be used
        squatter.bind(("127.0.0.1", env_port))
        squatter.listen()
        runtime = start(
            "greet",
            ["--ports", str(flag_port), "--host", "127.0.0.1"],
            {"SVC_WORKER_PORTS": str(env_port), "SVC_WORKER_HOST": "203.0.113.9"},
        )
        wait_healthy(flag_port)
        assert runtime.stop() == 0


# -- errors: exit code and one line, before the user's code is imported ----


def runtime_error(root: Path, args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    full_env = {key: value for key, value in os.environ.items() if not key.startswith("SVC_WORKER_")}
    full_env.update({"PYTHONPATH": str(SDK_ROOT), **(env or {})})
    result = subprocess.run(
        [
            PYTHON or sys.executable,
            "-m",
            "svc.runtime",
            "--root",
            str(root),
            "--entry",
            "app",
            "--workload",
            "greet",
            *args,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=30,
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return result.returncode, lines[0]


def test_a_port_count_that_differs_from_workers_exits_2(root):
    assert runtime_error(root, ["--workers", "3"], {"SVC_WORKER_PORTS": "8001,8002"}) == (
        2,
        "svc runtime: SVC_WORKER_PORTS has 2 ports but --workers is 3: give one port per worker",
    )
    code, line = runtime_error(root, ["--ports", "8001", "--workers", "2"])
    assert code == 2 and "--ports has 1 port but --workers is 2" in line


@pytest.mark.parametrize("ports", ["http", "0", "65536", "80.5", "-1", "8001,,8002"])
def test_a_port_that_is_not_a_number_from_1_to_65535_exits_2(root, ports):
    code, line = runtime_error(root, [], {"SVC_WORKER_PORTS": ports})
    assert (
        code == 2
        and "is not a port (a number from 1 to 65535)" in line
        and line.startswith("svc runtime: SVC_WORKER_PORTS")
    )


def test_a_port_listed_twice_exits_2(root):
    assert runtime_error(root, ["--ports", "8001,8001"]) == (
        2,
        "svc runtime: --ports: port 8001 is listed twice (one port per worker)",
    )


def test_a_port_in_use_exits_1_naming_it(root):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        code, line = runtime_error(root, [], {"SVC_WORKER_PORTS": f"{free_ports(1)[0]},{port}"})
    assert code == 1
    assert (
        line
        == f"svc runtime: port {port} is already in use on 127.0.0.1 (worker 1); stop what listens there or pick another port"
    )


def test_a_socket_option_and_ports_are_exclusive(root, tmp_path):
    code, line = runtime_error(root, ["--socket", str(tmp_path / "s.sock"), "--ports", "8001"])
    assert code == 2 and "--socket and --ports are exclusive" in line
    code, line = runtime_error(root, ["--socket-dir", str(tmp_path), "--container", "c1", "--host", "0.0.0.0"])
    assert code == 2 and "--socket-dir and --host are exclusive" in line


def test_nowhere_to_listen_exits_2(root):
    code, line = runtime_error(root, [])
    assert code == 2 and "nowhere to listen" in line and "SVC_WORKER_PORTS" in line


def test_help_documents_tcp_mode():
    result = subprocess.run(
        [sys.executable, "-m", "svc.runtime", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT)},
    )
    assert result.returncode == 0
    for text in ("--ports", "--port", "--host", "SVC_WORKER_PORTS", "SVC_WORKER_HOST"):
        assert text in result.stdout


def test_a_host_that_is_not_this_machines_exits_1(root):
    code, line = runtime_error(root, ["--port", "8001", "--host", "203.0.113.9"])  # TEST-NET-3: never local
    assert code == 1 and line.startswith("svc runtime: cannot listen on 203.0.113.9:8001 (worker 0): ")
