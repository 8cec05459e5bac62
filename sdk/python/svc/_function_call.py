"""``svc.FunctionCall``: a call that outlives its caller, from ``f.spawn(...)`` (docs/sdk.md,
"Calls that outlive the caller"). The server records the call before ``spawn`` returns, runs it
at least once (a restart of svc mid-call runs it again while the function's ``retries`` allow)
and keeps its outcome for a day by default; any process signed in to the workspace can read it
with ``FunctionCall.from_id(id)``."""

from __future__ import annotations

import re
from typing import Any

_CALL_ID = re.compile(r"call-[0-9a-f]{20}")


class FunctionCall:
    """A spawned call: ``object_id`` names it; ``get()`` waits for its result; ``cancel()`` gives it up."""

    def __init__(self, object_id: str, *, _script_entry: str | None = None) -> None:
        if not is_call_id(object_id):
            raise ValueError(
                f"{object_id!r} is not a call id: call ids look like call-0123456789abcdef0123 "
                "(FunctionCall.object_id, or the call_id of POST …/calls)"
            )
        self.object_id = object_id
        # The module `python app.py` ran as __main__: its classes travel by that name (svc._client._pickles).
        self._script_entry = _script_entry

    @classmethod
    def from_id(cls, object_id: str) -> FunctionCall:
        """The call with this id, spawned by any process of the same workspace."""
        return cls(object_id)

    def get(self, timeout: float | None = None) -> Any:
        """Waits for the call to end and returns its result, or raises its exception.

        ``timeout`` (seconds; None waits as long as it takes): the builtin ``TimeoutError`` when the
        call has not ended by then (it goes on running: ``get()`` it again later). A cancelled call
        raises ``svc.CallCancelledError``; one whose outcome the server no longer keeps,
        ``svc.CallExpiredError``.
        """
        from ._client._spawn import api_for_calls, call_outcome

        return call_outcome(api_for_calls(), self.object_id, self._script_entry, timeout)

    def cancel(self) -> None:
        """Cancels the call: a queued call never starts, a running one is given up.

        ``svc.InvalidRequestError`` (code ``conflict``) when it has ended already.
        """
        from ._client._spawn import api_for_calls, cancel_call

        cancel_call(api_for_calls(), self.object_id)

    def status(self) -> str:
        """``queued``, ``running``, ``succeeded``, ``failed``, ``cancelled`` or ``expired``."""
        from ._client._spawn import api_for_calls, call_status

        status: str = call_status(api_for_calls(), self.object_id)["status"]
        return status

    @staticmethod
    def gather(*calls: FunctionCall) -> list[Any]:
        """The results of ``calls`` in their order, waiting for each; the first failure raises."""
        return [call.get() for call in calls]

    def __repr__(self) -> str:
        return f"<svc.FunctionCall {self.object_id}>"


def is_call_id(value: object) -> bool:
    """``call-`` and 20 hex digits (the annotation says str; untyped callers may pass anything).

    The clients ``svc app export`` writes check the ids given to ``<endpoint>.call_from_id`` with it too."""
    return isinstance(value, str) and _CALL_ID.fullmatch(value) is not None
