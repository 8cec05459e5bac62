"""``python -m svc.runtime once``: call a function once, with no arguments, and exit.

What a scheduled run is on Nomad: the periodic batch job's task runs this
(jobs/periodic.ts). ``on_start`` runs first when the function has one; a
``context`` parameter gets a Context with method ``SCHEDULE``. What the function
prints goes to the task's stdout and stderr (the allocation's logs); an
exception's traceback goes to stderr and the exit code is EXIT_CALL_FAILED, so
that Nomad marks the run failed.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

from .._context import Context
from .._hints import CONTEXT_PARAMETER
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from ._startup import EXIT_ON_START_FAILED, EXIT_USAGE, say

EXIT_CALL_FAILED = 6
"""The function raised: the run failed (its traceback is on stderr)."""


def run_once(workload: Workload) -> int:
    if workload.kind != "function":
        say(f"{workload.name!r} is a {workload.kind}, not a function: only functions run once")
        return EXIT_USAGE
    on_start_value: Any = None
    on_start = workload.options.get("on_start")
    if on_start is not None:
        try:
            on_start_value = on_start()
        except Exception as error:  # noqa: BLE001 - the user's code: report it, exit with its code
            sys.stderr.write(format_user_traceback(error))
            say("on_start failed (traceback above)")
            return EXIT_ON_START_FAILED
    target = workload.target
    kwargs: dict[str, Any] = {}
    if CONTEXT_PARAMETER in inspect.signature(target).parameters:
        kwargs[CONTEXT_PARAMETER] = Context(
            workload=workload.name, method="SCHEDULE", path="/", on_start_value=on_start_value
        )
    try:
        result = target(**kwargs)
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    except Exception as error:  # noqa: BLE001 - the user's code: the run failed
        sys.stderr.write(format_user_traceback(error))
        say(f"{workload.name} raised {type(error).__name__}: {error}")
        return EXIT_CALL_FAILED
    return 0


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
