"""``<function>.map(...)``, ``.starmap(...)`` and ``.for_each(...)`` against a real `svc server`: results in
input order or as they come, exceptions raised or returned, prints echoed, bad inputs named at the call,
an early close cancelling the map, and a long generator read only a bounded way ahead."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import svc
from svc._client import _map

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))


def test_results_come_in_input_order_from_several_containers(server, client_app):
    assert list(client_app.jitter.map(range(200))) == [x * x for x in range(200)]
    [run] = [run for run in server.runs() if run["function"] == "jitter"]
    assert run["calls"]["completed"] >= 200


def test_order_outputs_false_yields_every_result_as_it_comes(server, client_app):
    assert sorted(client_app.jitter.map(range(100), order_outputs=False)) == [x * x for x in range(100)]


def test_starmap_spreads_each_tuple_and_map_zips_its_iterables(server, client_app):
    assert list(client_app.plus.starmap([(1, 2), (3, 4), [5]])) == [3, 7, 5]
    assert list(client_app.plus.map([1, 2, 3], (10, 20))) == [11, 22], "zip stops at the shortest"


def test_an_exception_is_raised_with_its_remote_traceback_and_cancels_the_map(server, client_app, monkeypatch):
    cancelled = _spy_cancels(monkeypatch)
    with pytest.raises(client_app.Refused) as caught:
        list(client_app.picky.map(range(40)))
    assert str(caught.value) == "not 3"
    cause = caught.value.__cause__
    assert isinstance(cause, svc.RemoteTraceback) and "raise Refused" in cause.traceback
    [map_id] = cancelled
    status, answer = server.api("GET", f"/maps/{map_id}")
    assert status == 200 and answer["map"]["status"] == "cancelled", answer


def test_return_exceptions_yields_each_exception_in_its_result_s_place(server, client_app):
    results = list(client_app.picky.map(range(10), return_exceptions=True))
    assert [type(r).__name__ for r in results] == ["int"] * 3 + ["Refused"] + ["int"] * 4 + ["Refused", "int"]
    assert str(results[8]) == "not 8" and isinstance(results[8].__cause__, svc.RemoteTraceback)
    assert [r for r in results if isinstance(r, int)] == [0, 1, 2, 4, 5, 6, 7, 9]


def test_an_svc_side_failure_is_returned_as_its_svc_exception(server, client_app, capfd):
    [crashed] = client_app.crash.starmap([()], return_exceptions=True)
    assert isinstance(crashed, svc.WorkerCrashedError) and crashed.code == "worker_crashed", crashed
    assert capfd.readouterr().out == "crashing\n"


def test_for_each_runs_every_input_and_raises_the_first_failure_unless_ignored(server, client_app, capfd):
    assert client_app.picky.for_each(range(3)) is None
    out = capfd.readouterr().out
    assert sorted(out.splitlines()) == ["picking 0", "picking 1", "picking 2"], "prints are echoed here"
    with pytest.raises(client_app.Refused):
        client_app.picky.for_each(range(5))
    assert client_app.picky.for_each(range(5), ignore_exceptions=True) is None


def test_bad_inputs_are_refused_at_the_call_or_named_by_index(server, client_app):
    with pytest.raises(TypeError, match=r"plus\.map\(\): argument 2 is not iterable \(int\)"):
        client_app.plus.map([1], 5)
    with pytest.raises(TypeError, match="takes at least one iterable"):
        client_app.plus.map()
    with pytest.raises(TypeError, match=r"add is an endpoint: \.map\(\) runs functions"):
        client_app.add.map([1])
    lock = threading.Lock()
    with pytest.raises(TypeError, match=r"input 2 of the map cannot be pickled: a value of type _thread\.lock"):
        list(client_app.plus.map([1, 2, lock]))
    with pytest.raises(TypeError, match=r"plus\.starmap\(\): input 1 is not a tuple of arguments \(int\)"):
        list(client_app.plus.starmap([(1,), 2]))


def test_closing_the_generator_early_cancels_the_inputs_not_started(server, client_app, monkeypatch, tmp_path):
    cancelled = _spy_cancels(monkeypatch)
    gate = tmp_path / "open"
    results = client_app.held.map([str(gate)] * 30, range(30))
    assert next(results) == 0
    results.close()
    [map_id] = cancelled
    status, answer = server.api("GET", f"/maps/{map_id}")
    assert status == 200, answer
    view = answer["map"]
    assert view["status"] == "cancelled" and view["cancelReason"] == "deleted"
    assert view["inputs"]["cancelled"] >= 1
    assert view["inputs"]["received"] == sum(
        view["inputs"][k] for k in ("queued", "running", "succeeded", "failed", "cancelled")
    )
    gate.write_text("")  # the inputs running finish


def test_a_long_generator_is_read_only_a_bounded_way_ahead_of_the_results(server, client_app):
    produced = 0

    def inputs() -> Iterator[int]:
        nonlocal produced
        for x in range(12_000):
            produced += 1
            yield x

    ahead = 0
    for k, result in enumerate(client_app.plus.map(inputs())):
        assert result == k
        ahead = max(ahead, produced - k)
    assert produced == 12_000
    # The client's queue (1000) and batch in flight (1000), the batch the server holds (1000), its window
    # (18 for one container), and the results in its buffer (36 lines) and in the sockets not read yet:
    # a few thousand (about 2,000 on an idle machine), not the 12,000.
    assert ahead <= 6_000, ahead


def _spy_cancels(monkeypatch) -> list[str]:
    """Records the ids of the maps the client cancels (and cancels them as it would)."""
    cancelled: list[str] = []
    cancel = _map._cancel

    def record(api, map_id: str) -> None:
        cancelled.append(map_id)
        cancel(api, map_id)

    monkeypatch.setattr(_map, "_cancel", record)
    return cancelled
