"""``<function>.map(...)``, ``.starmap(...)`` and ``.for_each(...)``: one remote call per input, streamed both ways.

On the run ``.remote()`` uses (the same project, bundle and run: ``_remote.with_run``), a map
is created (``POST /api/v1/runs/:id/maps``), its outputs are opened
(``GET /api/v1/maps/:id/outputs``, NDJSON as they happen) and its inputs are sent in batches
from threads of their own (``_map_inputs``). The caller's thread reads the outputs: each
``log`` frame is printed here at once, as ``.remote()`` does, and each result is yielded, in
input order unless ``order_outputs=False`` (only results that came out of order are held). An
error frame raises the remote exception as ``.remote()`` would and cancels the map, unless
``return_exceptions=True``, which yields the exception in the result's place.

Leaving the generator early (``close()``, ``break``, Ctrl-C, an exception in the caller) cancels
the map: ``DELETE /api/v1/maps/:id`` (inputs not started are cancelled, those running finish on
their own), and the sender stops.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from typing import Any

from .._json import is_object
from ..exceptions import Error, NotFoundError, ServerUnreachableError, StartFailedError
from ._errors import error_from_answer
from ._http import Api, Stream, open_url
from ._map_inputs import InputSender
from ._progress import BuildProgress
from ._remote import (
    END_TIMEOUT,
    Echo,
    Run,
    RunGone,
    Target,
    build_progress,
    echo_locally,
    forget_run,
    read_frames,
    remote_exception,
    unpickled_result,
    with_run,
)

_CANCELLED = {
    "deleted": "someone cancelled it (DELETE /api/v1/maps/<id>)",
    "run_ended": "its run ended (deleted, idle, or the server stopped)",
    "unread": "nobody read its outputs for 30 s",
}


def map_remote(
    make_target: Callable[[], Target],
    inputs: Iterator[tuple[Any, ...]],
    *,
    order_outputs: bool = True,
    return_exceptions: bool = False,
    echo: Echo = echo_locally,
) -> Iterator[Any]:
    """The results of the target's function called remotely with each argument tuple of ``inputs``.

    The map starts (``make_target()`` finds the project and the server) when the first result is asked for.
    """
    return _results(make_target, inputs, order_outputs, return_exceptions, echo)


def _results(
    make_target: Callable[[], Target],
    inputs: Iterator[tuple[Any, ...]],
    order_outputs: bool,
    return_exceptions: bool,
    echo: Echo,
) -> Generator[Any, None, None]:
    target = make_target()
    run, map_id, outputs, progress = with_run(target, lambda run, created: _open_map(target, run, created))
    api = target.api

    def stopped() -> None:
        # The sender failed: the map is cancelled, and the caller, reading, is woken to raise its error now.
        _cancel(api, map_id)
        outputs.close()

    sender = InputSender(api, map_id, inputs, target.script_entry, stopped, target.method)
    finished = False
    try:
        sender.start()
        frames = _frames(outputs, api, map_id, sender, progress)
        yield from _ordered(frames, target, run, sender, order_outputs, return_exceptions, echo, progress)
        finished = True
    finally:
        sender.stop()
        outputs.close()
        if progress is not None:
            progress.stop()
        if not finished:
            _cancel(api, map_id)


def _open_map(target: Target, run: Run, created: bool) -> tuple[Run, str, Stream, BuildProgress | None]:
    """Creates the map and opens its outputs; ``RunGone`` when the run this process held ended meanwhile."""
    api = target.api
    answer = api.open("POST", f"/runs/{run.id}/maps", timeout=None)
    with answer:
        data = answer.read()
    if answer.status != 201:
        error = error_from_answer(answer.status, data, f"POST /api/v1/runs/{run.id}/maps")
        if isinstance(error, NotFoundError):
            raise RunGone(error)
        raise error
    map_id = str(json.loads(data)["map"]["id"])
    # Outputs are opened before any input is sent: a map nobody reads is cancelled after 30 s.
    outputs = api.open("GET", f"/maps/{map_id}/outputs", headers={"Accept": "application/x-ndjson"}, timeout=None)
    if outputs.status != 200:
        with outputs:
            raise error_from_answer(outputs.status, outputs.read(), f"GET /api/v1/maps/{map_id}/outputs")
    progress = build_progress(run, target.function) if created else None
    return run, map_id, outputs, progress


def _frames(
    outputs: Stream, api: Api, map_id: str, sender: InputSender, progress: BuildProgress | None
) -> Iterator[dict[str, Any]]:
    """The outputs' frames as they come; a sender's failure explains a connection that ended early."""

    def broken() -> BaseException:
        if sender.error is not None:
            return sender.error
        return ServerUnreachableError(
            f"the connection to {api.where} broke while the map {map_id} ran, before its end",
            hint="Is the server still running?",
        )

    return read_frames(outputs, progress, broken)


def _ordered(
    frames: Iterator[dict[str, Any]],
    target: Target,
    run: Run,
    sender: InputSender,
    order_outputs: bool,
    return_exceptions: bool,
    echo: Echo,
    progress: BuildProgress | None,
) -> Generator[Any, None, None]:
    """Yields each input's result (or exception) in input order, or as they come; returns at the end frame."""
    held: dict[int, Any] = {}  # results that came before those of lower indices
    following = 0
    entry = target.script_entry
    for frame in frames:
        kind = frame.get("type")
        if kind == "log":
            echo(str(frame.get("stream", "stdout")), str(frame.get("line", "")))
            continue
        if kind == "end":
            _check_end(frame, sender, target)
            return
        if kind not in ("result", "error"):
            continue
        value = unpickled_result(frame, target.script_entry) if kind == "result" else remote_exception(frame, entry)
        if isinstance(value, StartFailedError):  # the run could not start: every input would fail so
            if progress is not None:
                progress.stop()
                progress.show_rest()
            forget_run(target, run)
            raise value
        if kind == "error" and not return_exceptions:
            raise value
        if not order_outputs:
            yield value
            continue
        held[int(frame["index"])] = value
        while following in held:
            yield held.pop(following)
            following += 1


def _check_end(frame: dict[str, Any], sender: InputSender, target: Target) -> None:
    """At the end frame: the sender's failure, or the server's cancel, is raised; a map that succeeded returns."""
    if sender.error is not None:
        raise sender.error
    view = frame.get("map")
    if not is_object(view) or view.get("status") != "cancelled":
        return
    reason = _CANCELLED.get(str(view.get("cancelReason")), "it was cancelled")
    raise Error(f"the map {view.get('id')} of {target.function} ended before all its inputs were answered: {reason}.")


def _cancel(api: Api, map_id: str) -> None:
    """Cancels the map (errors ignored: the server is gone, or the map is)."""
    try:
        open_url("DELETE", api.url(f"/maps/{map_id}"), headers=api.auth(), timeout=END_TIMEOUT, where=api.where).close()
    except Exception:
        pass
