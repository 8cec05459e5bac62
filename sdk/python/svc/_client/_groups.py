"""``spawn_map()`` and a call group's results (docs/api.md, "Call groups").

The inputs are read lazily and sent in batches (at most 1,000 inputs and 768 KiB of base64 a
request, under the API's 1 MiB body) to ``POST /api/v1/call-groups`` and then ``…/inputs``; the
server records each input as a spawned call before it answers, so ``spawn_map`` returns once the
last batch is recorded, and the group runs on without its caller. An input that cannot be read or
pickled stops ``spawn_map`` with its error, and the group's recorded inputs are cancelled: a group
is all of its inputs or none of them.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

from ._http import Api
from ._map_inputs import pickled_input
from ._remote import Target

_BATCH_INPUTS = 1000
_BATCH_BYTES = 768 * 1024


def spawn_group(target: Target, inputs: Iterator[tuple[Any, ...]], kwargs: dict[str, Any]) -> str:
    """Records a group of calls of ``target``'s function, one per input; the group's id."""
    code = {name: value for name, value in target.code().items() if name != "inlineSecrets"}
    group: str | None = None
    batch: list[str] = []
    size = 0

    def send(more: bool) -> None:
        nonlocal group, batch, size
        body: dict[str, Any] = {"inputs": batch, "more": more}
        if group is None:
            answer = target.api.request(
                "POST", "/call-groups", json_body={**code, "function": target.function, **body}, ok=(202,)
            )
            group = str(answer.json()["group"]["id"])
        else:
            target.api.request("POST", f"/call-groups/{group}/inputs", json_body=body, ok=(200,))
        batch, size = [], 0

    try:
        for index, args in enumerate(inputs):
            pickled = base64.b64encode(
                pickled_input(index, args, kwargs, target.script_entry, "spawn_map", target.method)
            ).decode("ascii")
            if batch and (len(batch) == _BATCH_INPUTS or size + len(pickled) > _BATCH_BYTES):
                send(more=True)
            batch.append(pickled)
            size += len(pickled)
        send(more=False)
    except BaseException:
        if group is not None:
            cancel_group(target.api, group)
        raise
    assert group is not None
    return group


def group_view(api: Api, group: str) -> dict[str, Any]:
    """The group as the server describes it: ``inputs``, ``closed``, ``status``, ``counts``."""
    view: dict[str, Any] = api.request("GET", f"/call-groups/{group}").json()["group"]
    return view


def member_id(api: Api, group: str, index: int) -> str:
    """The call id of input ``index``; ``IndexError`` when the group has no such input."""
    if index < 0:
        raise IndexError(f"index {index}: a call group's inputs are numbered from 0")
    calls = api.request("GET", f"/call-groups/{group}/calls?from={index}&limit=1").json()["calls"]
    if not calls or calls[0]["group"]["index"] != index:
        inputs = group_view(api, group)["inputs"]
        raise IndexError(f"index {index}: the call group {group} has {inputs} inputs (0 to {inputs - 1})")
    return str(calls[0]["id"])


def member_ids(api: Api, group: str, start: int, end: int | None) -> Iterator[str]:
    """The call ids of inputs ``start`` to ``end`` (exclusive; None: the last), in order, a page at a time."""
    position = start
    while end is None or position < end:
        limit = 1000 if end is None else min(1000, end - position)
        page = api.request("GET", f"/call-groups/{group}/calls?from={position}&limit={limit}").json()["calls"]
        if not page:
            return
        for call in page:
            yield str(call["id"])
        position = int(page[-1]["group"]["index"]) + 1


def cancel_group(api: Api, group: str) -> int:
    """Closes the group and cancels its inputs that have not ended; how many."""
    cancelled: int = api.request("DELETE", f"/call-groups/{group}").json()["cancelled"]
    return cancelled
