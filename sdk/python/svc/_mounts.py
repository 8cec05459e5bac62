"""``volumes={"/data": vol}``: the volumes a workload's containers mount, checked at the decorator line.

The rules are the platform's (core/model/volume-mounts.ts), so that a mistake fails where it is written:
an absolute, plain path; not ``/``; not in a folder the system needs; not ``/tmp`` or ``/var`` itself;
no two mounts at or inside one another. The container's runtime refuses, besides, a path over the app's
own code or Python (sdk/python/svc/runtime/_mounts.py), which only it knows for sure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from . import _checks
from ._volume import Volume
from .exceptions import InvalidOptionError

MAX_VOLUME_MOUNTS = 16
MAX_MOUNT_PATH_CHARS = 512
SYSTEM_MOUNT_PATHS = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
)
SHARED_MOUNT_PATHS = ("/tmp", "/var")


@dataclass(frozen=True)
class VolumeMount:
    """One volume as a workload mounts it: the volume's name, at ``path`` in each container."""

    path: str
    volume: str
    read_only: bool


def overlap(a: str, b: str) -> bool:
    """``a`` is ``b``, or one holds the other."""
    return a == b or a.startswith(f"{b}/") or b.startswith(f"{a}/")


def mount_path_problem(path: str) -> str | None:
    """What is wrong with ``path`` as the place of a mount, or None."""
    if len(path) > MAX_MOUNT_PATH_CHARS:
        return f"is longer than {MAX_MOUNT_PATH_CHARS} characters"
    if "\0" in path:
        return "contains a NUL character"
    if not path.startswith("/"):
        return 'is not absolute: mount a volume at a path such as "/data"'
    if path == "/":
        return 'is "/": a volume cannot replace the whole file system; mount it at a folder such as "/data"'
    if any(part in ("", ".", "..") for part in path[1:].split("/")):
        return 'is not a plain absolute path: write it without "//", "." or "..", and without a trailing "/"'
    for folder in SYSTEM_MOUNT_PATHS:
        if path == folder or path.startswith(f"{folder}/"):
            return f'is in {folder}, which the system needs: mount it at a folder such as "/data"'
    if path in SHARED_MOUNT_PATHS:
        return f'is {path} itself: mount it at a folder inside, such as "{path}/data", or at "/data"'
    return None


def check_volumes(where: str, value: Any) -> tuple[VolumeMount, ...]:
    """The ``volumes=`` argument: a dict from absolute paths to ``svc.Volume``."""
    example = 'pass a dict such as {"/data": svc.Volume.from_name("models")}'
    if isinstance(value, Volume):
        raise InvalidOptionError(
            f"{where}: volumes= maps paths to volumes: write {{'/data': {value!r}}}", option="volumes"
        )
    if not isinstance(value, Mapping):
        raise InvalidOptionError(
            f"{where}: volumes= is a {_checks.type_name(value)}, not a dict: {example}", option="volumes"
        )
    items = cast("Mapping[object, object]", value)
    if len(items) > MAX_VOLUME_MOUNTS:
        raise InvalidOptionError(
            f"{where}: volumes= mounts {len(items)} volumes; a workload mounts at most {MAX_VOLUME_MOUNTS}",
            option="volumes",
        )
    mounts: list[VolumeMount] = []
    for path, volume in items.items():
        if not isinstance(path, str):
            raise InvalidOptionError(
                f"{where}: volumes= has the key {path!r}; keys are absolute paths such as '/data'", option="volumes"
            )
        if not isinstance(volume, Volume):
            raise InvalidOptionError(
                f"{where}: volumes[{path!r}] is a {_checks.type_name(volume)}, not a svc.Volume: {example}",
                option="volumes",
            )
        problem = mount_path_problem(path)
        if problem is not None:
            raise InvalidOptionError(f"{where}: volumes= the mount path {path!r} {problem}", option="volumes")
        for other in mounts:
            if overlap(path, other.path):
                how = "is also" if path == other.path else "overlaps"
                raise InvalidOptionError(
                    f"{where}: volumes= the mount path {path!r} {how} {other.path!r}: give each volume its own folder",
                    option="volumes",
                )
        mounts.append(VolumeMount(path, volume.name, volume.is_read_only))
    return tuple(mounts)


def check_code_overlap(where: str, mounts: tuple[VolumeMount, ...], code_folder: str | None) -> None:
    """A mount over the folder of the app's own code would hide it from the container: refused here."""
    if code_folder is None:
        return
    for mount in mounts:
        if overlap(mount.path, code_folder.rstrip("/") or "/"):
            raise InvalidOptionError(
                f"{where}: volumes= the mount path {mount.path!r} overlaps {code_folder}, the folder of the app's code: "
                "mount the volume at a folder of its own, such as '/data'",
                option="volumes",
            )
