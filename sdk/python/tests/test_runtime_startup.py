"""Project files named like standard modules (queue.py) break neither the runtime nor the entry.

The runtime imports its own dependencies before the user's module (the platform also starts
it with PYTHONSAFEPATH, so that ``-m`` does not put the project folder first on sys.path).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from helpers import SDK_ROOT
from test_runtime_process import RUNTIME_PYTHON, needs_uvicorn, request

ENDPOINT = """
import svc

app = svc.App("shadow")


@app.endpoint(route="/hi", methods=["GET"])
def hi() -> dict:  # sync: runs in a thread pool, which needs the standard queue module
    return {"hi": True}
"""

NOT_THE_STDLIB = "raise RuntimeError('this is the project folder, not the standard library')\n"


def serve(root: Path, entry: str, socket_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SDK_ROOT), "PYTHONSAFEPATH": "1"}
    process = subprocess.Popen(
        [
            RUNTIME_PYTHON,
            "-m",
            "svc.runtime",
            "--root",
            str(root),
            "--entry",
            entry,
            "--workload",
            "hi",
            "--socket",
            str(socket_path),
        ],
        cwd=root,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 10
    while not socket_path.exists():
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "the runtime did not bind its socket within 10 s"
        time.sleep(0.02)
    return process


def stop(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(10)


@needs_uvicorn
def test_a_project_file_named_like_a_standard_module_does_not_replace_it_for_the_runtime(write_module, tmp_path):
    write_module(ENDPOINT)
    write_module(NOT_THE_STDLIB, name="queue")
    socket_path = Path(f"/tmp/svc-shadow-{os.getpid()}.sock")
    process = serve(tmp_path, "app", socket_path)
    try:
        assert request(str(socket_path), "GET", "/hi") == (200, {"hi": True})
    finally:
        stop(process)


@needs_uvicorn
def test_an_entry_module_named_like_a_standard_module_is_the_projects(write_module, tmp_path):
    write_module(ENDPOINT, name="queue")
    socket_path = Path(f"/tmp/svc-shadow-entry-{os.getpid()}.sock")
    process = serve(tmp_path, "queue", socket_path)
    try:
        assert request(str(socket_path), "GET", "/hi") == (200, {"hi": True})
    finally:
        stop(process)


@needs_uvicorn
def test_a_container_starts_without_the_requirements_file_its_image_read(tmp_path):
    """The manifest read ../requirements.txt and ../pyproject.toml; the bundle (the app's folder) has neither."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(
        ENDPOINT.replace(
            'app = svc.App("shadow")',
            'app = svc.App("shadow")\n'
            'image = svc.Image().pip_install_from_requirements("../requirements.txt")'
            '.pip_install_from_pyproject("../pyproject.toml")',
        ).replace(
            '@app.endpoint(route="/hi", methods=["GET"])', '@app.endpoint(route="/hi", methods=["GET"], image=image)'
        )
    )
    socket_path = Path(f"/tmp/svc-no-reqs-{os.getpid()}.sock")
    process = serve(project, "app", socket_path)
    try:
        assert request(str(socket_path), "GET", "/hi") == (200, {"hi": True})
    finally:
        stop(process)
