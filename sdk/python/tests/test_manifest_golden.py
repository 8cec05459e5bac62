"""The quickstart example's manifest is the golden file the TypeScript tests also read.

After an intended change, refresh it with:

    SVC_UPDATE_GOLDEN=1 python3 -m pytest -q sdk/python/tests/test_manifest_golden.py
"""

from __future__ import annotations

import json
import os

from helpers import REPO_ROOT, run_python

EXAMPLE = REPO_ROOT / "examples" / "quickstart" / "app.py"
GOLDEN = REPO_ROOT / "test" / "fixtures" / "manifests" / "quickstart.json"


def test_quickstart_manifest_matches_the_golden_file():
    result = run_python("-m", "svc.manifest", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    if os.environ.get("SVC_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(result.stdout)
    assert result.stdout == GOLDEN.read_text(), (
        "the quickstart manifest changed; if that is intended, refresh the golden file with "
        "SVC_UPDATE_GOLDEN=1 python3 -m pytest -q sdk/python/tests/test_manifest_golden.py"
    )


def test_the_golden_file_describes_the_quickstart():
    golden = json.loads(GOLDEN.read_text())
    assert golden["app"] == {"name": "quickstart"}
    assert [(w["name"], w["kind"]) for w in golden["workloads"]] == [
        ("square", "function"),
        ("hello", "endpoint"),
        ("greet", "endpoint"),
    ]
    assert golden["images"] == [{"id": golden["images"][0]["id"], "python_version": "3.11", "python_packages": []}]
    hello, greet = golden["workloads"][1:]
    assert hello["options"]["authorized"] is False and hello["options"]["methods"] == ["GET"]
    assert greet["options"]["authorized"] is True and greet["options"]["route"] == "/greet"
    assert greet["returns"]["title"] == "Greeting"
