"""Mounting a container's volumes, before anything of the user's is imported.

The platform names them in ``SVC_VOLUME_MOUNTS``: a JSON list of ``{"path", "source", "read_only"}``,
``source`` being the volume's folder on this host. The container's main process leaves the host's
mount namespace for a private one of its own (as root, or else inside a user namespace that maps the
user to itself) and bind-mounts each folder at its path there; the workers it forks share that
namespace, and nothing of it is seen outside. A missing mount point is created (an empty folder, left
in place). What cannot be mounted fails the container's start with one line saying why and what to do.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

MOUNTS_ENV = "SVC_VOLUME_MOUNTS"

# <sched.h> and <sys/mount.h> of Linux.
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
# statvfs f_flag bits that a remount in a user namespace must keep (the kernel locks them).
_LOCKED_FLAGS = (
    (os.ST_NOSUID, _MS_NOSUID),
    (os.ST_NODEV, _MS_NODEV),
    (os.ST_NOEXEC, _MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME),
    (os.ST_NODIRATIME, _MS_NODIRATIME),
    (os.ST_RELATIME, _MS_RELATIME),
)


class MountError(Exception):
    """A volume that cannot be mounted; the message is one line for the app's logs."""


class Mount(NamedTuple):
    path: str
    source: str
    read_only: bool


def mounts_from(env: Mapping[str, str]) -> list[Mount]:
    """The mounts ``env`` asks for (none without ``SVC_VOLUME_MOUNTS``); MountError when it is malformed."""
    text = env.get(MOUNTS_ENV)
    if not text:
        return []
    try:
        items: Any = json.loads(text)
    except ValueError as error:
        raise MountError(f"{MOUNTS_ENV} is not JSON ({error})") from None
    if not isinstance(items, list):
        raise MountError(f"{MOUNTS_ENV} must be a list of mounts")
    mounts: list[Mount] = []
    for item in cast("list[object]", items):
        if not isinstance(item, dict):
            raise MountError(f"{MOUNTS_ENV} holds {item!r}, not a mount")
        fields = cast("dict[str, object]", item)
        path, source, read_only = fields.get("path"), fields.get("source"), fields.get("read_only")
        if not (isinstance(path, str) and os.path.isabs(path) and isinstance(source, str) and os.path.isabs(source)):
            raise MountError(f"{MOUNTS_ENV}: a mount needs absolute path and source, got {item!r}")
        mounts.append(Mount(os.path.normpath(path), os.path.normpath(source), read_only is True))
    return mounts


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def check_mounts(mounts: Sequence[Mount], kept: Iterable[str]) -> None:
    """MountError when a mount would hide what the container runs from: the app's code, Python, svc's
    runtime, its sockets, or a volume's own folder (``kept``, and the sources)."""
    protected = [os.path.realpath(p) for p in kept] + [m.source for m in mounts]
    for mount in mounts:
        target = os.path.realpath(mount.path)
        for place in protected:
            if _overlap(target, place):
                raise MountError(
                    f"cannot mount a volume at {mount.path}: it overlaps {place}, which this container runs from; "
                    f"mount it at a folder of its own, such as /data"
                )


def runtime_folders(root: str, socket_dir: str | None) -> list[str]:
    """What a mount may not hide: the app's folder, the sockets' folder, Python's prefixes and svc itself."""
    import svc

    folders = [root, sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.abspath(svc.__file__)))]
    return folders + ([socket_dir] if socket_dir else [])


def enter_mounts(mounts: Sequence[Mount]) -> None:
    """Leaves the host's mount namespace and bind-mounts each volume; MountError says why it could not."""
    if not mounts:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for mount in mounts:
        if not os.path.isdir(mount.source):
            raise MountError(f"the volume's folder {mount.source} is missing on this host (was the volume deleted?)")
    _private_namespace(libc)
    for mount in mounts:
        _make_mount_point(mount.path)
        _call(libc.mount, mount.source.encode(), mount.path.encode(), None, _MS_BIND, None, f"bind {mount.path}")
        if mount.read_only:
            flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _locked_flags(mount.path)
            _call(libc.mount, None, mount.path.encode(), None, flags, None, f"make {mount.path} read-only")
    os.environ.pop(MOUNTS_ENV, None)  # the app's own processes need not see it


def _private_namespace(libc: ctypes.CDLL) -> None:
    """A mount namespace of this process's own, whose mounts do not propagate back to the host."""
    if libc.unshare(_CLONE_NEWNS) != 0:
        first = ctypes.get_errno()
        if first != errno.EPERM:
            raise MountError(f"cannot make a private mount namespace: {os.strerror(first)}")
        _user_namespace(libc)
    _call(libc.mount, b"none", b"/", None, _MS_REC | _MS_PRIVATE, None, "make / private")


def _user_namespace(libc: ctypes.CDLL) -> None:
    """Not root: a user namespace that maps this user to itself, and a mount namespace owned by it."""
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        raise MountError(
            f"cannot mount volumes: svc runs as uid {uid}, not root, and this kernel refuses an unprivileged user "
            f"namespace ({os.strerror(ctypes.get_errno())}); run svc as root, or allow user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0)"
        )
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)


def _make_mount_point(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise MountError(
            f"cannot create the mount point {path}: {error.strerror or error}; create the folder on this host first, "
            "or mount the volume under a folder svc may write"
        ) from None
    if not os.path.isdir(path):
        raise MountError(f"cannot mount a volume at {path}: a file is there, not a folder")


def _locked_flags(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return sum(bit for st, bit in _LOCKED_FLAGS if flags & st)


def _call(fn: Any, source: bytes | None, target: bytes, fstype: None, flags: int, data: None, what: str) -> None:
    if fn(source, target, fstype, ctypes.c_ulong(flags), data) != 0:
        raise MountError(f"cannot {what}: {os.strerror(ctypes.get_errno())}")


def mount_volumes(root: str, socket_dir: str | None) -> None:
    """Mounts what ``SVC_VOLUME_MOUNTS`` names, after checking none hides what this container runs from."""
    mounts = mounts_from(os.environ)
    if mounts:
        check_mounts(mounts, runtime_folders(root, socket_dir))
        enter_mounts(mounts)
