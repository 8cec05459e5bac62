"""``svc.FunctionCall``: a call that outlives its caller, from ``f.spawn(...)`` (docs/sdk.md,
"Calls that outlive the caller"). The server records the call before ``spawn`` returns, runs it
at least once (a restart of svc mid-call runs it again while the function's ``retries`` allow)
and keeps its outcome for a day by default; any process signed in to the workspace can read it
with ``FunctionCall.from_id(id)``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_CALL_ID = re.compile(r"call-[0-9a-f]{20}")
_GROUP_ID = re.compile(r"group-[0-9a-f]{20}")


class FunctionCall:
    """A spawned call (``f.spawn(...)``), or a call group (``f.spawn_map(...)``: one input per call):
    ``object_id`` names it; ``get()`` waits for a result; ``cancel()`` gives it up."""

    def __init__(self, object_id: str, *, _script_entry: str | None = None) -> None:
        if not is_call_id(object_id) and not _is_group_id(object_id):
            raise ValueError(
                f"{object_id!r} is not a call id: call ids look like call-0123456789abcdef0123 "
                "(FunctionCall.object_id, or the call_id of POST …/calls), or group-0123456789abcdef0123 "
                "for a spawn_map"
            )
        self.object_id = object_id
        # The module `python app.py` ran as __main__: its classes travel by that name (svc._client._pickles).
        self._script_entry = _script_entry

    @classmethod
    def from_id(cls, object_id: str) -> FunctionCall:
        """The call (or call group) with this id, spawned by any process of the same workspace."""
        return cls(object_id)

    def get(self, timeout: float | None = None, *, index: int = 0) -> Any:
        """Waits for the call to end and returns its result, or raises its exception.

        ``timeout`` (seconds; None waits as long as it takes): the builtin ``TimeoutError`` when the
        call has not ended by then (it goes on running: ``get()`` it again later). A cancelled call
        raises ``svc.CallCancelledError``; one whose outcome the server no longer keeps,
        ``svc.CallExpiredError``. ``index``: which input of a ``spawn_map`` (0 for a ``spawn``).
        """
        from ._client._spawn import api_for_calls, call_outcome

        api = api_for_calls()
        return call_outcome(api, self._call_of(api, index), self._script_entry, timeout)

    def iter(self, *, start: int = 0, end: int | None = None) -> Iterator[Any]:
        """The results of inputs ``start`` to ``end`` (exclusive; None: to the last) in their order,
        each waited for; the first that raised raises here."""
        from ._client._groups import member_ids
        from ._client._spawn import api_for_calls, call_outcome

        api = api_for_calls()
        ids = member_ids(api, self.object_id, start, end) if self._is_group() else iter([self.object_id][start:end])
        for call_id in ids:
            yield call_outcome(api, call_id, self._script_entry, None)

    def num_inputs(self) -> int:
        """How many inputs it has: 1 for a ``spawn``, the inputs of a ``spawn_map``."""
        if not self._is_group():
            return 1
        from ._client._groups import group_view
        from ._client._spawn import api_for_calls

        return int(group_view(api_for_calls(), self.object_id)["inputs"])

    def cancel(self) -> None:
        """Cancels the call: a queued call never starts, a running one is given up. A group's
        inputs that have not ended are all cancelled.

        ``svc.InvalidRequestError`` (code ``conflict``) when a call (not a group) has ended already.
        """
        from ._client._spawn import api_for_calls, cancel_call

        if self._is_group():
            from ._client._groups import cancel_group

            cancel_group(api_for_calls(), self.object_id)
        else:
            cancel_call(api_for_calls(), self.object_id)

    def status(self) -> str:
        """``queued``, ``running``, ``succeeded``, ``failed``, ``cancelled`` or ``expired``; a group is
        ``running`` until each input ended, then ``failed`` or ``cancelled`` if one was, else ``succeeded``."""
        from ._client._spawn import api_for_calls, call_status

        if self._is_group():
            from ._client._groups import group_view

            return str(group_view(api_for_calls(), self.object_id)["status"])
        status: str = call_status(api_for_calls(), self.object_id)["status"]
        return status

    @staticmethod
    def gather(*calls: FunctionCall) -> list[Any]:
        """The results of ``calls`` in their order, waiting for each; the first failure raises."""
        return [call.get() for call in calls]

    def _is_group(self) -> bool:
        return _is_group_id(self.object_id)

    def _call_of(self, api: Any, index: int) -> str:
        """The call id of input ``index``: the call itself for a ``spawn`` (whose only index is 0)."""
        if self._is_group():
            from ._client._groups import member_id

            return member_id(api, self.object_id, index)
        if index != 0:
            raise IndexError(f"index {index}: {self.object_id} is one call (from spawn), whose only input is 0")
        return self.object_id

    def __repr__(self) -> str:
        return f"<svc.FunctionCall {self.object_id}>"


def _is_group_id(value: object) -> bool:
    return isinstance(value, str) and _GROUP_ID.fullmatch(value) is not None


def is_call_id(value: object) -> bool:
    """``call-`` and 20 hex digits (the annotation says str; untyped callers may pass anything).

    The clients ``svc app export`` writes check the ids given to ``<endpoint>.call_from_id`` with it too."""
    return isinstance(value, str) and _CALL_ID.fullmatch(value) is not None
