"""A ``svc.NotFoundError`` the function itself raises is its result: ``.remote()`` raises it once, from one
execution, and keeps its run (only the server's own 404 for the call means the run is gone and a new one
is started), and ``end_runs()`` still deletes every run it started.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest
import svc

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))

MODULE = "review_lookup_app"
SOURCE = """
import svc

app = svc.App("review-lookup")


@app.function
def lookup(key: str) -> str:
    print(f"looking up {key}", flush=True)
    if key == "known":
        return "found"
    raise svc.NotFoundError(f"no record {key}")
"""


@pytest.fixture()
def lookup_module(tmp_path_factory):
    project = tmp_path_factory.mktemp("review-lookup")
    (project / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(project))
    try:
        yield importlib.import_module(MODULE)
    finally:
        sys.path.remove(str(project))
        sys.modules.pop(MODULE, None)


def _runs_of(server, app: str) -> list[dict]:
    return [run for run in server.runs() if run.get("app") == app]


def _cleanup(server) -> list[str]:
    from svc._client import end_runs

    end_runs()
    left = _runs_of(server, "review-lookup")
    for run in left:  # do not leave them to the other tests
        server.api("DELETE", f"/runs/{run['id']}")
    return [run["id"] for run in left]


def test_a_not_found_error_raised_by_the_function_on_a_reused_run_runs_it_once(server, lookup_module, capfd):
    # First call: a new run, which this process keeps for the next calls.
    try:
        assert lookup_module.lookup.remote("known") == "found"
        assert capfd.readouterr().out == "looking up known\n"
        # Second call reuses the run: the function must run once, and its own exception come back.
        with pytest.raises(svc.NotFoundError):
            lookup_module.lookup.remote("missing")
        printed = capfd.readouterr().out
    finally:
        _cleanup(server)
    assert printed == "looking up missing\n", (
        f"the function ran {printed.count('looking up missing')} times: {printed!r}"
    )


def test_a_not_found_error_raised_by_the_function_leaves_no_run_after_end_runs(server, lookup_module, capfd):
    # docs/sdk.md: "Runs this process started are deleted when it exits (atexit ...)".
    with pytest.raises(svc.NotFoundError):
        lookup_module.lookup.remote("missing")
    left = _cleanup(server)
    assert left == [], f"runs left on the server after end_runs(): {left}"
