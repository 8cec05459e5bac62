"""The lifeline: the runtime stops when the platform process that started it dies.

The platform keeps the runtime's stdin open as a pipe and never writes to it.
When the platform exits, even by SIGKILL, the pipe closes, the read returns
end-of-file and the runtime shuts down. With stdin on a terminal or /dev/null
(started by hand) there is no lifeline.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable


def has_lifeline(fd: int) -> bool:
    """True when ``fd`` is a pipe or a socket (what a parent process passes), not a tty or a file."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def watch(fd: int, on_close: Callable[[], None]) -> threading.Thread | None:
    """Calls ``on_close`` from a daemon thread once ``fd`` reaches end-of-file.

    Returns the thread, or None when ``fd`` is not a pipe or socket.
    """
    if not has_lifeline(fd):
        return None

    def wait() -> None:
        while True:
            try:
                if not os.read(fd, 4096):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        on_close()

    thread = threading.Thread(target=wait, name="svc-lifeline", daemon=True)
    thread.start()
    return thread
