"""One container: its workers, warmed once here (checkpoint) or each on its own."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Union

from .._workloads import Workload
from ._frames import FrameWriter
from ._startup import NOT_WARMED, warm
from ._worker import run_worker
from ._workers import Supervisor


class TcpAddress(NamedTuple):
    """Where a worker listens in TCP mode (a Nomad allocation): ``host:port`` instead of a Unix socket."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


Address = Union[str, TcpAddress]
"""A worker's listening place: a Unix socket's path, or a TCP address."""


class PlacementError(ValueError):
    """Ports or host that cannot be served; the message is one line for the operator."""


def parse_ports(text: str, source: str) -> list[int]:
    """``"8001,8002"`` → ``[8001, 8002]``; PlacementError names ``source`` (a flag or variable) and the bad item."""
    ports: list[int] = []
    for item in text.split(","):
        item = item.strip()
        if not (item.isascii() and item.isdigit()) or not 1 <= int(item) <= 65535:
            raise PlacementError(f"{source}: {item!r} is not a port (a number from 1 to 65535)")
        if int(item) in ports:
            raise PlacementError(f"{source}: port {int(item)} is listed twice (one port per worker)")
        ports.append(int(item))
    return ports


def check_bindable(addresses: Sequence[TcpAddress]) -> None:
    """Fails early, naming the port, when a worker could not listen (in use, or a host that is not local).

    Bound and closed at once with SO_REUSEADDR, as the workers bind: a port only in TIME_WAIT passes.
    """
    for index, address in enumerate(addresses):
        try:
            infos = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            family, kind, proto, _, sockaddr = infos[0]
            probe = socket.socket(family, kind, proto)
        except OSError as error:
            raise PlacementError(f"cannot listen on {address} (worker {index}): {error.strerror or error}") from None
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(sockaddr)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PlacementError(
                    f"port {address.port} is already in use on {address.host} "
                    f"(worker {index}); stop what listens there or pick another port"
                ) from None
            raise PlacementError(f"cannot listen on {address} (worker {index}): {error.strerror or error}") from None
        finally:
            probe.close()


def container_sockets(socket_dir: str, container: str, workers: int) -> list[str]:
    """Worker ``i`` of container ``ID`` listens on ``DIR/ID-w<i>.sock``: the platform derives the same paths."""
    return [os.path.join(socket_dir, f"{container}-w{index}.sock") for index in range(workers)]


def run_container(
    workload: Workload,
    sockets: Sequence[Address],
    *,
    frames: FrameWriter,
    lifeline_fd: int | None,
    gone_message: str,
    warmed: Any = NOT_WARMED,
    watch: Mapping[int, Callable[[], bool]] | None = None,
    private_fds: Sequence[int] = (),
    in_worker: Callable[[], None] | None = None,
) -> int:
    """Supervises one worker per socket (or TCP address) until stopped; returns the container's exit code.

    With ``checkpoint_enabled`` the workers are forks of a process that already ran
    ``on_start`` (the template's value in ``warmed``, or this process warms up once);
    without it each worker runs ``on_start`` itself.
    """
    if warmed is NOT_WARMED and workload.options.get("checkpoint_enabled", False):
        warmed = warm(workload)

    def start(index: int, socket_path: Address, ready_fd: int, parent_fd: int) -> None:
        if in_worker is not None:
            in_worker()
        run_worker(workload, index, socket_path, warmed, ready_fd, parent_fd)

    supervisor = Supervisor(
        name=workload.name,
        sockets=sockets,
        start=start,
        emit=frames.event,
        lifeline_fd=lifeline_fd,
        gone_message=gone_message,
        watch=watch,
        private_fds=[*private_fds, *([frames.fd] if frames.fd is not None else [])],
    )
    return supervisor.run()
