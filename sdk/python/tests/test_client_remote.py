"""``<function>.remote(...)`` against a real `svc server`: results, remote output, remote exceptions,
one run reused per function, runs ended at exit, the build's progress and its failure."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import svc

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402


def test_remote_returns_the_result_and_prints_the_remote_lines_here_in_order(server, client_app, capfd):
    assert client_app.shout.remote("hi", times=2) == "HIHI"
    out, err = capfd.readouterr()
    assert out == "line 0\nline 1\nline 2\n"
    assert err == "a line on stderr\n"  # the image is cached: no build line


def test_arguments_and_results_travel_as_pickles(server, client_app, capfd):
    moved = client_app.move.remote(client_app.Point(1, 2), by=3, tags=["a"], loud=True)
    assert moved == client_app.Point(4, 5) and type(moved) is client_app.Point
    assert capfd.readouterr().out == "moving Point(x=1, y=2) by 3 (['a'])\n"
    assert client_app.opaque.remote(1, 2) == complex(1, 2)


def test_remote_raises_the_remote_exception_itself_with_the_remote_traceback(server, client_app, capfd):
    with pytest.raises(client_app.Refused) as caught:
        client_app.refuse.remote("not today")
    assert str(caught.value) == "not today"
    cause = caught.value.__cause__
    assert isinstance(cause, svc.RemoteTraceback)
    assert "in refuse" in cause.traceback and "raise Refused(reason)" in cause.traceback
    assert cause.traceback.rstrip().endswith("client_app.Refused: not today")
    assert capfd.readouterr().out == "refusing\n"


def test_an_exception_that_cannot_be_unpickled_is_a_remote_call_error(server, client_app):
    with pytest.raises(svc.RemoteCallError) as caught:
        client_app.awkward.remote()
    error = caught.value
    assert (error.type, error.message, error.code) == (
        "client_app.Awkward",
        "client_app.Awkward: 1 and 2",
        "handler_error",
    )
    assert "raise Awkward(1, 2)" in error.traceback


def test_a_container_that_dies_mid_call_raises_worker_crashed(server, client_app, capfd):
    with pytest.raises(svc.WorkerCrashedError) as caught:
        client_app.crash.remote()
    assert caught.value.code == "worker_crashed"
    assert capfd.readouterr().out == "crashing\n"


def test_one_run_per_function_is_started_and_reused(server, client_app):
    shout_runs = lambda: [run for run in server.runs() if run["app"] == "client-test" and run["function"] == "shout"]  # noqa: E731
    client_app.shout.remote("a")
    [before] = shout_runs()
    client_app.shout.remote("b")
    client_app.shout.remote("c")
    [after] = shout_runs()
    assert after["id"] == before["id"]
    assert after["calls"]["completed"] == before["calls"]["completed"] + 2


def test_a_run_ended_meanwhile_is_started_again(server, client_app):
    client_app.shout.remote("a")
    [run] = [run for run in server.runs() if run["function"] == "shout"]
    assert server.api("DELETE", f"/runs/{run['id']}")[0] == 204
    assert client_app.shout.remote("again") == "AGAIN"
    [again] = [run for run in server.runs() if run["function"] == "shout"]
    assert again["id"] != run["id"]


def test_a_script_s_runs_are_deleted_when_it_exits(server):
    # This process's own runs first, so that the server's list shows the script's alone. (Other apps' runs,
    # such as the server's own runs of spawned calls in test_client_cls, are not this test's.)
    svc._client.end_runs()
    assert client_test_runs(server) == []
    script = subprocess.run(
        [sys.executable, str(client_harness.PROJECT / "client_app.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(client_harness.SDK_ROOT)},
    )
    assert script.returncode == 0, script.stderr
    # From __main__: the result, and the remote client_app.Refused caught as the script's own Refused.
    assert script.stdout.splitlines() == [
        "line 0",
        "line 1",
        "line 2",
        "result: MAINMAIN",
        "refusing",
        "caught: __main__ from main",
        "moved: Point(x=2, y=3)",
    ]
    assert client_test_runs(server) == []


def client_test_runs(server) -> list:
    return [run for run in server.runs() if run["app"] == "client-test"]


def test_an_image_that_cannot_be_built_shows_its_build_and_raises_start_failed(server, capfd):
    sys.path.insert(0, str(FIXTURES / "client_unbuildable"))
    try:
        unbuildable = importlib.import_module("client_unbuildable")
    finally:
        sys.path.remove(str(FIXTURES / "client_unbuildable"))
    with pytest.raises(svc.StartFailedError) as caught:
        unbuildable.noop.remote()
    assert caught.value.code == "image_build_failed"
    err = capfd.readouterr().err
    assert "build | building the image of noop" in err
    # The resolver's own explanation (uv's), streamed as the build goes.
    assert "build | installing with uv " in err
    explained = "Because svc-test-no-such-package-7f3a was not found in the package registry"
    assert [line for line in err.splitlines() if line.startswith("build | ") and explained in line], err
    assert not [run for run in server.runs() if run["app"] == "client-unbuildable"], "the failed run was ended"


def test_remote_inside_a_container_without_server_and_token_says_so(server, client_app):
    # The shared server's containers have neither SVC_SERVER nor SVC_TOKEN.
    with pytest.raises(svc.NotSignedInError) as caught:
        client_app.relay.remote("x")
    assert "this code runs in a svc container" in caught.value.message
    assert "SVC_SERVER and SVC_TOKEN are not set" in caught.value.message
    assert "return shout.remote(text)" in caught.value.__cause__.traceback


def test_remote_inside_a_container_works_with_server_and_token_set(server, client_app, monkeypatch, capfd):
    # A server whose containers are told its own URL and token (known once it ran once on its data dir).
    port = client_harness.free_port()
    first = client_harness.start_server(port=port)
    first.stop()
    own = client_harness.start_server(
        port=port, data_dir=first.data_dir, env={"SVC_SERVER": first.url, "SVC_TOKEN": first.token}
    )
    try:
        monkeypatch.setenv("SVC_SERVER", own.url)
        monkeypatch.setenv("SVC_TOKEN", own.token)
        assert client_app.relay.remote("nested") == "NESTED"
        # The inner call's lines reach the relay's output, which reaches this process.
        assert capfd.readouterr().out == "line 0\nline 1\nline 2\n"
        assert {run["function"] for run in own.runs()} == {"relay", "shout"}
    finally:
        svc._client.end_runs()
        own.stop()
        own.remove_files()
        first.remove_files()


def test_a_bad_token_is_unauthorized(server, client_app, monkeypatch):
    monkeypatch.setenv("SVC_TOKEN", "svc_" + "x" * 40)
    with pytest.raises(svc.UnauthorizedError) as caught:
        client_app.shout.remote("x")
    assert (caught.value.code, caught.value.status) == ("unauthorized", 401)


def test_no_token_is_not_signed_in(server, client_app, monkeypatch, tmp_path):
    for name in ("SVC_TOKEN", "SVC_SERVER"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("SVC_DATA_DIR", str(tmp_path))
    with pytest.raises(svc.NotSignedInError):
        client_app.shout.remote("x")


def test_a_server_that_is_not_there_is_unreachable(server, client_app, monkeypatch):
    monkeypatch.setenv("SVC_SERVER", "http://127.0.0.1:9")
    with pytest.raises(svc.ServerUnreachableError) as caught:
        client_app.shout.remote("x")
    assert "http://127.0.0.1:9" in caught.value.message and "SVC_SERVER" in caught.value.message


def test_warm_calls_go_on_one_kept_alive_connection(server, client_app):
    from svc._client import _connections

    server_url = urlsplit(server.url)
    origin = (server_url.scheme, server_url.hostname, server_url.port)

    def kept_port() -> int:
        [(connection, _answer, _since)] = _connections._kept[origin]
        assert connection.sock is not None
        return connection.sock.getsockname()[1]

    client_app.shout.remote("a")
    first = kept_port()
    assert [client_app.shout.remote(text) for text in "bcd"] == ["B", "C", "D"]
    assert kept_port() == first
