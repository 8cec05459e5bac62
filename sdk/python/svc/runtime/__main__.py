"""``python -m svc.runtime``: one container, the checkpoint template of a workload, a zygote, or a volume keeper.

    python -m svc.runtime --root DIR --entry MODULE --workload NAME --socket PATH
    python -m svc.runtime --root DIR --entry MODULE --workload NAME --socket-dir DIR --container ID [--workers N] [--cgroup PROCS_FILE ...]
    python -m svc.runtime --root DIR --entry MODULE --workload NAME --ports P0,P1,... [--host HOST] [--workers N]
    python -m svc.runtime template --root DIR --entry MODULE --workload NAME --control PATH
    python -m svc.runtime zygote --control PATH
    python -m svc.runtime once --root DIR --entry MODULE --workload NAME
    python -m svc.runtime volume-keeper --root DIR [--host HOST] --port PORT --token-file FILE

The first form serves one worker on PATH; the second ``N`` workers (default: the workload's
``workers`` option), worker ``i`` on ``DIR/ID-w<i>.sock``. The third (TCP mode, what a Nomad
allocation runs) serves worker ``i`` on ``HOST:P<i>``; without socket options the ports and host
may come from ``SVC_WORKER_PORTS`` and ``SVC_WORKER_HOST`` (default 127.0.0.1), and flags win
over them. This process imports the app once, then forks the workers and supervises them. The
zygote imports only the runtime, and forks containers of any workload on request (``_zygote``).
``once`` calls a function once with no arguments and exits (a scheduled run on Nomad, ``_once``):
0 when it returned, 6 when it raised (traceback on stderr).
``volume-keeper`` serves the files of the volume mounted at ``--root`` over HTTP to the svc server, for
callers with the token in ``--token-file`` (a Nomad allocation that mounts a CSI volume, ``_volume_keeper``):
its exit codes are those below, 2 also when the root is not a folder or the token file is unreadable or empty.
``--cgroup`` names the ``cgroup.procs`` files of the container's cgroup, which this process joins
before it imports anything of the user's (``_cgroup``). ``--events-fd FD`` names a pipe for the platform's machine-readable events (one JSON object per
line).

Exit codes: 0 stopped cleanly (SIGTERM, SIGINT, lifeline); 1 the server failed, a worker
kept failing, a TCP port is in use, the container's cgroup could not be joined, or its volumes (``SVC_VOLUME_MOUNTS``,
``_mounts``) could not be mounted; 2 wrong arguments (ports included), no App, no such
workload or a kind not served yet; 3 the user's module failed to import (traceback on stderr, socket never bound);
4 the runtime's own dependencies (uvicorn) are missing; 5 ``on_start`` failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._cgroup import CgroupError, cgroup_files, join_cgroup
from ._container import PlacementError, TcpAddress, check_bindable, parse_ports
from ._frames import FrameWriter
from ._lifeline import has_lifeline
from ._mounts import MountError, mount_volumes

if TYPE_CHECKING:
    from .._workloads import Workload
from ._startup import EXIT_SERVER_FAILED, EXIT_USAGE, Exit, load_workload, preload_server, require_server, say

PORTS_ENV = "SVC_WORKER_PORTS"
HOST_ENV = "SVC_WORKER_HOST"
DEFAULT_HOST = "127.0.0.1"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", required=True, help="project root: the folder to import the entry module from")
    parser.add_argument("--entry", required=True, help="module that defines the svc.App, e.g. app or pkg.app")
    parser.add_argument("--workload", required=True, help="name of the workload to serve")
    parser.add_argument("--events-fd", type=int, default=None, help="pipe for events to the platform (JSON lines)")


def _container_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m svc.runtime",
        description="Serve one svc workload.",
        epilog=f"TCP mode (a Nomad allocation): without --socket/--socket-dir, worker i listens on HOST:P<i> "
        f"from --ports/--port and --host, or else ${PORTS_ENV} (comma-separated) and ${HOST_ENV} "
        f"(default {DEFAULT_HOST}); flags win over the environment.",
    )
    _common(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--socket", help="path of the Unix socket of the one worker")
    where.add_argument("--socket-dir", help="folder of the workers' sockets (<container>-w<i>.sock)")
    parser.add_argument("--container", help="container id, names the sockets (with --socket-dir)")
    tcp = parser.add_mutually_exclusive_group()
    tcp.add_argument("--port", help=f"TCP port of the one worker (instead of a socket; env: {PORTS_ENV})")
    tcp.add_argument(
        "--ports", help=f"TCP ports, one per worker, comma-separated: worker i on the i-th (env: {PORTS_ENV})"
    )
    parser.add_argument("--host", help=f"address the TCP ports listen on (env: {HOST_ENV}; default {DEFAULT_HOST})")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: the workload's option, or the number of TCP ports)",
    )
    parser.add_argument(
        "--cgroup",
        action="append",
        default=[],
        metavar="PROCS_FILE",
        help="a cgroup.procs file this process joins before anything else (repeat per hierarchy)",
    )
    return parser


def _template_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m svc.runtime template", description="Warm a workload once and fork containers from it."
    )
    _common(parser)
    parser.add_argument("--control", required=True, help="Unix socket to take fork requests on")
    return parser


def _zygote_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m svc.runtime zygote",
        description="Import the runtime once and fork containers of any workload from it.",
    )
    parser.add_argument("--control", required=True, help="Unix socket to take fork requests on")
    parser.add_argument("--events-fd", type=int, default=None, help="pipe for events to the platform (JSON lines)")
    return parser


def _once_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m svc.runtime once",
        description="Call a function once with no arguments, then exit (a scheduled run).",
    )
    _common(parser)
    return parser


def _volume_keeper_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m svc.runtime volume-keeper",
        description="Serve the files of one volume over HTTP to the svc server (a CSI volume's allocation).",
    )
    parser.add_argument("--root", required=True, help="the folder the volume is mounted on")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    parser.add_argument("--port", required=True, type=int, help="TCP port to listen on")
    parser.add_argument("--token-file", required=True, help="file holding the token callers must send as a Bearer")
    return parser


def _run_volume_keeper(argv: list[str]) -> int:
    parser = _volume_keeper_parser()
    args = parser.parse_args(argv)
    if not 1 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a TCP port: give one from 1 to 65535")
    if not os.path.isdir(args.root):
        parser.error(f"--root {args.root} is not a folder: give the folder the volume is mounted on")
    try:
        with open(args.token_file, encoding="utf-8") as file:
            token = file.read().strip()
    except (OSError, UnicodeDecodeError) as error:
        parser.error(f"--token-file {args.token_file} cannot be read ({error}): give a readable file holding the token")
    if not token:
        parser.error(f"--token-file {args.token_file} is empty: write the token callers send in it")
    _line_buffered()
    try:
        require_server(preload_server())
    except Exit as error:
        return error.code
    from ._volume_keeper import serve_keeper

    return serve_keeper(args.root, args.host, args.port, token)


def _run_once(argv: list[str]) -> int:
    args = _once_parser().parse_args(argv)
    _line_buffered()
    os.environ.pop("PYTHONSAFEPATH", None)
    try:
        workload = load_workload(args.root, args.entry, args.workload)
    except Exit as error:
        return error.code
    from ._once import run_once

    return run_once(workload)


def _line_buffered() -> None:
    for stream in (sys.stdout, sys.stderr):
        # Line by line, each line in one write: the workers share these pipes, and a line
        # written in pieces (print writes its text, then the newline) would interleave.
        reconfigure = getattr(stream, "reconfigure", None)  # a replaced stream may lack it
        if reconfigure is not None:
            reconfigure(line_buffering=True, write_through=False)


def _run_zygote(argv: list[str]) -> int:
    args = _zygote_parser().parse_args(argv)
    _line_buffered()
    events = FrameWriter(args.events_fd)
    os.environ.pop("PYTHONSAFEPATH", None)
    try:
        require_server(preload_server())
    except Exit as error:
        return error.code
    from ._zygote import run_zygote

    return run_zygote(args.control, events)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["zygote"]:
        return _run_zygote(argv[1:])
    if argv[:1] == ["once"]:
        return _run_once(argv[1:])
    if argv[:1] == ["volume-keeper"]:
        return _run_volume_keeper(argv[1:])
    template = argv[:1] == ["template"]
    parser = _template_parser() if template else _container_parser()
    args = parser.parse_args(argv[1:] if template else argv)
    if not template:
        # First of all: the user's code, and every worker, run inside the container's limits.
        try:
            files = cgroup_files(args.cgroup)
        except CgroupError as error:
            parser.error(f"--cgroup: {error}")
        try:
            join_cgroup(files)
        except CgroupError as error:
            say(str(error))
            return EXIT_SERVER_FAILED
        _check_placement(parser, args)
        try:
            _tcp_placement(args, os.environ)
        except PlacementError as error:
            say(str(error))
            return EXIT_USAGE
        if args.tcp:
            try:
                check_bindable(args.tcp)
            except PlacementError as error:
                say(str(error))
                return EXIT_SERVER_FAILED
    # Before the app is imported (a template's forks share its namespace): its code may read its volumes at import.
    try:
        mount_volumes(args.root, getattr(args, "socket_dir", None))
    except MountError as error:
        say(str(error))
        return EXIT_SERVER_FAILED
    _line_buffered()
    events = FrameWriter(args.events_fd)
    # The platform starts us with PYTHONSAFEPATH (no project file shadows the runtime's own
    # imports); the user's code and its subprocesses get the usual sys.path rules back.
    os.environ.pop("PYTHONSAFEPATH", None)
    missing = preload_server()
    try:
        workload = load_workload(args.root, args.entry, args.workload)
        require_server(missing)
        if template:
            from ._template import run_template

            return run_template(workload, args.control, events)
        return _run_container(workload, args, events)
    except Exit as error:
        return error.code


def _check_placement(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.socket_dir and not args.container:
        parser.error("--socket-dir needs --container")
    if args.workers is not None and not 1 <= args.workers <= 64:
        parser.error("--workers must be from 1 to 64")
    if args.socket and args.workers not in (None, 1):
        parser.error("--socket serves one worker; use --socket-dir and --container for more")


def _tcp_placement(args: argparse.Namespace, env: Mapping[str, str]) -> None:
    """Sets ``args.tcp``: the workers' TCP addresses, or None with a socket option (local mode, unchanged).

    A socket option wins over ``SVC_WORKER_PORTS`` in the environment; with port flags it is an error.
    """
    args.tcp = None
    given: str | None = args.ports if args.ports is not None else args.port
    flag = "--ports" if args.ports is not None else "--port" if args.port is not None else None
    if args.socket or args.socket_dir:
        if flag or args.host is not None:
            option = "--socket" if args.socket else "--socket-dir"
            raise PlacementError(
                f"{option} and {flag or '--host'} are exclusive: serve on Unix sockets or on TCP ports, not both"
            )
        return
    text, source = (given, flag) if given is not None and flag else (env.get(PORTS_ENV, ""), PORTS_ENV)
    if flag is None and not text.strip():
        raise PlacementError(
            f"nowhere to listen: give --socket, --socket-dir with --container, "
            f"or TCP ports (--ports P0,P1,... or ${PORTS_ENV})"
        )
    ports = parse_ports(text, source)
    if flag == "--port" and len(ports) != 1:
        raise PlacementError("--port takes one port; use --ports P0,P1,... for more workers")
    if args.workers is not None and len(ports) != args.workers:
        raise PlacementError(
            f"{source} has {len(ports)} port{'s' if len(ports) != 1 else ''} "
            f"but --workers is {args.workers}: give one port per worker"
        )
    if len(ports) > 64:
        raise PlacementError(f"{source} has {len(ports)} ports; a container has at most 64 workers")
    host = args.host if args.host is not None else (env.get(HOST_ENV) or DEFAULT_HOST)
    if not host.strip():
        raise PlacementError("--host is empty")
    args.workers = len(ports)
    args.tcp = [TcpAddress(host, port) for port in ports]


def _run_container(workload: Workload, args: argparse.Namespace, events: FrameWriter) -> int:
    from ._container import container_sockets, run_container

    if args.tcp:
        sockets = list(args.tcp)
    elif args.socket:
        sockets = [args.socket]
    else:
        workers = args.workers or int(workload.options.get("workers", 1))
        sockets = container_sockets(args.socket_dir, args.container, workers)
    return run_container(
        workload,
        sockets,
        frames=events,
        lifeline_fd=0 if has_lifeline(0) else None,
        gone_message="stdin closed, the platform went away",
    )


if __name__ == "__main__":
    sys.exit(main())
