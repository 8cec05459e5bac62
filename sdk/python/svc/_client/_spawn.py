"""``spawn()`` and ``FunctionCall``: calls that outlive their caller (docs/api.md, "Spawned calls").

A spawn sends the pickled call and its code (the project's manifest and uploaded bundle, or the
deployed app) to ``POST /api/v1/calls``; the server records it before it answers, runs it at
least once and keeps its outcome. ``get`` asks ``GET /api/v1/calls/<id>/outcome`` with
``Prefer: wait=<seconds>`` until the call ended or the time-out passed; ``cancel`` deletes it.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from . import _pickles
from ._credentials import find_credentials
from ._http import Api
from ._remote import Target, raise_remote, unpickled_result

#: The longest one outcome request waits on the server; ``get`` asks again for longer waits.
_WAIT_PER_REQUEST = 50.0
#: What a call id looks like (core/services/calls/types.ts).
CALL_ID_LENGTH = len("call-") + 20


def spawn_call(target: Target, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """Records one call of ``target``'s function on the server; its id."""
    body = _pickles.dump_call(args, kwargs, target.script_entry, target.method)
    # Secret.from_dict values are never stored: the server refuses such a function with its reason.
    code = {name: value for name, value in target.code().items() if name != "inlineSecrets"}
    answer = target.api.request(
        "POST",
        "/calls",
        json_body={**code, "function": target.function, "input": base64.b64encode(body).decode("ascii")},
        ok=(202,),
    )
    call_id: str = answer.json()["call"]["id"]
    return call_id


def api_for_calls() -> Api:
    return Api(find_credentials())


def call_outcome(api: Api, call_id: str, script_entry: str | None, timeout: float | None) -> Any:
    """The call's result, or its exception raised; ``TimeoutError`` when it has not ended within ``timeout``."""
    frame = final_frame(api, call_id, timeout)
    if frame.get("type") == "result":
        return unpickled_result(frame, script_entry)
    raise_remote(frame, script_entry)


def final_frame(api: Api, call_id: str, timeout: float | None) -> dict[str, Any]:
    """The call's final frame (``/outcome``), asked for in waits of at most a minute each;
    ``TimeoutError`` when it has not ended within ``timeout``, ``CallCancelledError`` once cancelled.
    The exported clients' ``EndpointCall.get()`` reads a deferred request's answer with it too."""
    deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
    while True:
        left = _WAIT_PER_REQUEST if deadline is None else min(_WAIT_PER_REQUEST, max(0.0, deadline - time.monotonic()))
        if 0 < left < 1:
            # Prefer: wait takes whole seconds, and wait=0 answers at once: sleep out the rest rather than ask in a loop.
            time.sleep(left)
            left = 0.0
        answer = api.request(
            "GET",
            f"/calls/{call_id}/outcome",
            headers={"Prefer": f"wait={int(left)}"},
            timeout=left + 30,
            ok=(200, 202),
        )
        if answer.status == 200:
            frame: dict[str, Any] = answer.json()["frame"]
            return frame
        if deadline is not None and time.monotonic() >= deadline:
            status = answer.json()["call"]["status"]
            raise TimeoutError(
                f"the call {call_id} has not ended within {timeout:g} s (it is {status}); get() it again later"
            )


def call_status(api: Api, call_id: str) -> dict[str, Any]:
    """The call as the server describes it (docs/api.md, "Spawned calls")."""
    view: dict[str, Any] = api.request("GET", f"/calls/{call_id}").json()["call"]
    return view


def cancel_call(api: Api, call_id: str) -> None:
    """Cancels the call; ``InvalidRequestError`` (``conflict``) when it has ended already."""
    api.request("DELETE", f"/calls/{call_id}", ok=(204,))
