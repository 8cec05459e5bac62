"""Joining the container's cgroup, before any user code runs.

The platform makes one cgroup per container (cpu quota, memory limit) and names its
``cgroup.procs`` files: one per hierarchy on cgroup v1, one on v2. The container's main
process writes its own pid into each as its first step (``--cgroup`` of a spawned container,
``"cgroup"`` of a fork request); the workers it forks inherit the cgroup.
"""

from __future__ import annotations

import os
from typing import Any, cast


class CgroupError(Exception):
    pass


def cgroup_files(value: Any) -> list[str]:
    """The ``cgroup.procs`` paths of a request (absent: none); CgroupError says what is wrong."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise CgroupError(f"cgroup must be a list of absolute paths of cgroup.procs files, not {value!r}")
    files: list[str] = []
    for item in cast("list[object]", value):
        if not (isinstance(item, str) and os.path.isabs(item) and os.path.basename(item) == "cgroup.procs"):
            raise CgroupError(f"cgroup must be a list of absolute paths of cgroup.procs files; {item!r} is not one")
        files.append(item)
    return files


def join_cgroup(procs_files: list[str]) -> None:
    """Moves this process into the cgroup; CgroupError names the file that refused."""
    pid = str(os.getpid())
    for path in procs_files:
        try:
            with open(path, "w") as file:
                file.write(pid)
        except OSError as error:
            raise CgroupError(f"could not join the container's cgroup ({path}: {error.strerror or error})") from None
