"""The zygote: a process of an image's Python that has imported the runtime, and forks containers.

``python -m svc.runtime zygote --control SOCK`` imports uvicorn, httptools, uvloop and the
runtime (what every container of the image imports before the user's code) once, but never
the user's code. Each request names the container and the workload to serve:

    {"container": ID, "socket_dir": DIR, "workers": N, "root": DIR, "entry": MODULE,
     "workload": NAME, "env": {...}, "cgroup": [PROCS_FILE, ...]}

and the forked child becomes exactly what ``python -m svc.runtime --root DIR --entry MODULE
--workload NAME --socket-dir DIR --container ID --workers N`` started with ``env`` would be:
it takes that environment and folder, imports the user's module fresh (the zygote's modules
hold no user code, so versions stay isolated), and supervises its workers. A container thus
starts without an interpreter start or the runtime's imports. Sockets, frames, lifelines and
reaping are those of the checkpoint template (``_forkserver``).
"""

from __future__ import annotations

import gc
import importlib
import os
import socket
import sys
import time
from typing import Any, cast

from ._container import container_sockets, run_container
from ._forkserver import BadRequest, ChildIO, ForkServer, parse_json_object
from ._frames import FrameWriter
from ._mounts import MountError, mount_volumes
from ._startup import EXIT_SERVER_FAILED, Exit, load_workload, say
from ._template import placement_of

MAX_ZYGOTE_REQUEST = 1024 * 1024
"""A request carries the container's whole environment."""


class ZygoteRequest:
    def __init__(
        self, socket_dir: str, workers: int, root: str, entry: str, workload: str, env: dict[str, str]
    ) -> None:
        self.socket_dir = socket_dir
        self.workers = workers
        self.root = root
        self.entry = entry
        self.workload = workload
        self.env = env


def parse_zygote_request(data: bytes) -> tuple[str, ZygoteRequest]:
    """``(container id, request)``; BadRequest says what is wrong."""
    return zygote_request_of(parse_json_object(data))


def zygote_request_of(request: dict[str, Any]) -> tuple[str, ZygoteRequest]:
    container, socket_dir, workers = placement_of(request)
    root, entry, workload, env = request.get("root"), request.get("entry"), request.get("workload"), request.get("env")
    if not isinstance(root, str) or not os.path.isabs(root):
        raise BadRequest("root must be an absolute path")
    if not isinstance(entry, str) or not entry or not all(part.isidentifier() for part in entry.split(".")):
        raise BadRequest("entry must be a module name such as app or pkg.app")
    if not isinstance(workload, str) or not workload:
        raise BadRequest("workload must be a name")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "=" not in k and "\0" not in v
        for k, v in cast("dict[object, object]", env).items()
    ):
        raise BadRequest("env must be an object of strings")
    return container, ZygoteRequest(socket_dir, workers, root, entry, workload, cast("dict[str, str]", env))  # checked


class Zygote(ForkServer):
    max_request = MAX_ZYGOTE_REQUEST

    def ready_message(self) -> str:
        return f"zygote ready on {self.control_path} (runtime imported)"

    def parse(self, fields: dict[str, Any]) -> tuple[str, Any]:
        return zygote_request_of(fields)

    def serve(self, conn: socket.socket, container: str, request: Any, io: ChildIO) -> int:
        assert isinstance(request, ZygoteRequest)
        _become_spawned(container, request)
        say(f"{request.workload}: container {container} forked from the zygote (pid {os.getpid()})")
        try:
            mount_volumes(request.root, request.socket_dir)
        except MountError as error:
            say(str(error))
            return EXIT_SERVER_FAILED
        try:
            workload = load_workload(request.root, request.entry, request.workload)
        except Exit as error:
            return error.code
        sockets = container_sockets(request.socket_dir, container, request.workers)
        return run_container(
            workload,
            sockets,
            frames=io.control,
            lifeline_fd=conn.fileno(),
            gone_message="the platform closed the control connection",
            watch=io.watch,
            private_fds=io.private_fds,
            in_worker=io.in_worker,
        )


def _become_spawned(container: str, request: ZygoteRequest) -> None:
    """The environment, folder and arguments a spawned container would have had."""
    tz = os.environ.get("TZ")
    os.environ.clear()
    os.environ.update(request.env)
    # As in `python -m svc.runtime`: the user's code and its subprocesses get the usual sys.path rules.
    os.environ.pop("PYTHONSAFEPATH", None)
    if os.environ.get("TZ") != tz and hasattr(time, "tzset"):
        time.tzset()
    os.chdir(request.root)
    sys.argv = [
        sys.argv[0],
        "--root",
        request.root,
        "--entry",
        request.entry,
        "--workload",
        request.workload,
        "--socket-dir",
        request.socket_dir,
        "--container",
        container,
        "--workers",
        str(request.workers),
    ]
    importlib.invalidate_caches()


def run_zygote(control_path: str, events: FrameWriter) -> int:
    # What the zygote imported stays shared, untouched, with every container it forks.
    gc.freeze()
    return Zygote(control_path, events).run()
