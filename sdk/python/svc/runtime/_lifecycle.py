"""``on_start``: the workload's set-up function, run once per worker before it takes requests.

The process model decides where it runs (in each worker, or once in a checkpoint
template that later workers are forked from) and hands the value to
``create_app(workload, on_start_value=...)``; handlers read it as
``context.on_start_value``.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from .._cls import bind_parameters, from_wire
from .._cls_handle import make_instance, run_enter
from .._workloads import Workload

CLASS_PARAMETERS_ENV = "SVC_CLASS_PARAMETERS"
"""Set by the platform for a run of a parametrized class (core/model/workload/class-parameters.ts)."""


def run_on_start(workload: Workload) -> Any:
    """Runs ``workload``'s ``on_start`` once and returns its value; None without one.

    The user's exception propagates unchanged (the caller prints its traceback and
    fails the worker). A result that is awaitable (an ``on_start`` object whose call
    returns a coroutine slipped past the decorator's check) is a TypeError: nothing
    runs it, since no event loop exists yet.
    """
    if workload.cls is not None:
        # A class's set-up is its instance: made here, with its snap=True enter methods run (the others
        # run in each worker, after any fork: enter_worker).
        return make_instance(workload.target, workload.cls, class_parameters(workload), snap=True)
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


def class_parameters(workload: Workload) -> dict[str, Any]:
    """The values of a class's parameters this container's instances get: the platform's ``SVC_CLASS_PARAMETERS``
    (a JSON object, bytes as ``{"base64": ...}``), the defaults for those it leaves out."""
    assert workload.cls is not None
    raw = os.environ.get(CLASS_PARAMETERS_ENV)
    given = {} if raw is None else from_wire(json.loads(raw))
    return bind_parameters(workload.cls, workload.target.__qualname__, given)


def run_worker_enter(workload: Workload, value: Any) -> None:
    """In a worker, after any fork: a class's ``@svc.enter()`` methods that are not ``snap=True``, on the
    instance ``run_on_start`` made (``value``). Nothing for other workloads."""
    if workload.cls is not None:
        run_enter(value, workload.cls, snap=False)
