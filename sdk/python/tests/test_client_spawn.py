"""``<function>.spawn(...)``, ``svc.FunctionCall`` and ``svc.Function.from_name`` against a real `svc server`:
a call that returns at once and is read later, from this process or another one; its exception; a time-out
that leaves it running; cancelling; and a deployed function called from a folder with none of its source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import svc

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402


def _elsewhere(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return client_harness.run_elsewhere(code, tmp_path)


def test_spawn_returns_a_call_at_once_whose_result_get_returns(server, client_app):
    call = client_app.plus.spawn(2, b=40)
    assert isinstance(call, svc.FunctionCall) and call.object_id.startswith("call-")
    assert call.get(timeout=60) == 42
    assert call.status() == "succeeded"
    assert svc.FunctionCall.gather(client_app.plus.spawn(1), client_app.plus.spawn(2, 3)) == [1, 5]


def test_get_raises_the_remote_exception_with_its_traceback(server, client_app):
    call = client_app.refuse.spawn("not today")
    with pytest.raises(client_app.Refused) as caught:
        call.get(timeout=60)
    assert isinstance(caught.value.__cause__, svc.RemoteTraceback)
    assert "raise Refused(reason)" in caught.value.__cause__.traceback


def test_a_call_outlives_its_caller_and_is_read_from_another_process(server, client_app, tmp_path):
    gate = tmp_path / "gate"
    call = client_app.held.spawn(str(gate), 7)
    with pytest.raises(TimeoutError, match=r"has not ended within 0.3 s"):
        call.get(timeout=0.3)
    gate.touch()
    ran = _elsewhere(f"import svc; print(svc.FunctionCall.from_id({call.object_id!r}).get(timeout=60))", tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "7"


def test_cancel_gives_a_call_up_and_get_then_raises_call_cancelled(server, client_app, tmp_path):
    call = client_app.held.spawn(str(tmp_path / "never"), 1)
    call.cancel()
    with pytest.raises(svc.CallCancelledError) as caught:
        call.get(timeout=10)
    assert caught.value.code == "call_cancelled"
    with pytest.raises(svc.InvalidRequestError) as again:
        call.cancel()
    assert again.value.code == "conflict" and "cancelled" in str(again.value)


def test_bad_ids_and_names_are_refused_before_anything_is_sent(server):
    with pytest.raises(ValueError, match="is not a call id"):
        svc.FunctionCall.from_id("run-0123")
    with pytest.raises(svc.NotFoundError):
        svc.FunctionCall.from_id("call-" + "0" * 20).get(timeout=1)
    with pytest.raises(TypeError, match="app must be a non-empty string"):
        svc.Function.from_name("", "plus")


def test_function_from_name_calls_the_deployed_version_from_a_folder_without_its_source(server, tmp_path):
    server.deploy(client_harness.PROJECT)
    ran = _elsewhere(
        """
        import svc
        shout = svc.Function.from_name("client-test", "shout")
        print(shout.remote("hi", times=2))
        print(shout.spawn("yo").get(timeout=60))
        print(list(svc.Function.from_name("client-test", "plus").map([1, 2, 3], [10, 20, 30])))
        try:
            svc.Function.from_name("client-test", "nope").remote()
        except svc.NotFoundError as error:
            print("not found:", error)
        """,
        tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert "HIHI" in lines and "YO" in lines and "[11, 22, 33]" in lines, ran.stdout
    assert any(line.startswith("not found:") and "no function nope" in line for line in lines), ran.stdout


def test_spawn_map_records_every_input_and_gives_a_group_read_by_index(server, client_app, tmp_path):
    group = client_app.plus.spawn_map(range(5), [10] * 5)
    assert isinstance(group, svc.FunctionCall) and group.object_id.startswith("group-")
    assert group.num_inputs() == 5
    assert group.get(timeout=60, index=3) == 13
    assert list(group.iter()) == [10, 11, 12, 13, 14]
    assert list(group.iter(start=1, end=3)) == [11, 12]
    assert group.status() == "succeeded"
    with pytest.raises(IndexError, match=r"has 5 inputs \(0 to 4\)"):
        group.get(index=5)
    assert list(client_app.plus.spawn_map([1, 2], kwargs={"b": 100}).iter()) == [101, 102]
    ran = _elsewhere(f"import svc; print(list(svc.FunctionCall.from_id({group.object_id!r}).iter(start=3)))", tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[13, 14]"


def test_spawn_map_refuses_an_input_that_does_not_pickle_and_cancels_a_held_group(server, client_app, tmp_path):
    import threading

    with pytest.raises(TypeError, match=r"input 1 of spawn_map cannot be pickled: a value of type _thread.lock"):
        client_app.plus.spawn_map([1, threading.Lock()])
    with pytest.raises(TypeError, match=r"argument 2 is not iterable"):
        client_app.plus.spawn_map([1], 2)
    with pytest.raises(TypeError, match=r"kwargs must be a dict of keyword arguments for every call, not list"):
        client_app.plus.spawn_map([1], kwargs=[("b", 1)])
    gate = tmp_path / "gate"
    held = client_app.held.spawn_map([str(gate)] * 2, [1, 2])
    assert held.status() == "running"
    held.cancel()
    assert held.status() == "cancelled"
    with pytest.raises(svc.CallCancelledError):
        held.get(index=1)
