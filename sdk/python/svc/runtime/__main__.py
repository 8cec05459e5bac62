"""``python -m svc.runtime --root DIR --entry MODULE --workload NAME --socket PATH``

Exit codes: 0 stopped cleanly (SIGTERM, SIGINT, lifeline); 1 the server failed;
2 wrong arguments, no App, no such workload or a kind not served yet;
3 the user's module failed to import (traceback on stderr, socket never bound);
4 the runtime's own dependencies (uvicorn) are missing.
"""

from __future__ import annotations

import argparse
import sys

from .._tracebacks import format_user_traceback
from .._loading import EntryError, find_app, import_entry
from . import create_app


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m svc.runtime", description="Serve one svc workload.")
    parser.add_argument("--root", required=True, help="project root: the folder to import the entry module from")
    parser.add_argument("--entry", required=True, help="module that defines the svc.App, e.g. app or pkg.app")
    parser.add_argument("--workload", required=True, help="name of the workload to serve")
    parser.add_argument("--socket", required=True, help="path of the Unix socket to listen on")
    return parser


def _say(message: str) -> None:
    print(f"svc runtime: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # the user's prints reach the logs line by line
        sys.stdout.reconfigure(line_buffering=True)
    try:
        module = import_entry(args.root, args.entry)
    except EntryError as error:
        _say(str(error))
        return 3
    except (Exception, SystemExit) as error:
        sys.stderr.write(format_user_traceback(error))
        _say(f"could not import {args.entry!r} from {args.root} (traceback above)")
        return 3
    try:
        app = find_app(module)
    except EntryError as error:
        _say(str(error))
        return 2
    workload = next((w for w in app.workloads if w.name == args.workload), None)
    if workload is None:
        names = ", ".join(w.name for w in app.workloads) or "none"
        _say(f"app {app.name!r} has no workload named {args.workload!r} (it has: {names})")
        return 2
    try:
        asgi_app = create_app(workload)
    except ValueError as error:
        _say(str(error))
        return 2
    try:
        from ._serve import serve
    except ImportError as error:
        _say(f"{error}: install the runtime's requirements (sdk/python/svc/runtime/requirements.txt)")
        return 4
    return serve(asgi_app, workload.name, args.socket)


if __name__ == "__main__":
    sys.exit(main())
