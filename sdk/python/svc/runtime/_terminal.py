"""A program on a terminal of its own, for ``svc shell`` and ``svc container exec -it``.

    python _terminal.py --rows 24 --cols 80 [--control-fd 3] -- COMMAND [ARG ...]

svc runs this file by its path with the container's Python, inside the container (its cgroup, mount
namespace, environment, code folder), so it imports nothing but the standard library. It opens a
pseudo-terminal, starts COMMAND on it as a session leader (its job control, Ctrl-C and curses programs
work as on any terminal), and relays: stdin to the terminal, the terminal to stdout. Each line of JSON on
the control fd (``{"rows": 40, "cols": 120}``) resizes the terminal, and the kernel tells the program
(SIGWINCH). Without COMMAND: ``$SHELL``, else bash, else sh.

It exits as COMMAND did (128 + the signal when a signal ended it), 127 when COMMAND cannot be run. When
stdin ends or this process gets SIGTERM or SIGHUP (the client went away), COMMAND's session gets SIGHUP,
as when a terminal window closes, and SIGKILL 5 s later if it is still there.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import json
import os
import select
import signal
import struct
import sys
import termios
import time

CHUNK = 65536
EXIT_CANNOT_RUN = 127


def default_command() -> list[str]:
    shell = os.environ.get("SHELL")
    if shell and os.access(shell, os.X_OK):
        return [shell]
    return ["/bin/bash"] if os.access("/bin/bash", os.X_OK) else ["/bin/sh"]


def set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def parse_size(line: bytes) -> tuple[int, int] | None:
    """``{"rows": R, "cols": C}`` with each from 1 to 10000, else None (a bad line is ignored)."""
    try:
        message = json.loads(line)
        rows, cols = message["rows"], message["cols"]
    except (ValueError, TypeError, KeyError):
        return None
    sizes = (rows, cols)
    if all(type(n) is int and 1 <= n <= 10_000 for n in sizes):
        return rows, cols
    return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _start(command: list[str], rows: int, cols: int) -> tuple[int, int]:
    """COMMAND on a new terminal sized before it starts (a program reads its size once, at its start)."""
    master, slave = os.openpty()
    set_size(slave, rows, cols)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()  # a session of its own, whose controlling terminal is the new one
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            if slave > 2:
                os.close(slave)
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"svc: cannot run {command[0]}: {error.strerror}\r\n".encode())
        os._exit(EXIT_CANNOT_RUN)
    os.close(slave)
    return pid, master


# Keys typed but not yet taken by the terminal: past this, stdin is not read until it drains.
MAX_PENDING_INPUT = 1 << 20
# After a hang-up, how long the program may take to end before its session is killed.
HANG_UP_GRACE_SECONDS = 5.0


def _relay(pid: int, master: int, control: int | None) -> None:
    """Until the program closes its terminal: stdin → terminal, terminal → stdout, control → sizes.

    The terminal is written without blocking: a paste larger than its buffer waits here while the
    program's output is still read (a blocking write would wait on a program waiting on its output).
    """
    os.set_blocking(master, False)
    stdin_open = True
    typed = bytearray()
    sizes = b""
    kill_at: float | None = None
    while True:
        readers = [master]
        if stdin_open and len(typed) < MAX_PENDING_INPUT:
            readers.append(0)
        if control is not None:
            readers.append(control)
        timeout = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        readable, writable, _ = select.select(readers, [master] if typed else [], [], timeout)
        if kill_at is not None and time.monotonic() >= kill_at:
            _kill(pid)  # it ignored the hang-up: nobody is at its terminal any more
            kill_at = None
        if master in readable:
            try:
                data = os.read(master, CHUNK)
            except BlockingIOError:
                data = None
            except OSError as error:
                if error.errno != errno.EIO:  # EIO: every holder of the terminal's other side closed it
                    raise
                data = b""
            if data == b"":
                return
            if data:
                _write_all(1, data)
        if master in writable and typed:
            try:
                del typed[: os.write(master, typed)]
            except BlockingIOError:
                pass
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                typed.clear()
        if 0 in readable:
            data = os.read(0, CHUNK)
            if data:
                typed += data
            else:
                stdin_open = False
                _hang_up(pid)
                kill_at = time.monotonic() + HANG_UP_GRACE_SECONDS
        if control is not None and control in readable:
            data = os.read(control, CHUNK)
            if not data:
                control = None
                continue
            sizes += data
            *lines, sizes = sizes.split(b"\n")
            for line in lines:
                size = parse_size(line)
                if size is not None:
                    set_size(master, *size)


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _hang_up(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGHUP)
    except ProcessLookupError:
        pass


def exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="_terminal.py", description="COMMAND on a pseudo-terminal of its own.")
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--cols", type=int, default=80)
    parser.add_argument("--control-fd", type=int, default=None, help='JSON lines of sizes: {"rows": R, "cols": C}')
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    pid, master = _start(command or default_command(), args.rows, args.cols)

    def hang_up(_signal: int, _frame: object) -> None:
        _hang_up(pid)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, hang_up)
    try:
        _relay(pid, master, args.control_fd)
    finally:
        os.close(master)
    _, status = os.waitpid(pid, 0)
    return exit_code(status)


if __name__ == "__main__":
    sys.exit(main())
