"""The steps every way of starting shares: load the workload, warm it (``on_start``), build its app.

Each step reports its own failure on stderr and raises ``Exit`` with the runtime's exit code,
so the supervisor, the checkpoint template and a worker fail the same way.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _image_files
from .._loading import EntryError, find_app, import_entry
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from . import create_app
from ._lifecycle import run_on_start, run_worker_enter

EXIT_SERVER_FAILED = 1
EXIT_USAGE = 2
EXIT_IMPORT_FAILED = 3
EXIT_MISSING_DEPENDENCIES = 4
EXIT_ON_START_FAILED = 5

NOT_WARMED: Any = object()
"""Marks a process that has not run ``on_start``: each worker then runs it itself."""


class Exit(Exception):
    """Stop starting: the reason is already on stderr."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def say(message: str) -> None:
    print(f"svc runtime: {message}", file=sys.stderr, flush=True)


def load_workload(root: str, entry: str, name: str) -> Workload:
    """Imports the user's module and finds the workload (exit 3: import failed, 2: not found)."""
    _forget_shadowed_entry(root, entry)
    # The image is built: its requirements files need not be (and may not be) in the bundle.
    _image_files.stop_reading()
    try:
        module = import_entry(root, entry)
    except EntryError as error:
        say(str(error))
        raise Exit(EXIT_IMPORT_FAILED) from None
    except (Exception, SystemExit) as error:
        sys.stderr.write(format_user_traceback(error))
        say(f"could not import {entry!r} from {root} (traceback above)")
        raise Exit(EXIT_IMPORT_FAILED) from None
    try:
        app = find_app(module)
    except EntryError as error:
        say(str(error))
        raise Exit(EXIT_USAGE) from None
    workload = next((w for w in app.workloads if w.name == name), None)
    if workload is None:
        names = ", ".join(w.name for w in app.workloads) or "none"
        say(f"app {app.name!r} has no workload named {name!r} (it has: {names})")
        raise Exit(EXIT_USAGE)
    return workload


def _forget_shadowed_entry(root: str, entry: str) -> None:
    """An entry module named like a module the runtime already imported (``queue.py``) is the user's.

    The runtime imports its own dependencies first (see ``preload_server``); without this,
    importing the entry would return the standard module. The runtime keeps its references
    to the standard one; from now on the name means the project's module, as it would for
    ``python app.py`` in the project folder.
    """
    top = entry.split(".")[0]
    loaded = sys.modules.get(top)
    if loaded is None:
        return
    project = os.path.abspath(root)
    origin = os.path.abspath(getattr(loaded, "__file__", None) or "")
    if origin.startswith(project + os.sep):
        return
    if os.path.exists(os.path.join(project, f"{top}.py")) or os.path.isdir(os.path.join(project, top)):
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[name]


def preload_server() -> ImportError | None:
    """Imports uvicorn and what it loads lazily, before the user's code and before any fork.

    Before the user's code: the project folder then comes first on ``sys.path``, and a
    project file named like a standard module (``queue.py``) must not replace it for the
    runtime. Before any fork: workers share these modules instead of importing them each.
    Returns the ImportError when the runtime's requirements are missing (reported later, so
    that an import failure in the user's module is still reported as such).
    """
    try:
        from . import _serve
    except ImportError as error:
        return error
    _serve.preload()
    return None


def require_server(missing: ImportError | None) -> None:
    if missing is not None:
        say(f"{missing}: install the runtime's requirements (sdk/python/svc/runtime/requirements.txt)")
        raise Exit(EXIT_MISSING_DEPENDENCIES)


def warm(workload: Workload) -> Any:
    """Runs the workload's ``on_start`` and returns its value (exit 5 with the traceback if it fails)."""
    try:
        return run_on_start(workload)
    except (Exception, SystemExit) as error:
        sys.stderr.write(format_user_traceback(error))
        say(f"{'@svc.enter()' if workload.cls is not None else 'on_start'} of {workload.name} failed (traceback above)")
        raise Exit(EXIT_ON_START_FAILED) from None


def enter_worker(workload: Workload, value: Any) -> Any:
    """What a worker runs after any fork, before it serves: a class's other ``@svc.enter()`` methods (exit 5
    with the traceback if one fails); ``value`` unchanged."""
    try:
        run_worker_enter(workload, value)
    except (Exception, SystemExit) as error:
        sys.stderr.write(format_user_traceback(error))
        say(f"@svc.enter() of {workload.name} failed (traceback above)")
        raise Exit(EXIT_ON_START_FAILED) from None
    return value


def make_app(workload: Workload, on_start_value: Any) -> Any:
    """The workload's ASGI app (exit 2 for a kind this runtime does not serve)."""
    try:
        return create_app(workload, on_start_value=on_start_value)
    except ValueError as error:
        say(str(error))
        raise Exit(EXIT_USAGE) from None
