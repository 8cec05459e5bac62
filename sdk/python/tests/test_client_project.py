"""How .remote() finds a workload's project, describes it and bundles it, as the CLI would: no server needed."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest
import svc
from helpers import SDK_ROOT, run_python
from svc._client._project import manifest_in_process, manifest_subprocess, project_of

PROJECT = Path(__file__).parent / "fixtures" / "client_project"


@pytest.fixture
def client_app():
    sys.path.insert(0, str(PROJECT))
    try:
        yield importlib.import_module("client_app")
    finally:
        sys.path.remove(str(PROJECT))


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


APP_SOURCE = textwrap.dedent("""
    import svc
    app = svc.App("{name}")

    @app.function
    def work(x: int) -> int:
        return x
""")


def test_the_manifest_of_a_script_is_the_one_python_m_svc_manifest_prints(client_app):
    # A script runs as __main__, its container imports it as client_app: both descriptions must agree.
    assert manifest_subprocess(str(PROJECT / "client_app.py"), str(PROJECT)) == manifest_in_process(
        client_app.app, "client_app"
    )


def test_an_imported_module_s_project_is_where_it_was_imported_from(client_app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # client_app is not importable from here
    project = project_of(client_app.shout.workload)
    assert (project.root, project.entry, project.app, project.script_entry) == (
        str(PROJECT),
        "client_app",
        "client-test",
        None,
    )
    assert project.manifest["entry"] == "client_app"
    assert [w["name"] for w in project.manifest["workloads"]][:2] == ["shout", "refuse"]


def test_a_module_importable_from_the_current_folder_has_it_as_root(tmp_path, monkeypatch):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/cwd_rule_app.py", APP_SOURCE.format(name="cwd-rule"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("pkg.cwd_rule_app")
    project = project_of(module.work.workload)
    assert (project.root, project.entry) == (str(tmp_path), "pkg.cwd_rule_app")
    # Elsewhere, the root is the folder the package was imported from: the same here.
    monkeypatch.chdir(SDK_ROOT)
    assert project_of(module.work.workload).root == str(tmp_path)


def test_the_bundle_is_written_again_only_when_a_file_changed(tmp_path, monkeypatch):
    write(tmp_path, "bundle_cache_app.py", APP_SOURCE.format(name="bundle-cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    project = project_of(importlib.import_module("bundle_cache_app").work.workload)
    first = project.bundle()
    assert project.bundle() is first
    write(tmp_path, "data.txt", "new file")
    second = project.bundle()
    assert second.sha256 != first.sha256 and second.path.is_file()
    assert project.bundle() is second


def test_a_project_too_large_to_bundle_is_a_project_error(tmp_path, monkeypatch):
    write(tmp_path, "too_large_app.py", APP_SOURCE.format(name="too-large"))
    monkeypatch.syspath_prepend(str(tmp_path))
    project = project_of(importlib.import_module("too_large_app").work.workload)
    monkeypatch.setattr("svc._client._project.DEFAULT_MAX_BYTES", 10)
    with pytest.raises(svc.ProjectError) as caught:
        project.bundle()
    assert caught.value.code == "bundle_too_large"


def test_a_script_that_fails_to_import_is_a_project_error_with_its_traceback(tmp_path):
    script = write(tmp_path, "broken.py", APP_SOURCE.format(name="broken") + "\nraise RuntimeError('at import')\n")
    with pytest.raises(svc.ProjectError) as caught:
        manifest_subprocess(str(script), str(tmp_path))
    assert caught.value.code == "manifest_failed"
    assert "RuntimeError: at import" in caught.value.message


def test_remote_while_the_module_is_imported_is_refused(tmp_path):
    # The container imports the module too: a call at import time would run again in there, and again...
    write(tmp_path, "eager.py", APP_SOURCE.format(name="eager") + "\nwork.remote(1)\n")
    result = run_python("-c", "import eager", cwd=tmp_path)
    assert result.returncode == 1
    assert "while eager is being imported" in result.stderr and 'if __name__ == "__main__":' in result.stderr


def test_a_workload_of_an_app_not_at_module_level_says_how_to_call_it(app):
    @app.function
    def square(x: int) -> int:
        return x * x

    with pytest.raises(svc.Error, match=r"svc run <module>:square"):
        square.remote(3)


def test_remote_and_request_refuse_the_wrong_kinds(client_app):
    with pytest.raises(TypeError, match=r"add is an endpoint: \.remote\(\) runs functions"):
        client_app.add.remote(1)
    with pytest.raises(
        TypeError, match=r"shout is a function, which is not served over HTTP: call it with \.remote\(\)"
    ):
        client_app.shout.request("x")
    with pytest.raises(TypeError, match="connect to its ws:// URL over WebSocket"):
        client_app.chat.request("hello")
