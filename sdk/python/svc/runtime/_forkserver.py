"""What the checkpoint template and the zygote share: a process that forks containers on request.

It listens on a Unix socket. The platform connects and sends one JSON line; the server forks a
child that leads its own session (so the platform can signal its group) and becomes a
container. The connection stays open for the container's life: the container writes its
frames to it (``started`` with its pid first, then output lines and worker events), and stops
when the platform closes it. The server reaps its children and reports each exit as a
``container_exited`` event on its own events pipe. It stops on SIGTERM, SIGINT, or when its
stdin (the platform's lifeline) closes; the containers it forked live on, each on its own
connection.

Subclasses say what a request holds (``parse``) and what the child does (``serve``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from typing import Any

from .._json import is_object
from . import _lifeline
from ._cgroup import CgroupError, cgroup_files, join_cgroup
from ._exit import signal_name
from ._fds import at_eof, close_quietly, drain, replace_stdin, wake_pipe
from ._frames import FrameStream, FrameWriter, LinePump
from ._held_signals import fork_holding_stop_signals, release_in_child
from ._reaping import reaped
from ._startup import EXIT_SERVER_FAILED, say

REQUEST_TIMEOUT = 5.0
MAX_REQUEST = 64 * 1024


class BadRequest(Exception):
    pass


class ChildIO:
    """A forked container's plumbing: its frames, and its output as frames, line by line."""

    def __init__(
        self,
        control: FrameWriter,
        watch: dict[int, Callable[[], bool]],
        private_fds: list[int],
        in_worker: Callable[[], None],
    ) -> None:
        self.control = control
        self.watch = watch
        self.private_fds = private_fds
        self.in_worker = in_worker


class ForkServer:
    """Forks a container per connection; ``run()`` returns the server's exit code."""

    max_request = MAX_REQUEST

    def __init__(self, control_path: str, events: FrameWriter) -> None:
        self.control_path = control_path
        self.events = events
        self.children: dict[int, str] = {}
        self.stop_requested = False
        self._server_fds: list[int] = []

    # What subclasses provide.
    def parse(self, fields: dict[str, Any]) -> tuple[str, Any]:
        """``(container id, request)`` of one fork request's JSON object; BadRequest says what is wrong."""
        raise NotImplementedError

    def serve(self, conn: socket.socket, container: str, request: Any, io: ChildIO) -> int:
        """Runs in the forked child once its plumbing is set up; returns its exit code."""
        raise NotImplementedError

    def ready_message(self) -> str:
        raise NotImplementedError

    def run(self) -> int:
        listener = _listen(self.control_path)
        wake_r, wake_w = wake_pipe()
        self._server_fds = [listener.fileno(), wake_r, wake_w]
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        lifeline = 0 if _lifeline.has_lifeline(0) else None
        self.events.event({"event": "ready", "pid": os.getpid()})
        say(self.ready_message())
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
                    self._accept(listener)
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
            self.events.event(
                {
                    "event": "container_exited",
                    "container": container,
                    "pid": pid,
                    "code": code if code >= 0 else None,
                    "signal": signal_name(-code) if code < 0 else None,
                }
            )

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            try:
                fields = parse_json_object(_read_request(conn, self.max_request))
                container, request = self.parse(fields)
                cgroup = cgroup_files(fields.get("cgroup"))
            except (BadRequest, CgroupError, OSError) as error:
                _reply_error(conn, str(error))
                return
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            pid, held = fork_holding_stop_signals()
            if pid == 0:
                code = EXIT_SERVER_FAILED
                try:
                    code = self._become_container(conn, container, request, cgroup, held)
                except BaseException:
                    traceback.print_exc()
                finally:
                    os._exit(code)
            self.children[pid] = container
        # The parent's copy is closed here: the connection now ends exactly when the container does.

    def _become_container(
        self, conn: socket.socket, container: str, request: Any, cgroup: list[str], held: set[int | signal.Signals]
    ) -> int:
        os.setsid()  # its own session and process group: the platform stops it with kill(-pid)
        signal.set_wakeup_fd(-1)
        release_in_child(held)
        for fd in [*self._server_fds, *([self.events.fd] if self.events.fd is not None else [])]:
            close_quietly(fd)
        replace_stdin()
        conn.setblocking(True)
        control = FrameWriter(conn.fileno())
        # Into the container's cgroup before it serves anything: its workers inherit it.
        try:
            join_cgroup(cgroup)
        except CgroupError as error:
            control.send({"t": "error", "message": str(error)})
            return EXIT_SERVER_FAILED
        control.send({"t": "started", "pid": os.getpid()})
        # Output goes to the platform over the connection, line by line, like a spawned container's pipes.
        pumps: list[LinePump] = []
        for fd, kind in ((1, "out"), (2, "err")):
            read_end, write_end = os.pipe()
            getattr(sys, "stdout" if fd == 1 else "stderr").flush()
            os.dup2(write_end, fd)
            os.close(write_end)
            pumps.append(LinePump(read_end, _forward(control, kind)))
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = FrameStream(control, "out"), FrameStream(control, "err")

        def in_worker() -> None:  # workers write into the pipes, which this process forwards
            sys.stdout, sys.stderr = streams

        io = ChildIO(control, {pump.fd: pump.read for pump in pumps}, [pump.fd for pump in pumps], in_worker)
        try:
            return self.serve(conn, container, request, io)
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


def _forward(control: FrameWriter, kind: str) -> Callable[[str], None]:
    """Sends each line of a forked child's stdout or stderr as a frame of that kind."""

    def send(text: str) -> None:
        control.send({"t": kind, "text": text})

    return send


def parse_json_object(data: bytes) -> dict[str, Any]:
    try:
        request = json.loads(data)
    except ValueError:
        raise BadRequest("the request is not JSON") from None
    if not is_object(request):
        raise BadRequest("the request is not a JSON object")
    return request


def _read_request(conn: socket.socket, limit: int) -> bytes:
    conn.settimeout(REQUEST_TIMEOUT)
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise BadRequest("the connection closed before a whole request arrived")
        data += chunk
        if len(data) > limit:
            raise BadRequest("the request is too long")
    return data.split(b"\n", 1)[0]


def _reply_error(conn: socket.socket, message: str) -> None:
    say(f"refused a fork request: {message}")
    try:
        conn.sendall((json.dumps({"t": "error", "message": message}) + "\n").encode())
    except OSError:
        pass
