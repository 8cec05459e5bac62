"""Whether a project is surely as it was when it was last bundled, told by ``stat`` alone.

Walking the project (``svc.bundle.collect``: each folder listed, each name matched against the
ignore rules) on every ``.remote()`` costs more than a warm call itself. So after a walk the
client keeps a ``FileStates``: the status (inode, mode, size, modification and change times) of
the project folder, of every folder and file the bundle holds and of ``.svcignore``, and whether
each folder left out holds a ``pyvenv.cfg`` (which is what excludes a virtual environment). The
next call reads them again; only when one differs is the project walked again, and its bundle
rewritten when the walk finds a change. What the walk sees is all in there: a file added,
removed or renamed changes its folder's times, a file written or its mode changed changes its own.

It is not kept, and every call walks, when it cannot be trusted:

- the project holds a symbolic link: where a link leads depends on paths outside it;
- a time it read is recent: a change made in the same tick of the file system's clock keeps the
  time unchanged. Recent means since the walk began, less ``RECENT_NS`` (or ``COARSE_RECENT_NS``
  for a time in whole seconds: a file system that keeps whole or even seconds).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..bundle import IGNORE_FILE, VENV_MARK, Entry

RECENT_NS = 100_000_000
"""How recent a sub-second time may be for the states to be trusted (clock ticks are milliseconds)."""
COARSE_RECENT_NS = 2_000_000_000
"""The same for a time in whole seconds (FAT keeps even seconds)."""

_State = tuple[int, int, int, int, int, int]


def _state(path: str) -> _State | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_mode, info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class FileStates:
    """The states of a project's paths after a walk; ``unchanged()`` reads them again."""

    def __init__(
        self, watched: list[str], venv_marks: list[str], states: tuple[_State | None, ...], marks: tuple[bool, ...]
    ) -> None:
        self._watched = watched
        self._venv_marks = venv_marks
        self._states = states
        self._marks = marks

    @classmethod
    def after_walk(cls, root: str, entries: Sequence[Entry], walk_began_ns: int) -> FileStates | None:
        """The states of the project ``collect(root)`` listed as ``entries`` (walked from ``walk_began_ns``, a
        ``time.time_ns()``), or None when they cannot be trusted."""
        if any(entry.kind == "link" for entry in entries):
            return None
        folders = [root] + [os.path.join(root, entry.path) for entry in entries if entry.kind == "dir"]
        kept = set(folders)
        venv_marks: list[str] = []
        try:
            for folder in folders:
                with os.scandir(folder) as children:
                    for child in children:
                        if child.is_symlink():  # one left out too: it may lead into the project later
                            return None
                        if child.is_dir(follow_symlinks=False) and child.path not in kept:
                            venv_marks.append(os.path.join(child.path, VENV_MARK))
        except OSError:
            return None
        watched = folders + [os.path.join(root, entry.path) for entry in entries if entry.kind == "file"]
        watched.append(os.path.join(root, IGNORE_FILE))  # read even when the bundle leaves it out
        try:
            states = tuple(_state(path) for path in watched)
        except OSError:
            return None
        if states[0] is None or any(state is not None and _recent(state, walk_began_ns) for state in states):
            return None
        return cls(watched, venv_marks, states, tuple(os.path.isfile(mark) for mark in venv_marks))

    def unchanged(self) -> bool:
        """True when every path is as it was; False when any differs or cannot be read (then walk again)."""
        try:
            if tuple(_state(path) for path in self._watched) != self._states:
                return False
        except OSError:
            return False
        return tuple(os.path.isfile(mark) for mark in self._venv_marks) == self._marks


def _recent(state: _State, since_ns: int) -> bool:
    for stamp in (state[4], state[5]):
        if stamp >= since_ns - (COARSE_RECENT_NS if stamp % 1_000_000_000 == 0 else RECENT_NS):
            return True
    return False
