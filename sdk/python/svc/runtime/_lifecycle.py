"""``on_start``: the workload's set-up function, run once per worker before it takes requests.

The process model decides where it runs (in each worker, or once in a checkpoint
template that later workers are forked from) and hands the value to
``create_app(workload, on_start_value=...)``; handlers read it as
``context.on_start_value``.
"""

from __future__ import annotations

import inspect
from typing import Any

from .._workloads import Workload


def run_on_start(workload: Workload) -> Any:
    """Runs ``workload``'s ``on_start`` once and returns its value; None without one.

    The user's exception propagates unchanged (the caller prints its traceback and
    fails the worker). A result that is awaitable (an ``on_start`` object whose call
    returns a coroutine slipped past the decorator's check) is a TypeError: nothing
    runs it, since no event loop exists yet.
    """
    on_start = workload.options.get("on_start")
    if on_start is None:
        return None
    value = on_start()
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if callable(close):
            close()  # no "coroutine was never awaited" warning on top of the error
        raise TypeError(
            f"on_start of {workload.name!r} returned an awaitable ({type(value).__name__}); "
            "on_start runs before the event loop starts, so it must do its work synchronously"
        )
    return value
