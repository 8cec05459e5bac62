"""The SDK type-checks under ``mypy --strict`` and ``pyright`` in strict mode (their settings are in
pyproject.toml), so that users who run either on code that imports ``svc`` see no error of ours."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parent.parent
# pyright comes from npm: a devDependency of svc, installed beside the SDK in the repository.
PYRIGHT = SDK.parent.parent / "node_modules" / ".bin" / "pyright"


def test_the_sdk_passes_mypy_strict() -> None:
    pytest.importorskip("mypy", reason="mypy is in test/python/requirements.txt, which npm test installs")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "svc"],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_sdk_passes_pyright_strict() -> None:
    if not PYRIGHT.exists() or shutil.which("node") is None:
        pytest.skip("pyright is an npm devDependency of svc: run npm install at the repository's root")
    # --pythonpath: the packages of this Python (pydantic, fastapi, ...) are the ones pyright resolves.
    done = subprocess.run(
        [str(PYRIGHT), "--pythonpath", sys.executable, "--warnings"],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors, 0 warnings, 0 informations" in done.stdout
