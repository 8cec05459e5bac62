"""``python -m svc.manifest <file.py | module>``: print the manifest of an app.

Exit codes: 0 the manifest is on stdout; 1 the module could not be imported (the
traceback is on stderr); 2 the command was called wrongly (one line on stderr).
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO

from .._loading import EntryError, find_app, import_entry, resolve_target
from .._tracebacks import format_user_traceback
from ._build import build_manifest

USAGE = """usage: python -m svc.manifest <file.py | module>

Imports the module that defines a svc.App and prints its Manifest v1 JSON on stdout.
  <file.py>  a file: its folder is the project root, its stem the module
  <module>   a module importable from the current folder, such as app or pkg.app
Output printed by the module while it is imported goes to stderr.
Exit codes: 0 success, 1 the module failed to import, 2 wrong usage or no App.
"""


def _detach_stdout() -> IO[str]:
    """Keeps the real stdout for the manifest and sends everything else to stderr.

    fd 1 itself is pointed at stderr, so even output that bypasses sys.stdout (a C
    extension, a subprocess started at import) cannot corrupt the JSON.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        return sys.stdout
    sys.stdout = sys.stderr
    return os.fdopen(saved, "w", encoding="utf-8")


def _fail(message: str) -> int:
    print(f"svc manifest: {message}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if len(argv) != 1:
        sys.stderr.write(USAGE)
        return 2
    out = _detach_stdout()
    try:
        root, module_name = resolve_target(argv[0])
    except EntryError as error:
        return _fail(str(error))
    try:
        module = import_entry(root, module_name)
    except EntryError as error:
        return _fail(str(error))
    except SystemExit as exit_:
        print(f"svc manifest: importing {module_name!r} called sys.exit({exit_.code!r})", file=sys.stderr)
        return 1
    except Exception as error:
        sys.stderr.write(format_user_traceback(error))
        print(f"svc manifest: could not import {module_name!r} (traceback above)", file=sys.stderr)
        return 1
    try:
        app = find_app(module)
    except EntryError as error:
        return _fail(str(error))
    out.write(json.dumps(build_manifest(app, module_name), indent=2) + "\n")
    out.flush()
    return 0
