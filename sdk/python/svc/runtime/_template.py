"""The checkpoint template: a warmed process (imports done, ``on_start`` run once) that forks containers.

``python -m svc.runtime template --control SOCK ...`` listens on a Unix socket. The platform
connects and sends one JSON line, ``{"container": ID, "socket_dir": DIR, "workers": N}`` (and ``"cgroup"``, the ``cgroup.procs``
files the child joins first, when the platform limits the container; ``"gpu_env"``, the variables
of the GPUs the container holds, which the child sets before anything else runs); the
template forks a child that leads its own session (so the platform can signal its group) and
becomes that container, forking its workers from the warmed state. The connection stays open
for the container's life: the container writes its frames to it (``started`` with its pid
first, then output lines and worker events), and stops when the platform closes it. The
socket, forking and lifeline machinery is shared with the zygote (``_forkserver``).
"""

from __future__ import annotations

import os
import re
import socket
import warnings
from typing import Any

from .._workloads import Workload
from ._container import container_sockets, run_container
from ._cuda_fork import refuse_if_cuda_touched
from ._forkserver import BadRequest, ChildIO, ForkServer, parse_json_object
from ._frames import FrameWriter
from ._startup import say, warm

__all__ = ["BadRequest", "Template", "parse_request", "run_template"]

_CONTAINER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_GPU_VARIABLES = frozenset({"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "SVC_GPU_MODEL"})

# Forking after on_start is the point of a checkpoint, even if on_start left threads behind.
warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)


def parse_request(data: bytes) -> tuple[str, str, int]:
    """``(container id, socket dir, workers)`` of a fork request; BadRequest says what is wrong."""
    return placement_of(parse_json_object(data))


def placement_of(request: dict[str, Any]) -> tuple[str, str, int]:
    return check_placement(request.get("container"), request.get("socket_dir"), request.get("workers"))


def check_placement(container: Any, socket_dir: Any, workers: Any) -> tuple[str, str, int]:
    if not isinstance(container, str) or not _CONTAINER_ID.match(container):
        raise BadRequest("container must be 1 to 64 letters, digits, '-' or '_'")
    if not isinstance(socket_dir, str) or not os.path.isabs(socket_dir):
        raise BadRequest("socket_dir must be an absolute path")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
        raise BadRequest("workers must be an integer from 1 to 64")
    return container, socket_dir, workers


def gpu_env_of(request: dict[str, Any]) -> dict[str, str]:
    """The GPU variables a fork request gives its container (none when absent); BadRequest for others."""
    env = request.get("gpu_env", {})
    if not isinstance(env, dict):
        raise BadRequest("gpu_env must be an object")
    for key, value in env.items():  # pyright: ignore[reportUnknownVariableType]
        if key not in _GPU_VARIABLES or not isinstance(value, str):
            raise BadRequest(f"gpu_env takes {', '.join(sorted(_GPU_VARIABLES))} as strings, not {key!r}")
    return dict(env)  # pyright: ignore[reportUnknownArgumentType]


class Template(ForkServer):
    def __init__(self, workload: Workload, control_path: str, events: FrameWriter) -> None:
        super().__init__(control_path, events)
        self.workload = workload
        self.warmed: Any = None

    def run(self) -> int:
        self.warmed = warm(self.workload)
        refuse_if_cuda_touched(self.workload)
        return super().run()

    def ready_message(self) -> str:
        return f"{self.workload.name}: checkpoint template ready on {self.control_path} (imports and on_start done)"

    def parse(self, fields: dict[str, Any]) -> tuple[str, Any]:
        container, socket_dir, workers = placement_of(fields)
        return container, (socket_dir, workers, gpu_env_of(fields))

    def serve(self, conn: socket.socket, container: str, request: Any, io: ChildIO) -> int:
        socket_dir, workers, gpu_env = request
        # Before anything can initialise CUDA in this child: it reads them then, once.
        os.environ.update(gpu_env)
        say(f"{self.workload.name}: container {container} forked from the checkpoint template (pid {os.getpid()})")
        return run_container(
            self.workload,
            container_sockets(socket_dir, container, workers),
            frames=io.control,
            lifeline_fd=conn.fileno(),
            gone_message="the platform closed the control connection",
            warmed=self.warmed,
            watch=io.watch,
            private_fds=io.private_fds,
            in_worker=io.in_worker,
        )


def run_template(workload: Workload, control_path: str, events: FrameWriter) -> int:
    return Template(workload, control_path, events).run()
