"""``python -m svc.runtime template``: warmed once, it forks containers whose workers share the warm-up.

The protocol as the platform speaks it: one JSON request per connection, then frames back
(``started``, output lines, worker events), and the connection as the container's lifeline.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT
from svc.runtime._template import BadRequest, parse_request
from test_runtime_process import RUNTIME_PYTHON, needs_uvicorn, request

APP = """
import os
import svc

app = svc.App("tpl")


def warm_up() -> dict:
    with open(os.environ["SVC_TEST_COUNT_FILE"], "a") as file:
        file.write(f"{os.getpid()}\\n")
    return {"warmed_in": os.getpid()}


@app.endpoint(route="/who", methods=["GET"], workers=2, checkpoint_enabled=True, on_start=warm_up)
def who(context: svc.Context) -> dict:
    return {"pid": os.getpid(), "value": context.on_start_value}
"""


def test_a_fork_request_names_a_container_an_absolute_folder_and_1_to_64_workers():
    assert parse_request(b'{"container": "c-1", "socket_dir": "/tmp/x", "workers": 2}') == ("c-1", "/tmp/x", 2)
    for bad, message in [
        (b"nope", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"container": "../c", "socket_dir": "/tmp", "workers": 1}', "container must be"),
        (b'{"container": "c", "socket_dir": "tmp", "workers": 1}', "socket_dir must be an absolute path"),
        (b'{"container": "c", "socket_dir": "/tmp", "workers": 65}', "workers must be an integer from 1 to 64"),
        (b'{"container": "c", "socket_dir": "/tmp", "workers": true}', "workers must be"),
    ]:
        with pytest.raises(BadRequest, match=message):
            parse_request(bad)


class Container:
    """One fork request's connection: frames read until the workers listen."""

    def __init__(self, control: Path, container: str, socket_dir: Path, workers: int) -> None:
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.settimeout(10)
        self.conn.connect(str(control))
        self.conn.sendall(
            json.dumps({"container": container, "socket_dir": str(socket_dir), "workers": workers}).encode() + b"\n"
        )
        self.frames = self.conn.makefile("r")
        self.output: list[str] = []
        first = self.next()
        assert first["t"] == "started", first
        self.pid: int = first["pid"]
        self.sockets: dict[int, str] = {}
        while len(self.sockets) < workers:
            frame = self.next()
            if frame["t"] == "event" and frame["event"] == "listening":
                self.sockets[frame["worker"]] = frame["socket"]

    def close(self) -> None:
        self.frames.close()  # the socket's file descriptor closes only with its last file object
        self.conn.close()

    def next(self) -> dict:
        while True:
            line = self.frames.readline()
            assert line, f"the connection closed; output so far: {self.output}"
            frame = json.loads(line)
            if frame["t"] in ("out", "err"):
                self.output.append(frame["text"])
                continue
            return frame


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, OSError):
        return False


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


@needs_uvicorn
def test_forks_warmed_containers_that_live_as_long_as_their_connection(write_module, tmp_path):
    write_module(APP)
    base = Path(tempfile.mkdtemp(prefix="svc-tpl-", dir="/tmp"))  # AF_UNIX paths are short
    count = tmp_path / "on_start.txt"
    events_r, events_w = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(SDK_ROOT), "SVC_TEST_COUNT_FILE": str(count)}
    template = subprocess.Popen(
        [
            RUNTIME_PYTHON,
            "-m",
            "svc.runtime",
            "template",
            "--root",
            str(tmp_path),
            "--entry",
            "app",
            "--workload",
            "who",
            "--control",
            str(base / "t.sock"),
            "--events-fd",
            str(events_w),
        ],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        pass_fds=(events_w,),
    )
    os.close(events_w)
    events = os.fdopen(events_r)
    containers: list[Container] = []
    try:
        assert json.loads(events.readline()) == {"t": "event", "event": "ready", "pid": template.pid}
        first = Container(base / "t.sock", "c1", base, 2)
        containers.append(first)
        assert sorted(first.sockets) == [0, 1]
        assert first.sockets[1] == str(base / "c1-w1.sock")
        assert any("container c1 forked from the checkpoint template" in line for line in first.output)
        replies = [request(first.sockets[i], "GET", "/who")[1] for i in (0, 1)]
        assert [reply["value"] for reply in replies] == [{"warmed_in": template.pid}] * 2
        assert len({reply["pid"] for reply in replies}) == 2

        second = Container(base / "t.sock", "c2", base, 1)
        containers.append(second)
        assert request(second.sockets[0], "GET", "/who")[1]["value"] == {"warmed_in": template.pid}
        assert count.read_text().split() == [str(template.pid)], "on_start ran once, in the template"
        assert os.getpgid(first.pid) == first.pid, "a forked container leads its own process group"

        first.close()  # the platform let go: the container drains and exits
        assert wait_gone(first.pid)
        exited = json.loads(events.readline())
        assert exited == {
            "t": "event",
            "event": "container_exited",
            "container": "c1",
            "pid": first.pid,
            "code": 0,
            "signal": None,
        }
        assert not os.path.exists(first.sockets[0])

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bad:
            bad.connect(str(base / "t.sock"))
            bad.sendall(b'{"container": "../x", "socket_dir": "/tmp", "workers": 1}\n')
            reply = json.loads(bad.makefile("r").readline())
            assert reply["t"] == "error" and "container must be" in reply["message"]

        template.stdin.close()  # the platform died: the template goes, the container notices on its own
        assert template.wait(10) == 0
        assert alive(second.pid), "a container outlives the template"
        second.close()
        assert wait_gone(second.pid)
    finally:
        for container in containers:
            container.close()
        template.kill()
        template.wait()
        events.close()
        shutil.rmtree(base, ignore_errors=True)
