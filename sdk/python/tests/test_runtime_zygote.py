"""``python -m svc.runtime zygote``: the runtime imported once; containers of any workload forked from it.

Each fork imports the user's module fresh, in the environment and folder the request names,
so an edit between two forks is seen by the second, and neither sees the other's modules.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from helpers import SDK_ROOT
from svc.runtime._forkserver import BadRequest
from svc.runtime._zygote import parse_zygote_request
from test_runtime_process import RUNTIME_PYTHON, needs_uvicorn, request
from test_runtime_template import alive, wait_gone

APP = """
import os
import sys
import svc

app = svc.App("zyg")
LOADED = "version-{version}"


@app.endpoint(route="/who", methods=["GET"])
def who() -> dict:
    return {{"version": LOADED, "pid": os.getpid(), "cwd": os.getcwd(), "mark": os.environ.get("SVC_TEST_MARK"),
            "modules": sorted(name for name in sys.modules if name.startswith("helper_"))}}
"""


def _request(container: str, socket_dir: Path, root: Path, **extra) -> dict:
    return {
        "container": container,
        "socket_dir": str(socket_dir),
        "workers": 1,
        "root": str(root),
        "entry": "app",
        "workload": "who",
        "env": {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SDK_ROOT)},
        **extra,
    }


def test_a_zygote_request_names_the_workload_its_folder_and_environment():
    good = _request("c-1", Path("/tmp/x"), Path("/srv/app"))
    container, parsed = parse_zygote_request(json.dumps(good).encode())
    assert container == "c-1" and (parsed.root, parsed.entry, parsed.workload) == ("/srv/app", "app", "who")
    for change, message in [
        ({"root": "rel"}, "root must be an absolute path"),
        ({"entry": "my-app"}, "entry must be a module name"),
        ({"workload": ""}, "workload must be a name"),
        ({"env": {"A": 1}}, "env must be an object of strings"),
        ({"workers": 0}, "workers must be an integer"),
    ]:
        with pytest.raises(BadRequest, match=message):
            parse_zygote_request(json.dumps({**good, **change}).encode())


@needs_uvicorn
def test_preloading_imports_what_a_worker_s_server_needs_so_that_no_fork_imports_it():
    # What uvicorn imports lazily (its protocols, its lifespan) and the event loop's module,
    # which it imports only when a server runs: a zygote that left one out would have every
    # container import it again after the fork.
    code = (
        "import importlib.util, json, sys\n"
        "from svc.runtime._startup import preload_server\n"
        "assert preload_server() is None\n"
        "wanted = ['uvicorn.protocols.http.httptools_impl', 'uvicorn.lifespan.on']\n"
        "if importlib.util.find_spec('uvloop') is not None:\n"
        "    wanted.append('uvloop')\n"
        "print(json.dumps({name: name in sys.modules for name in wanted}))\n"
    )
    done = subprocess.run(
        [RUNTIME_PYTHON, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    assert "uvloop" in imported, "the runtime's requirements install uvloop on Linux"
    assert all(imported.values()), imported


class Forked:
    """One fork request's connection, read until its worker listens (or the connection ends)."""

    def __init__(self, control: Path, body: dict) -> None:
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.settimeout(15)
        self.conn.connect(str(control))
        self.conn.sendall(json.dumps(body).encode() + b"\n")
        self.frames = self.conn.makefile("r")
        self.output: list[str] = []
        self.pid: int | None = None
        self.socket: str | None = None
        for line in self.frames:
            frame = json.loads(line)
            if frame["t"] in ("out", "err"):
                self.output.append(frame["text"])
            elif frame["t"] == "started":
                self.pid = frame["pid"]
            elif frame["t"] == "event" and frame["event"] == "listening":
                self.socket = frame["socket"]
                break

    def close(self) -> None:
        self.frames.close()
        self.conn.close()


@needs_uvicorn
def test_forks_containers_that_import_the_current_code_fresh(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(APP.format(version=1) + "\nimport helper_one\n")
    (project / "helper_one.py").write_text("")
    base = Path(tempfile.mkdtemp(prefix="svc-zyg-", dir="/tmp"))  # AF_UNIX paths are short
    events_r, events_w = os.pipe()
    zygote = subprocess.Popen(
        [
            RUNTIME_PYTHON,
            "-m",
            "svc.runtime",
            "zygote",
            "--control",
            str(base / "z.sock"),
            "--events-fd",
            str(events_w),
        ],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(base),
        pass_fds=(events_w,),
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT), "PYTHONSAFEPATH": "1"},
    )
    os.close(events_w)
    events = os.fdopen(events_r)
    forked: list[Forked] = []
    try:
        assert json.loads(events.readline()) == {"t": "event", "event": "ready", "pid": zygote.pid}
        first = Forked(
            base / "z.sock",
            _request("c1", base, project, env={**_request("", base, project)["env"], "SVC_TEST_MARK": "one"}),
        )
        forked.append(first)
        assert first.socket, first.output
        assert any("container c1 forked from the zygote" in line for line in first.output)
        reply = request(first.socket, "GET", "/who")[1]
        assert reply["version"] == "version-1" and reply["mark"] == "one"
        assert reply["cwd"] == str(project), "the container runs in its project folder"
        assert reply["modules"] == ["helper_one"]
        assert os.getpgid(first.pid) == first.pid, "a forked container leads its own process group"

        # A new version: the next fork imports it fresh, and none of the first one's modules.
        (project / "app.py").write_text(APP.format(version=2) + "\nimport helper_two\n")
        (project / "helper_two.py").write_text("")
        second = Forked(base / "z.sock", _request("c2", base, project))
        forked.append(second)
        reply = request(second.socket, "GET", "/who")[1]
        assert reply["version"] == "version-2" and reply["mark"] is None
        assert reply["modules"] == ["helper_two"], "no module of the other version"
        assert request(first.socket, "GET", "/who")[1]["version"] == "version-1", "the first container keeps its code"

        # A module that does not import: the traceback comes over the connection, and the container exits 3.
        (project / "app.py").write_text("import svc\ndef broken(:\n")
        failed = Forked(base / "z.sock", _request("c3", base, project))
        forked.append(failed)
        assert failed.socket is None
        assert any("SyntaxError" in line for line in failed.output), failed.output
        exits = [json.loads(events.readline()) for _ in range(1)]
        assert exits[0]["container"] == "c3" and exits[0]["code"] == 3

        zygote.stdin.close()  # the platform died: the zygote goes, the containers notice on their own
        assert zygote.wait(10) == 0
        assert alive(first.pid)
        first.close()
        second.close()
        assert wait_gone(first.pid) and wait_gone(second.pid)
    finally:
        for one in forked:
            one.close()
        zygote.kill()
        zygote.wait()
        events.close()
        shutil.rmtree(base, ignore_errors=True)
