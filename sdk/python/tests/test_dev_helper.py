"""``python -m svc._dev``: the warm helper behind ``svc serve``'s live reload.

One process answers one JSON request per line: the project's digest (unchanged when it is the
version running), its bundle (byte for byte what ``python -m svc.bundle`` writes) and its
manifest (what ``python -m svc.manifest`` prints), the module imported fresh each time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import SDK_ROOT, run_python
from svc._dev._snapshot import Snapshots, is_editor_temporary

APP = """
import svc

app = svc.App({name!r})


@app.endpoint(route="/hello", methods=["GET"], authorized=False)
def hello(name: str = "world") -> dict:
    return {{"message": f"Hello, {{name}}!"}}
"""


class Helper:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SDK_ROOT), "PYTHONSAFEPATH": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "svc._dev", "--parent", "0"],
            cwd=str(SDK_ROOT),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self.process.stdout.readline())["ready"] is True
        self.serial = 0

    def read(self, project: Path, unchanged: str | None = None, **extra) -> dict:
        self.serial += 1
        request = {
            "id": self.serial,
            "root": str(project),
            "target": str(project / "app.py"),
            "cwd": str(project),
            "out": str(project.parent / "out" / "bundle.tar.gz"),
            "unchanged": unchanged,
            **extra,
        }
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        assert answer["id"] == self.serial
        return answer

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text(APP.format(name="first"))
    return folder


@pytest.fixture
def helper():
    started = Helper()
    yield started
    started.close()


def test_answers_the_manifest_and_the_bundle_the_commands_give(helper, project):
    answer = helper.read(project)
    assert answer["unchanged"] is False and answer["dirs"] == []
    cold_manifest = run_python("-m", "svc.manifest", str(project / "app.py"), cwd=project)
    assert answer["manifest"]["code"] == 0 and json.loads(answer["manifest"]["stdout"]) == json.loads(
        cold_manifest.stdout
    )
    cold_bundle = run_python("-m", "svc.bundle", str(project), "--out", str(project.parent / "cold.tar.gz"))
    assert json.loads(answer["bundle"]["stdout"])["sha256"] == json.loads(cold_bundle.stdout)["sha256"]


def test_recognises_the_running_version_and_imports_each_new_one_fresh(helper, project):
    first = helper.read(project)
    (project / "app.py").write_text((project / "app.py").read_text())  # the same bytes
    assert helper.read(project, unchanged=first["digest"]) == {
        "id": 2,
        "digest": first["digest"],
        "dirs": [],
        "unchanged": True,
    }
    (project / "app.py").write_text(APP.format(name="second"))
    second = helper.read(project, unchanged=first["digest"])
    assert json.loads(second["manifest"]["stdout"])["app"] == {"name": "second"}


def test_a_syntax_error_is_what_svc_manifest_reports(helper, project):
    (project / "app.py").write_text("import svc\ndef broken(:\n")
    answer = helper.read(project)
    cold = run_python("-m", "svc.manifest", str(project / "app.py"), cwd=project)
    assert answer["manifest"]["code"] == cold.returncode == 1
    assert answer["manifest"]["stderr"] == cold.stderr
    assert "SyntaxError" in answer["manifest"]["stderr"]
    # The helper itself is untouched: the next save imports again.
    (project / "app.py").write_text(APP.format(name="fixed"))
    assert json.loads(helper.read(project)["manifest"]["stdout"])["app"] == {"name": "fixed"}


def test_kills_an_import_that_hangs_with_what_it_started(helper, project):
    marker = project / "child.pid"
    (project / "app.py").write_text(
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    answer = helper.read(project, timeout=1)
    assert answer["manifest"]["timed_out"] is True and answer["manifest"]["signal"] == "SIGKILL"
    child = int(marker.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.02)
    assert not _alive(child), "what the import started went with it"


def test_stops_when_its_stdin_closes(helper, project):
    helper.read(project)
    helper.process.stdin.close()
    assert helper.process.wait(10) == 0


def test_snapshots_leave_out_editor_temporaries_and_excluded_folders(project):
    snapshots = Snapshots()
    clean = snapshots.take(str(project))
    (project / ".app.py.swp").write_bytes(b"vim")
    (project / "app.py~").write_text("backup")
    (project / "state").mkdir()
    (project / "state" / "bundle.tar.gz").write_bytes(b"svc's own")
    assert snapshots.take(str(project), (str(project / "state"),)).digest == clean.digest
    assert snapshots.take(str(project)).digest != clean.digest
    assert is_editor_temporary("pkg/.util.py.swo") and not is_editor_temporary("pkg/util.py")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, OSError):
        return False
