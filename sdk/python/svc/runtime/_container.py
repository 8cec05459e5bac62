"""One container: its workers, warmed once here (checkpoint) or each on its own."""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

from .._workloads import Workload
from ._frames import FrameWriter
from ._startup import NOT_WARMED, warm
from ._worker import run_worker
from ._workers import Supervisor


def container_sockets(socket_dir: str, container: str, workers: int) -> list[str]:
    """Worker ``i`` of container ``ID`` listens on ``DIR/ID-w<i>.sock``: the platform derives the same paths."""
    return [os.path.join(socket_dir, f"{container}-w{index}.sock") for index in range(workers)]


def run_container(workload: Workload, sockets: Sequence[str], *, frames: FrameWriter, lifeline_fd: int | None,
                  gone_message: str, warmed: Any = NOT_WARMED,
                  watch: Mapping[int, Callable[[], bool]] | None = None, private_fds: Sequence[int] = (),
                  in_worker: Callable[[], None] | None = None) -> int:
    """Supervises one worker per socket until stopped; returns the container's exit code.

    With ``checkpoint_enabled`` the workers are forks of a process that already ran
    ``on_start`` (the template's value in ``warmed``, or this process warms up once);
    without it each worker runs ``on_start`` itself.
    """
    if warmed is NOT_WARMED and workload.options.get("checkpoint_enabled", False):
        warmed = warm(workload)

    def start(index: int, socket_path: str, ready_fd: int, parent_fd: int) -> None:
        if in_worker is not None:
            in_worker()
        run_worker(workload, index, socket_path, warmed, ready_fd, parent_fd)

    supervisor = Supervisor(
        name=workload.name, sockets=sockets, start=start, emit=frames.event, lifeline_fd=lifeline_fd,
        gone_message=gone_message, watch=watch, private_fds=[*private_fds, *([frames.fd] if frames.fd is not None else [])],
    )
    return supervisor.run()
