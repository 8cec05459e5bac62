"""Small file-descriptor chores shared by the supervisor and the template."""

from __future__ import annotations

import errno
import os


def wake_pipe() -> tuple[int, int]:
    """A non-blocking pipe for ``signal.set_wakeup_fd``: signals wake the ``select`` loop."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    return read_end, write_end


def drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def at_eof(fd: int) -> bool:
    """Reads what the other end sent (ignored); True at end-of-file or on an error."""
    try:
        return not os.read(fd, 4096)
    except BlockingIOError:
        return False
    except OSError as error:
        return error.errno != errno.EINTR


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def replace_stdin() -> None:
    """Children get /dev/null: a lifeline on stdin belongs to the process the platform started."""
    null = os.open(os.devnull, os.O_RDONLY)
    if null != 0:
        os.dup2(null, 0)
        os.close(null)
