"""The checkpoint template: a warmed process (imports done, ``on_start`` run once) that forks containers.

``python -m svc.runtime template --control SOCK ...`` listens on a Unix socket. The platform
connects and sends one JSON line, ``{"container": ID, "socket_dir": DIR, "workers": N}``; the
template forks a child that leads its own session (so the platform can signal its group) and
becomes that container, forking its workers from the warmed state. The connection stays open
for the container's life: the container writes its frames to it (``started`` with its pid
first, then output lines and worker events), and stops when the platform closes it.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import sys
import traceback
import warnings
from typing import Any

from .._workloads import Workload
from . import _lifeline
from ._container import container_sockets, run_container
from ._fds import at_eof, close_quietly, drain, replace_stdin, wake_pipe
from ._frames import FrameStream, FrameWriter, LinePump
from ._startup import EXIT_SERVER_FAILED, say, warm
from ._reaping import reaped

_CONTAINER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
REQUEST_TIMEOUT = 5.0
MAX_REQUEST = 64 * 1024

# Forking after on_start is the point of a checkpoint, even if on_start left threads behind.
warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)


class BadRequest(Exception):
    pass


def parse_request(data: bytes) -> tuple[str, str, int]:
    """``(container id, socket dir, workers)`` of a fork request; BadRequest says what is wrong."""
    try:
        request = json.loads(data)
    except ValueError:
        raise BadRequest("the request is not JSON") from None
    if not isinstance(request, dict):
        raise BadRequest("the request is not a JSON object")
    container, socket_dir, workers = request.get("container"), request.get("socket_dir"), request.get("workers")
    if not isinstance(container, str) or not _CONTAINER_ID.match(container):
        raise BadRequest("container must be 1 to 64 letters, digits, '-' or '_'")
    if not isinstance(socket_dir, str) or not os.path.isabs(socket_dir):
        raise BadRequest("socket_dir must be an absolute path")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
        raise BadRequest("workers must be an integer from 1 to 64")
    return container, socket_dir, workers


class Template:
    def __init__(self, workload: Workload, control_path: str, events: FrameWriter) -> None:
        self.workload = workload
        self.control_path = control_path
        self.events = events
        self.children: dict[int, str] = {}
        self.stop_requested = False

    def run(self) -> int:
        warmed = warm(self.workload)
        listener = _listen(self.control_path)
        wake_r, wake_w = wake_pipe()
        self._template_fds = [listener.fileno(), wake_r, wake_w]
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        lifeline = 0 if _lifeline.has_lifeline(0) else None
        self.events.event({"event": "ready", "pid": os.getpid()})
        say(f"{self.workload.name}: checkpoint template ready on {self.control_path} (imports and on_start done)")
        try:
            while not self.stop_requested:
                fds = [listener.fileno(), wake_r] + ([lifeline] if lifeline is not None else [])
                try:
                    readable, _, _ = select.select(fds, [], [])
                except InterruptedError:
                    continue
                if wake_r in readable:
                    drain(wake_r)
                self._reap()
                if lifeline is not None and lifeline in readable and at_eof(lifeline):
                    break  # the platform is gone; each container notices on its own connection
                if listener.fileno() in readable:
                    self._accept(listener, warmed)
        finally:
            listener.close()
            for fd in (wake_r, wake_w):
                os.close(fd)
            try:
                os.unlink(self.control_path)
            except OSError:
                pass
        return 0

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.stop_requested = True

    def _reap(self) -> None:
        for pid, status in reaped():
            container = self.children.pop(pid, None)
            code = os.waitstatus_to_exitcode(status)
            self.events.event({
                "event": "container_exited", "container": container, "pid": pid,
                "code": code if code >= 0 else None,
                "signal": _signal_name(-code) if code < 0 else None,
            })

    def _accept(self, listener: socket.socket, warmed: Any) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            try:
                container, socket_dir, workers = parse_request(_read_request(conn))
            except (BadRequest, OSError) as error:
                _reply_error(conn, str(error))
                return
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            pid = os.fork()
            if pid == 0:
                code = EXIT_SERVER_FAILED
                try:
                    code = self._become_container(conn, container, container_sockets(socket_dir, container, workers), warmed)
                except BaseException:
                    traceback.print_exc()
                finally:
                    os._exit(code)
            self.children[pid] = container
        # The parent's copy is closed here: the connection now ends exactly when the container does.

    def _become_container(self, conn: socket.socket, container: str, sockets: list[str], warmed: Any) -> int:
        os.setsid()  # its own session and process group: the platform stops it with kill(-pid)
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        for fd in [*self._template_fds, *([self.events.fd] if self.events.fd is not None else [])]:
            close_quietly(fd)
        replace_stdin()
        conn.setblocking(True)
        control = FrameWriter(conn.fileno())
        control.send({"t": "started", "pid": os.getpid()})
        # Output goes to the platform over the connection, line by line, like a spawned container's pipes.
        pumps = []
        for fd, kind in ((1, "out"), (2, "err")):
            read_end, write_end = os.pipe()
            getattr(sys, "stdout" if fd == 1 else "stderr").flush()
            os.dup2(write_end, fd)
            os.close(write_end)
            pumps.append(LinePump(read_end, lambda text, kind=kind: control.send({"t": kind, "text": text})))
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = FrameStream(control, "out"), FrameStream(control, "err")

        def in_worker() -> None:  # workers write into the pipes, which this process forwards
            sys.stdout, sys.stderr = streams

        say(f"{self.workload.name}: container {container} forked from the checkpoint template (pid {os.getpid()})")
        try:
            return run_container(
                self.workload, sockets, frames=control, lifeline_fd=conn.fileno(),
                gone_message="the platform closed the control connection", warmed=warmed,
                watch={pump.fd: pump.read for pump in pumps}, private_fds=[pump.fd for pump in pumps],
                in_worker=in_worker,
            )
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            for pump in pumps:
                pump.read()
                pump.flush()


def _listen(path: str) -> socket.socket:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # only this user may ask for containers
    try:
        listener.bind(path)
    finally:
        os.umask(previous)
    listener.listen(64)
    return listener


def _read_request(conn: socket.socket) -> bytes:
    conn.settimeout(REQUEST_TIMEOUT)
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise BadRequest("the connection closed before a whole request arrived")
        data += chunk
        if len(data) > MAX_REQUEST:
            raise BadRequest("the request is too long")
    return data.split(b"\n", 1)[0]


def _reply_error(conn: socket.socket, message: str) -> None:
    say(f"refused a fork request: {message}")
    try:
        conn.sendall((json.dumps({"t": "error", "message": message}) + "\n").encode())
    except OSError:
        pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def run_template(workload: Workload, control_path: str, events: FrameWriter) -> int:
    return Template(workload, control_path, events).run()
