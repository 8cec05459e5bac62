"""The project as its bundle would hold it: its entries, a digest of their content, the tar.gz.

The digest covers every entry's path, kind, mode, link target and file content, which is all
the deterministic bundle is made of: equal digests mean equal bundles, so an unchanged project
(a touch, a save without changes) is recognised without writing the bundle. File contents are
hashed again only when their file changed (its size, times or inode), except for files changed
in the last seconds, which are always read (a write within the same clock tick keeps them).

Editor temporary files (swap files, backups, lock files, atomic-save temporaries) are left out:
they come and go while one edits, and are never part of the code a preview runs.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..bundle import Entry, check_size, collect
from ..bundle._build import write_entries

EDITOR_TEMPORARY = re.compile(
    r"(?:^|/)(?:"
    r"\.[^/]*\.sw[a-p]|[^/]*\.sw[px]|4913|[^/]*~"  # vim: swap files, its write test, backups
    r"|\.#[^/]*|#[^/]*#"  # emacs: lock links, autosaves
    r"|[^/]*___jb_(?:tmp|old|bak)___"  # JetBrains safe write
    r"|\.goutputstream-[^/]*|[^/]*\.crswap|\.~lock\.[^/]*#|[^/]*\.tmp\.\d+(?:\.\d+)?"  # gedit, Chrome, LibreOffice, atomic writers
    r")$"
)
"""A project-relative path an editor writes while saving or editing, not the user's code."""

RACY_SECONDS = 2.0


def is_editor_temporary(path: str) -> bool:
    return EDITOR_TEMPORARY.search(path) is not None


@dataclass(frozen=True)
class Snapshot:
    entries: list[Entry]
    digest: str
    warnings: list[str]


class Snapshots:
    """Snapshots of one project after another, remembering file hashes between them."""

    def __init__(self) -> None:
        self._hashes: dict[str, tuple[tuple[int, int, int, int], str]] = {}

    def take(self, root: str, exclude: tuple[str, ...] = ()) -> Snapshot:
        """The project's entries, without editor temporaries and without what lies in ``exclude`` (real paths)."""
        warnings: list[str] = []

        def warn(message: str) -> None:
            if not any(is_editor_temporary(word.strip("'\"")) for word in message.split()):
                warnings.append(message)

        real_root = os.path.realpath(root)
        # svc's own folders (a data dir inside the project) are not the user's code.
        excluded = tuple(
            os.path.relpath(real, real_root).replace(os.sep, "/")
            for real in map(os.path.realpath, exclude)
            if real != real_root and real.startswith(real_root + os.sep)
        )
        entries = [
            entry
            for entry in collect(root, warn=warn)
            if not is_editor_temporary(entry.path)
            and not any(entry.path == prefix or entry.path.startswith(prefix + "/") for prefix in excluded)
        ]
        digest = hashlib.sha256()
        now = time.time()
        seen: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        for entry in entries:
            digest.update(
                f"{entry.kind}\0{entry.path}\0{entry.mode:o}\0{entry.target}\0".encode("utf-8", "surrogateescape")
            )
            if entry.kind == "file" and entry.source is not None:
                content = self._content_hash(str(entry.source), now, seen)
                digest.update(content.encode())
            digest.update(b"\n")
        self._hashes = seen
        return Snapshot(entries, digest.hexdigest(), warnings)

    def _content_hash(self, path: str, now: float, seen: dict[str, tuple[tuple[int, int, int, int], str]]) -> str:
        info = os.stat(path)
        key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        known = self._hashes.get(path)
        if known is not None and known[0] == key and now - info.st_mtime > RACY_SECONDS:
            seen[path] = known
            return known[1]
        content = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                content.update(chunk)
        value = content.hexdigest()
        seen[path] = (key, value)
        return value


def write_bundle(snapshot: Snapshot, out: str, max_bytes: int) -> dict[str, object]:
    """Writes the snapshot's bundle to ``out`` (atomically); what ``python -m svc.bundle`` prints."""
    check_size(snapshot.entries, max_bytes)
    return write_entries(list(snapshot.entries), Path(out)).as_json()
