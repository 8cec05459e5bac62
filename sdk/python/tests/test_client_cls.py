"""``@app.cls`` classes against a real `svc server`: every kind of call runs on the one instance its worker
set up (``enter`` once, before the first call), errors come back as themselves, ``exit`` runs when the
worker stops, and ``svc.Cls.from_name`` calls the deployed class from a folder with none of its source."""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
PROJECT = FIXTURES / "class_project"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402


@pytest.fixture(scope="module")
def class_app():
    sys.path.insert(0, str(PROJECT))
    yield importlib.import_module("class_app")
    sys.path.remove(str(PROJECT))


def test_every_kind_of_call_runs_on_the_instance_its_worker_set_up_once(server, class_app, capfd):
    counter = class_app.Counter()
    assert counter.add.remote(2, b=40) == 42
    assert capfd.readouterr().out == ""  # enter's print goes to the worker's log, not to a call
    assert list(counter.add.map([1, 2, 3], [10, 20, 30])) == [11, 22, 33]
    assert list(counter.add.starmap([(5, 5), (6, 6)])) == [10, 12]
    state = counter.state.remote()
    assert state["order"] == ["boot", "load"] and state["calls"] == 6
    # A spawned call and a spawn_map's inputs are calls of the same class, each naming its method.
    assert counter.add.spawn(1, 1).get(timeout=60) == 2
    group = counter.add.spawn_map([1, 2], [3, 4])
    assert [group.get(index=i, timeout=60) for i in range(2)] == [4, 6]
    with pytest.raises(ValueError, match="no luck"):
        counter.fail.remote("no luck")


def test_each_set_of_parameters_runs_in_containers_of_its_own(server, class_app):
    plain, tagged = class_app.Counter(), class_app.Counter(label="tagged", step=3)
    plain_state, tagged_state = plain.state.remote(), tagged.state.remote()
    assert (plain_state["label"], plain_state["step"]) == ("plain", 1)
    assert (tagged_state["label"], tagged_state["step"]) == ("tagged", 3)
    assert plain_state["pid"] != tagged_state["pid"]
    assert class_app.Counter(step=1).state.remote()["pid"] == plain_state["pid"]  # the defaults are the same set
    assert tagged.state.spawn().get(timeout=60)["label"] == "tagged"  # a spawned call goes to a run with them too
    runs = [
        run
        for run in server.runs()
        if run["app"] == "class-test" and run.get("parameters", {}).get("label") == "tagged"
    ]
    assert runs and runs[0]["parameters"] == {"label": "tagged", "step": 3}
    with pytest.raises(TypeError, match=r"Counter\(\): the parameter 'step' must be int, not bool True"):
        class_app.Counter(step=True)


def test_a_checkpointed_class_runs_its_snap_enter_before_the_fork_and_the_others_in_each_worker(server, class_app):
    pids = class_app.Snapshot().pids.remote()
    assert pids["loaded_in"] == pids["worker"], "a plain enter runs in the worker itself"
    assert pids["booted_in"] != pids["worker"], "enter(snap=True) ran in the checkpoint the worker was forked from"
    from svc.manifest import build_manifest

    declared = next(w for w in build_manifest(class_app.app, "class_app")["workloads"] if w["name"] == "snapshot")
    assert (declared["options"]["checkpoint_enabled"], declared["options"]["keep_warm_seconds"]) == (True, 5)


def test_exit_runs_when_the_worker_stops(server, class_app):
    from svc._client import _remote

    counter = class_app.Counter()
    pid = counter.state.remote()["pid"]
    counter.add.remote(1)
    marker = Path(tempfile.gettempdir()) / f"svc-class-test-exit-{pid}"
    marker.unlink(missing_ok=True)
    target = counter.add._target()
    run, _ = _remote._run_for(target)
    _remote.forget_run(target, run)  # ends the run: its container stops, and each worker with it
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.read_text().startswith("closed after "), "exit did not run"
    marker.unlink()


def test_cls_from_name_calls_the_deployed_class_from_a_folder_without_its_source(server, tmp_path):
    server.deploy(PROJECT)
    code = """
        import svc
        counter = svc.Cls.from_name("class-test", "Counter")()
        print(counter.add.remote(1, b=2))
        print(svc.Cls.from_name("class-test", "Counter")(label="far").state.remote()["label"])
        try:
            svc.Cls.from_name("class-test", "Counter")(size=1).state.remote()
        except svc.Error as error:
            print("refused:", error)
        print(list(counter.add.map([1, 2], [3, 4])))
        print(counter.add.spawn(5).get(timeout=60))
        try:
            counter.missing.remote()
        except svc.Error as error:
            print("refused:", error)
        """
    ran = client_harness.run_elsewhere(code, tmp_path)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[:2] == ["3", "far"], ran.stdout
    assert lines[2].startswith("refused:") and 'counter has no parameter "size": it takes label, step' in lines[2], (
        ran.stdout
    )
    assert "[4, 6]" in lines and "5" in lines, ran.stdout
    refusals = [line for line in lines if line.startswith("refused:")]
    assert "has no @svc.method() method 'missing' (add, state, fail)" in refusals[1], ran.stdout


def test_the_http_calls_api_refuses_a_class_naming_its_methods(server):
    server.deploy(PROJECT)
    status, answer = server.api("POST", "/apps/class-test/functions/counter/calls", {"a": 1})
    assert status == 400, answer
    assert answer["error"]["code"] == "bad_request"
    assert answer["error"]["message"] == (
        "counter is an @app.cls class (methods add, state, fail): a call over HTTP names no method."
    )
    assert 'svc.Cls.from_name("class-test", "counter")().add.remote(...)' in answer["error"]["hint"]
