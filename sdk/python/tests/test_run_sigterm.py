"""`svc run` stopped with SIGTERM (a CI job cancelled, `timeout 60 svc run ...`, a process manager) ends
like Ctrl-C: its run is deleted on the server before it exits (143).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402

SOURCE = """
import time

import svc

app = svc.App("review-sigterm")


@app.function
def linger() -> str:
    print("lingering", flush=True)
    time.sleep(30)
    return "done"
"""


def test_svc_run_stopped_with_sigterm_deletes_its_run(server, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "linger_app.py").write_text(textwrap.dedent(SOURCE))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update({"SVC_SERVER": server.url, "SVC_TOKEN": server.token, "NO_COLOR": "1", "SVC_PYTHON": sys.executable})
    process = subprocess.Popen(
        ["node", str(client_harness.CLI), "run", f"{project / 'linger_app.py'}:linger"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=str(project),
    )
    try:
        assert process.stderr is not None
        seen = []
        for line in process.stderr:  # the function runs remotely once its line is here
            seen.append(line)
            if line.strip() == "lingering":
                break
        else:
            pytest.fail("svc run ended before the function printed: " + "".join(seen))
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        left = [run for run in server.runs() if run.get("app") == "review-sigterm"]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for run in [run for run in server.runs() if run.get("app") == "review-sigterm"]:
            server.api("DELETE", f"/runs/{run['id']}")
    assert left == [], (
        f"svc run exited {process.returncode} on SIGTERM and left {[run['id'] for run in left]} on the server"
    )
