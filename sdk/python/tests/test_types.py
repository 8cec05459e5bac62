"""The SDK type-checks under ``mypy --strict`` (its settings are in pyproject.toml), so that users who
run it on code that imports ``svc`` see no error of ours.

pyright in strict mode checks the SDK too, under pyproject.toml's ``[tool.pyright]`` settings, in one
run with the exported clients that import it: ``test/e2e/app-export-types.test.ts`` (``npm test``).
(A cold pyright run over the SDK costs half a minute of a core: it runs once.)"""

import subprocess
import sys
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parent.parent


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
