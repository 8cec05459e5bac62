"""python -m svc.runtime as a process: exit codes without uvicorn, and a real Unix socket with it.

The serving tests need uvicorn, which lives only in image venvs. They run when the
test interpreter can import it, or when SVC_TEST_RUNTIME_PYTHON names a Python
that can (for example a venv made from svc/runtime/requirements.txt).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT, run_python

APP = """
import svc
app = svc.App("demo")

@app.endpoint(route="/greet", methods=["POST"])
def greet(name: str, excited: bool = False) -> dict:
    return {"message": f"Hello, {name}{'!' if excited else '.'}"}

@app.function
def square(x: int) -> int:
    return x * x
"""


def runtime(root: Path, workload: str, socket_path: Path, python: str = sys.executable, **kwargs):
    return run_python(
        "-m",
        "svc.runtime",
        "--root",
        str(root),
        "--entry",
        "app",
        "--workload",
        workload,
        "--socket",
        str(socket_path),
        python=python,
        **kwargs,
    )


def test_an_import_failure_exits_3_with_the_traceback_and_binds_nothing(write_module, tmp_path):
    write_module("import svc\nraise RuntimeError('cannot start')\n")
    result = runtime(tmp_path, "greet", tmp_path / "s.sock")
    assert result.returncode == 3
    assert "RuntimeError: cannot start" in result.stderr and "Traceback" in result.stderr
    assert not (tmp_path / "s.sock").exists()


def test_a_missing_module_exits_3(tmp_path):
    result = runtime(tmp_path, "greet", tmp_path / "s.sock")
    assert result.returncode == 3 and "no module named 'app'" in result.stderr


def test_an_unknown_workload_exits_2_listing_the_workloads(write_module, tmp_path):
    write_module(APP)
    result = runtime(tmp_path, "nope", tmp_path / "s.sock")
    assert result.returncode == 2
    assert "app 'demo' has no workload named 'nope' (it has: greet, square)" in result.stderr


def test_missing_arguments_exit_2():
    assert run_python("-m", "svc.runtime", "--root", ".").returncode == 2


def _python_with_uvicorn() -> str | None:
    candidate = os.environ.get("SVC_TEST_RUNTIME_PYTHON", sys.executable)
    probe = subprocess.run([candidate, "-c", "import uvicorn"], capture_output=True)
    return candidate if probe.returncode == 0 else None


RUNTIME_PYTHON = _python_with_uvicorn()
needs_uvicorn = pytest.mark.skipif(
    RUNTIME_PYTHON is None,
    reason="uvicorn is not importable; set SVC_TEST_RUNTIME_PYTHON to a Python with "
    "sdk/python/svc/runtime/requirements.txt installed",
)


def test_without_uvicorn_the_runtime_exits_4(write_module, tmp_path):
    if RUNTIME_PYTHON == sys.executable:
        pytest.skip("uvicorn is importable here, so the missing-dependency path cannot be shown")
    write_module(APP)
    result = runtime(tmp_path, "greet", tmp_path / "s.sock")
    assert result.returncode == 4
    assert "install the runtime's requirements" in result.stderr


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=5)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(self._path)


def exchange(path: str, method: str, url: str, body: bytes | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request over the Unix socket: the status, the headers (case-insensitive) and the body."""
    connection = UnixConnection(path)
    try:
        connection.request(method, url, body=body, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def request(path: str, method: str, url: str, body: bytes | None = None) -> tuple[int, dict]:
    status, _, body = exchange(path, method, url, body)
    return status, json.loads(body)


def start(root: Path, socket_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SDK_ROOT)}
    process = subprocess.Popen(
        [
            RUNTIME_PYTHON,
            "-m",
            "svc.runtime",
            "--root",
            str(root),
            "--entry",
            "app",
            "--workload",
            "greet",
            "--socket",
            str(socket_path),
        ],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    # Until a connection is accepted: the file appears at bind(), a moment before listen().
    deadline = time.monotonic() + 10
    while not accepts(socket_path):
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "the runtime did not listen on its socket within 10 s"
        time.sleep(0.02)
    return process


def accepts(socket_path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(socket_path))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
    return True


@needs_uvicorn
def test_serves_over_a_unix_socket_and_stops_when_stdin_closes(write_module, tmp_path):
    write_module(APP)
    socket_path = Path(f"/tmp/svc-test-{os.getpid()}.sock")  # AF_UNIX paths are short; tmp_path may be long
    process = start(tmp_path, socket_path)
    try:
        assert request(str(socket_path), "GET", "/_svc/health") == (200, {"status": "ok", "workload": "greet"})
        assert request(str(socket_path), "POST", "/greet", b'{"name": "Ada", "excited": true}') == (
            200,
            {"message": "Hello, Ada!"},
        )
        status, body = request(str(socket_path), "POST", "/greet", b'{"nme": "Ada"}')
        assert (status, body["error"]["code"]) == (422, "invalid_arguments")
        status, body = request(str(socket_path), "POST", "/greet", b'{"excited": "yes"}')
        assert (status, body["error"]["message"]) == (
            422,
            "2 problems: missing required argument 'name'; argument 'excited' must be a boolean, got string \"yes\"",
        )
        status, headers, _ = exchange(str(socket_path), "GET", "/_svc/health")
        assert status == 200
        assert headers.get("server") is None, "the runtime must not name its server software"
        assert headers.get("date")
        process.stdin.close()  # the platform died
        assert process.wait(10) == 0
        stderr = process.stderr.read().decode()
        assert f"svc runtime: greet listening on {socket_path}" in stderr
        assert "stdin closed" in stderr
        assert not socket_path.exists()
    finally:
        process.kill()
        process.wait()
        socket_path.unlink(missing_ok=True)


SLOW_APP = """
import time
from pathlib import Path
import svc
app = svc.App("demo")

@app.endpoint(route="/greet", methods=["POST"])
def greet(marker: str) -> dict:
    Path(marker).touch()  # the call is in hand: the test stops the container now
    time.sleep(1)
    return {"finished": True}
"""


@needs_uvicorn
def test_a_call_in_flight_at_sigterm_is_answered_before_the_container_exits(write_module, tmp_path):
    write_module(SLOW_APP)
    socket_path = Path(f"/tmp/svc-test-drain-{os.getpid()}.sock")
    marker = tmp_path / "in-hand"
    process = start(tmp_path, socket_path)
    try:
        answers: list[tuple[int, dict]] = []
        caller = threading.Thread(
            target=lambda: answers.append(
                request(str(socket_path), "POST", "/greet", json.dumps({"marker": str(marker)}).encode())
            )
        )
        caller.start()
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline, "the call never reached the app"
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        caller.join(10)
        assert answers == [(200, {"finished": True})]
        assert process.wait(10) == 0
    finally:
        process.kill()
        process.wait()
        socket_path.unlink(missing_ok=True)


@needs_uvicorn
def test_sigterm_shuts_down_gracefully_with_exit_0(write_module, tmp_path):
    write_module(APP)
    socket_path = Path(f"/tmp/svc-test-term-{os.getpid()}.sock")
    process = start(tmp_path, socket_path)
    try:
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
        assert not socket_path.exists()
    finally:
        process.kill()
        process.wait()
        socket_path.unlink(missing_ok=True)
