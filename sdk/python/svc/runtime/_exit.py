"""How a forked child ends, and how its end is named: shared by the runtime and the dev helper."""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """Flushes what the child printed, then leaves at once: a fork must not unwind into its parent's stack or run its exit hooks."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said
            pass
    os._exit(code)


def signal_name(number: int) -> str:
    """`SIGKILL` for 9; the number itself when it names no signal."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
