"""The supervisor: a container's main process forks its workers, restarts the ones that die, drains on SIGTERM.

It runs no event loop and no thread: one ``select`` loop over a self-pipe (signals), the
workers' ready pipe, the lifeline and any extra descriptors, so that it can fork at any time.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._fds import at_eof, close_quietly, drain, replace_stdin, wake_pipe
from ._held_signals import fork_holding_stop_signals, release_in_child
from ._reaping import reaped
from ._startup import EXIT_SERVER_FAILED, say
from ._timeouts import EXIT_TIMED_OUT

Emit = Callable[[dict[str, Any]], None]
StartWorker = Callable[[int, Any, int, int], None]
"""``(index, socket_path or TCP address, ready_fd, parent_fd)``, called in the forked child; must not return."""


@dataclass
class Slot:
    """One worker position: its socket (or TCP address: a restart listens there again), and the process filling it."""

    index: int
    socket: Any
    pid: int | None = None
    started_at: float = 0.0
    ready: bool = False
    ever_ready: bool = False
    crashes: int = 0
    """Deaths in a row of workers that lived less than ``RestartPolicy.stable_after``."""
    boot_failures: int = 0
    """Restarted workers in a row that died before they served."""
    restart_at: float | None = None


@dataclass(frozen=True)
class RestartPolicy:
    """When to restart a dead worker, or None when the container should fail instead."""

    first_delay: float = 0.1
    max_delay: float = 5.0
    stable_after: float = 10.0
    max_boot_failures: int = 5

    def after_exit(self, slot: Slot, now: float) -> float | None:
        if not slot.ever_ready:
            return None  # the first start failed: this code cannot serve, restarting would only loop
        if slot.ready:
            slot.boot_failures = 0
            if now - slot.started_at >= self.stable_after:
                slot.crashes = 0
        else:
            slot.boot_failures += 1
            if slot.boot_failures >= self.max_boot_failures:
                return None
        slot.crashes += 1
        return min(self.first_delay * 2.0 ** (slot.crashes - 1), self.max_delay)


def describe_status(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"


class Supervisor:
    """Keeps ``len(sockets)`` workers running until stopped; ``run()`` returns the exit code."""

    def __init__(
        self,
        *,
        name: str,
        sockets: Sequence[Any],
        start: StartWorker,
        emit: Emit,
        lifeline_fd: int | None,
        gone_message: str,
        hard_exit_after: float = 5.0,
        watch: Mapping[int, Callable[[], bool]] | None = None,
        private_fds: Sequence[int] = (),
        policy: RestartPolicy = RestartPolicy(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.slots = [Slot(index, path) for index, path in enumerate(sockets)]
        self._start = start
        self._emit = emit
        self._lifeline_fd = lifeline_fd
        self._gone_message = gone_message
        self._hard_exit_after = hard_exit_after
        self._watch = dict(watch or {})
        self._private_fds = list(private_fds)
        self._policy = policy
        self._clock = clock
        self._stopping = False
        self._term_requested = False
        self._kill_at: float | None = None
        self._exit_code = 0

    # -- the loop ---------------------------------------------------------

    def run(self) -> int:
        wake_r, wake_w = wake_pipe()
        self._ready_r, self._ready_w = os.pipe()
        # Workers watch this pipe: end-of-file means the supervisor is gone, however it died.
        self._parent_r, self._parent_w = os.pipe()
        self._own_fds = [wake_r, wake_w, self._ready_r, self._parent_w]
        previous_wakeup = signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, _ignore)  # a handler, so that the wake-up byte is written
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            for slot in self.slots:
                self._spawn(slot)
            ready_buffer = b""
            while True:
                if self._term_requested:
                    self._stop(None, hard=False)
                self._reap()
                if self._stopping and not any(slot.pid for slot in self.slots):
                    return self._exit_code
                self._restart_due()
                fds = [wake_r, self._ready_r, *self._watch]
                if self._lifeline_fd is not None:
                    fds.append(self._lifeline_fd)
                try:
                    readable, _, _ = select.select(fds, [], [], self._timeout())
                except InterruptedError:
                    continue
                if wake_r in readable:
                    drain(wake_r)
                if self._ready_r in readable:
                    ready_buffer = self._read_ready(ready_buffer + os.read(self._ready_r, 4096))
                if self._lifeline_fd is not None and self._lifeline_fd in readable and at_eof(self._lifeline_fd):
                    self._lifeline_fd = None
                    self._stop(f"{self._gone_message}; shutting down", hard=True)
                for fd, on_readable in list(self._watch.items()):
                    if fd in readable and not on_readable():
                        del self._watch[fd]  # end-of-file
                if self._kill_at is not None and self._clock() >= self._kill_at:
                    self._signal_all(signal.SIGKILL)
        finally:
            signal.set_wakeup_fd(previous_wakeup)
            for fd in [*self._own_fds, self._ready_w, self._parent_r]:
                close_quietly(fd)

    def _timeout(self) -> float | None:
        moments = [slot.restart_at for slot in self.slots if slot.restart_at is not None and not self._stopping]
        if self._kill_at is not None:
            moments.append(self._kill_at)
        return max(0.0, min(moments) - self._clock()) if moments else None

    def _on_signal(self, signum: int, frame: object) -> None:
        # Only a flag: the loop acts on it, so a signal never lands between a fork and its bookkeeping.
        self._term_requested = True

    # -- workers ----------------------------------------------------------

    def _spawn(self, slot: Slot) -> None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid, held = fork_holding_stop_signals()
        if pid == 0:
            self._in_child(slot, held)
        slot.pid, slot.started_at, slot.ready, slot.restart_at = pid, self._clock(), False, None

    def _in_child(self, slot: Slot, held: set[int | signal.Signals]) -> None:
        try:
            signal.set_wakeup_fd(-1)
            release_in_child(held)
            for fd in [*self._own_fds, *self._private_fds, *self._watch]:
                close_quietly(fd)
            if self._lifeline_fd is not None and self._lifeline_fd > 2:
                close_quietly(self._lifeline_fd)
            replace_stdin()
            self._start(slot.index, slot.socket, self._ready_w, self._parent_r)
        finally:
            os._exit(EXIT_SERVER_FAILED)

    def _read_ready(self, data: bytes) -> bytes:
        *lines, rest = data.split(b"\n")
        for line in lines:
            try:
                index_text, pid_text, *word = line.decode().split(" ")
                slot, pid = self.slots[int(index_text)], int(pid_text)
            except (ValueError, IndexError):
                continue
            if slot.pid != pid or self._stopping:
                continue  # an announcement from a worker that died meanwhile
            if word == ["retiring"]:
                # A call ran past its time-out: the platform stops sending it requests before it stops listening.
                self._emit({"event": "worker_retiring", "worker": slot.index, "pid": pid})
                continue
            slot.ready = slot.ever_ready = True
            where = (
                {"socket": slot.socket}
                if isinstance(slot.socket, str)
                else {"host": slot.socket[0], "port": slot.socket[1]}
            )
            self._emit({"event": "listening", "worker": slot.index, "pid": slot.pid, **where})
        return rest

    def _reap(self) -> None:
        for pid, status in reaped():
            slot = next((s for s in self.slots if s.pid == pid), None)
            if slot is not None:
                self._on_exit(slot, status)

    def _on_exit(self, slot: Slot, status: int) -> None:
        pid, how = slot.pid, describe_status(status)
        slot.pid = None
        if self._stopping:
            return
        if slot.ready and os.waitstatus_to_exitcode(status) == EXIT_TIMED_OUT:
            # It stopped itself after a call ran past its time-out: not a crash, replaced at once.
            how = f"{how} (a call timed out)"
            self._emit({"event": "worker_exited", "worker": slot.index, "pid": pid, "status": how, "restart_in": 0.0})
            say(f"{self.name}: worker {slot.index} (pid {pid}) exited with {how}; replacing it now")
            self._spawn(slot)
            return
        delay = self._policy.after_exit(slot, self._clock())
        self._emit({"event": "worker_exited", "worker": slot.index, "pid": pid, "status": how, "restart_in": delay})
        if delay is not None:
            slot.restart_at = self._clock() + delay
            say(f"{self.name}: worker {slot.index} (pid {pid}) exited with {how}; restarting it in {delay:g} s")
            return
        code = os.waitstatus_to_exitcode(status)
        self._exit_code = code if code > 0 else EXIT_SERVER_FAILED
        if slot.ever_ready:
            self._stop(
                f"{self.name}: worker {slot.index} (pid {pid}) failed to start {slot.boot_failures} times "
                f"in a row, last with {how}; stopping the container",
                hard=False,
            )
        else:
            self._stop(
                f"{self.name}: worker {slot.index} (pid {pid}) exited with {how} before it served; "
                "stopping the container",
                hard=False,
            )

    def _restart_due(self) -> None:
        if self._stopping:
            return
        now = self._clock()
        for slot in self.slots:
            if slot.pid is None and slot.restart_at is not None and slot.restart_at <= now:
                self._spawn(slot)

    # -- stopping ---------------------------------------------------------

    def _stop(self, message: str | None, *, hard: bool) -> None:
        """Drains every worker (SIGTERM); ``hard`` also kills them after ``hard_exit_after`` seconds."""
        if message:
            try:
                say(message)
            except OSError:  # the lifeline closed: stderr is often a broken pipe too
                pass
        if hard and self._kill_at is None:
            self._kill_at = self._clock() + self._hard_exit_after
        if not self._stopping:
            self._stopping = True
            self._signal_all(signal.SIGTERM)

    def _signal_all(self, signum: int) -> None:
        for slot in self.slots:
            if slot.pid is not None:
                try:
                    os.kill(slot.pid, signum)
                except ProcessLookupError:
                    pass


def _ignore(signum: int, frame: object) -> None:
    pass
