"""Tracebacks that start in the user's code: svc's own frames, the import machinery and the
thread pool are dropped from the top, so the first frame shown is one the user wrote."""

from __future__ import annotations

import concurrent.futures
import importlib
import os
import traceback
from types import TracebackType

_INTERNAL_DIRS = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (__file__, concurrent.futures.__file__, importlib.__file__)
)


def _internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL_DIRS) or filename.startswith("<frozen importlib")


def user_frames(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` from its first frame outside svc, importlib and concurrent.futures (None if all are)."""
    while tb is not None and _internal(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def format_user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` as text, starting at the user's code.

    A SyntaxError keeps only its own lines (file, line, caret), which already point
    at the user's code.
    """
    return "".join(traceback.format_exception(type(exc), exc, user_frames(exc.__traceback__)))
