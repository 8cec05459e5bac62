"""``timeout=`` and ``retries=`` seen from the client, against a real `svc server`: ``.remote()`` raises
``svc.FunctionTimeoutError`` for a call past its time-out, ``svc run`` exits 1 with its message, and a
retried call returns what its last attempt returned, the attempts on stderr.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import svc

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402

MODULE = "timeouts_client_app"
SOURCE = """
import os
import time

import svc

app = svc.App("timeouts-client")


@app.function(timeout=1)
def stall(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@app.function(retries=svc.Retries(max_retries=2, initial_delay=0.1))
def flaky(path: str) -> str:
    count = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as out:
        out.write(str(count))
    if count < 3:
        raise RuntimeError(f"attempt {count} fails")
    return f"succeeded on attempt {count}"
"""


@pytest.fixture()
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("timeouts-client")
    (root / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(MODULE, None)
        from svc._client import end_runs

        end_runs()


def test_remote_past_the_timeout_raises_function_timeout_error_also_a_builtin_timeout_error(server, project):
    module = importlib.import_module(MODULE)
    with pytest.raises(svc.FunctionTimeoutError) as caught:
        module.stall.remote(30)
    assert caught.value.code == "timeout"
    assert isinstance(caught.value, TimeoutError)
    assert str(caught.value).startswith("stall did not finish within its timeout of 1 s")
    # The run goes on: the next call gets a fresh worker.
    assert isinstance(module.stall.remote(0), int)


def test_svc_run_past_the_timeout_exits_1_with_the_message(server, project):
    env = {**os.environ, "PYTHONPATH": str(client_harness.SDK_ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "svc.run", f"{project / MODULE}.py:stall", "30"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert "stall did not finish within its timeout of 1 s" in result.stderr


def test_a_retried_call_returns_its_last_attempt_and_says_each_failed_one(server, project, capfd):
    module = importlib.import_module(MODULE)
    assert module.flaky.remote(str(project / "count")) == "succeeded on attempt 3"
    err = capfd.readouterr().err
    assert "svc: attempt 1 of 3 failed (RuntimeError: attempt 1 fails); retrying in 0.1 s" in err
    assert "svc: attempt 2 of 3 failed (RuntimeError: attempt 2 fails); retrying in 0.2 s" in err
    assert "svc: attempt 3 of 3 succeeded" in err
