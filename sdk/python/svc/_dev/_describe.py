"""The manifest of the project as it is now, from a child forked off the warm helper.

The child imports the user's module fresh (the helper never imports user code, so nothing of
an earlier version is in its ``sys.modules``) and runs ``python -m svc.manifest``'s own
``main``: same output, same exit codes, same messages, without a new interpreter. It leads
its own process group, so that a timeout or the helper's end kills whatever the import started.
"""

from __future__ import annotations

import errno
import os
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass

from ..manifest import _cli as manifest_cli
from ..runtime._exit import exit_now, signal_name


@dataclass
class ManifestRun:
    """What ``python -m svc.manifest TARGET`` did: the same fields the platform reads from a process."""

    code: int | None
    signal: str | None
    stdout: str
    stderr: str
    timed_out: bool

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "signal": self.signal,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
        }


class Child:
    """A forked ``svc.manifest`` run: started by ``start``, collected by ``finish``."""

    def __init__(self, pid: int, out_fd: int, err_fd: int) -> None:
        self.pid = pid
        self.out = bytearray()
        self.err = bytearray()
        self.open: dict[int, bytearray] = {out_fd: self.out, err_fd: self.err}
        self.status: int | None = None

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self, fd: int) -> None:
        if self.open.pop(fd, None) is not None:
            os.close(fd)


def start(target: str, cwd: str, stdin_fd: int, private_fds: tuple[int, ...] = ()) -> Child:
    """Forks the child that describes ``target`` as ``python -m svc.manifest`` run in ``cwd`` would.

    ``private_fds`` (the helper's answers and wake-up pipe) are closed in the child.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.setpgid(0, 0)
            for fd in (out_r, err_r, stdin_fd, *private_fds):
                os.close(fd)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (null, out_w, err_w):
                if fd > 2:
                    os.close(fd)
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE):
                signal.signal(signum, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            os.chdir(cwd)
            sys.argv = [manifest_cli.__file__, target]
            _forget_shadowed_entry(target, cwd)
            code = manifest_cli.main([target])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            exit_now(code)
    os.close(out_w)
    os.close(err_w)
    try:
        os.setpgid(pid, pid)  # also from here: no race with a kill before the child ran
    except OSError:
        pass
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
    return Child(pid, out_r, err_r)


def finish(child: Child, timeout: float, wake_fd: int, lifeline_fd: int) -> ManifestRun | None:
    """Reads the child's output until it ends (or ``timeout`` passes: killed); None when the lifeline closed."""
    deadline = time.monotonic() + timeout
    timed_out = False
    exited_at: float | None = None
    try:
        while True:
            if child.status is None:
                child.status = _reap(child.pid)
                if child.status is not None:
                    child.kill()  # what the import started goes with it
                    exited_at = time.monotonic()
            if child.status is not None and not child.open:
                break
            now = time.monotonic()
            if child.status is None and now >= deadline:
                timed_out = True
                child.kill()
                deadline = float("inf")
                continue
            # A process that left the group may hold the pipes open: stop waiting for it shortly.
            if exited_at is not None and now - exited_at > 1.0:
                break
            wait = 0.05 if child.status is not None else max(0.0, deadline - now)
            readable, _, _ = select.select([*child.open, wake_fd, lifeline_fd], [], [], min(wait, 3600.0))
            if wake_fd in readable:
                _drain(wake_fd)
            if lifeline_fd in readable and _lifeline_closed(lifeline_fd):
                child.kill()
                return None
            for fd in [fd for fd in child.open if fd in readable]:
                if not _read_into(fd, child.open[fd]):
                    child.close(fd)
    finally:
        for fd in list(child.open):
            child.close(fd)
        if child.status is None:
            child.kill()
            child.status = _wait(child.pid)
    code = os.waitstatus_to_exitcode(child.status) if child.status is not None else None
    return ManifestRun(
        code=code if code is not None and code >= 0 else None,
        signal=signal_name(-code) if code is not None and code < 0 else None,
        stdout=child.out.decode("utf-8", "replace"),
        stderr=child.err.decode("utf-8", "replace"),
        timed_out=timed_out,
    )


def reap_now(child: Child) -> None:
    """Waits for a killed child and closes its pipes."""
    for fd in list(child.open):
        child.close(fd)
    if child.status is None:
        child.status = _wait(child.pid)


_lifeline_buffer = bytearray()


def pending_lifeline_bytes() -> bytes:
    """What arrived on the lifeline (the next request) while a child was being waited for."""
    data = bytes(_lifeline_buffer)
    _lifeline_buffer.clear()
    return data


def _lifeline_closed(fd: int) -> bool:
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        return False
    except OSError as error:
        return error.errno != errno.EINTR
    if not data:
        return True
    _lifeline_buffer.extend(data)
    return False


def _read_into(fd: int, buffer: bytearray) -> bool:
    """Reads what is there; False at end-of-file."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        buffer.extend(chunk)


def _reap(pid: int) -> int | None:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done == pid else None


def _wait(pid: int) -> int | None:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _forget_shadowed_entry(target: str, cwd: str) -> None:
    """An entry named like a module the helper imported (``queue.py``) is the user's, as in a fresh Python."""
    if target.endswith(".py") or "/" in target or os.sep in target:
        root, top = os.path.dirname(os.path.abspath(target)), os.path.splitext(os.path.basename(target))[0]
    else:
        root, top = cwd, target.split(".")[0]
    loaded = sys.modules.get(top)
    if loaded is None:
        return
    origin = os.path.abspath(getattr(loaded, "__file__", None) or "")
    if origin.startswith(os.path.abspath(root) + os.sep):
        return
    if os.path.exists(os.path.join(root, f"{top}.py")) or os.path.isdir(os.path.join(root, top)):
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[name]
