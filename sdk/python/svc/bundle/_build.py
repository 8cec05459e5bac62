"""The deterministic bundle of a project folder.

The same files give the same bytes, hence the same sha256: entries are sorted by path;
mtimes, owners and modes are normalised (0644, or 0755 when the owner, group or others may
execute the file; folders 0755); the gzip header carries no time and no file name. Only
folders, regular files and symbolic links that stay inside the project are stored: links
are kept as relative links to their final target; links that leave the project, dangle or
point into an excluded path, and special files (fifos, sockets, devices) are skipped with a
warning. Hard links are stored as plain files.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._ignore import IGNORE_FILE, VENV_MARK, IgnoreRules

#: Largest project (sum of the sizes of its bundled files) bundled unless told otherwise.
DEFAULT_MAX_BYTES = 100 * 1024 * 1024

#: Every entry's modification time: 2000-01-01T00:00:00Z (a fixed, unremarkable date).
FIXED_MTIME = 946684800

Warn = Callable[[str], None]


class BundleError(Exception):
    """The project cannot be bundled; the message says why."""


class BundleTooLarge(BundleError):
    """The project is larger than the size limit."""

    def __init__(self, message: str, total: int, limit: int, biggest: list[tuple[str, int]]):
        super().__init__(message)
        self.total = total
        self.limit = limit
        self.biggest = biggest


@dataclass(frozen=True)
class Entry:
    """One member of the bundle. ``path`` is relative, POSIX, without a trailing slash."""

    path: str
    kind: str  # "dir", "file" or "link"
    mode: int = 0o644
    size: int = 0
    source: Path | None = None
    target: str = ""
    mtime_ns: int = field(default=0, compare=False)
    """A file's modification time when it was listed (never bundled: ``.remote()`` tells changes by it)."""


@dataclass(frozen=True)
class BundleResult:
    path: Path
    sha256: str
    size: int
    files: int

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "sha256": self.sha256, "size": self.size, "files": self.files}


def collect(
    project: str | os.PathLike[str], *, warn: Warn = lambda _message: None, exclude: frozenset[str] = frozenset()
) -> list[Entry]:
    """Every entry of the project's bundle, sorted by path; excluded paths left out.

    ``exclude`` holds real paths left out as well (the bundle being written, when it is
    written inside the project).
    """
    root = Path(project)
    if not root.is_dir():
        raise BundleError(f"not a folder: {root}")
    real_root = Path(os.path.realpath(root))
    rules = _read_rules(root)
    entries = [
        e for e in _walk(root, real_root, "", rules, warn) if not exclude or str(real_root / e.path) not in exclude
    ]
    entries.sort(key=lambda entry: entry.path.encode("utf-8", "surrogateescape"))
    return entries


def _read_rules(root: Path) -> IgnoreRules:
    ignore_file = root / IGNORE_FILE
    try:
        return IgnoreRules.from_text(ignore_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return IgnoreRules()
    except (OSError, UnicodeDecodeError) as error:
        raise BundleError(f"cannot read {ignore_file}: {error}") from error


def _walk(root: Path, real_root: Path, prefix: str, rules: IgnoreRules, warn: Warn) -> Iterator[Entry]:
    folder = root / prefix if prefix else root
    try:
        children = sorted(os.scandir(folder), key=lambda child: child.name)
    except OSError as error:
        raise BundleError(f"cannot read folder {folder}: {error.strerror or error}") from error
    for child in children:
        relative = f"{prefix}/{child.name}" if prefix else child.name
        if not _is_utf8(child.name):
            warn(f"skipped {relative!r}: its name is not valid UTF-8")
            continue
        try:
            info = child.stat(follow_symlinks=False)
        except OSError as error:
            raise BundleError(f"cannot read {child.path}: {error.strerror or error}") from error
        if stat.S_ISLNK(info.st_mode):
            if not rules.ignored(relative, False):
                link = _link_entry(root, real_root, relative, rules, warn)
                if link is not None:
                    yield link
        elif stat.S_ISDIR(info.st_mode):
            is_venv = os.path.isfile(os.path.join(child.path, VENV_MARK))
            if rules.ignored(relative, True, is_venv=is_venv):
                continue
            yield Entry(relative, "dir", 0o755)
            yield from _walk(root, real_root, relative, rules, warn)
        elif stat.S_ISREG(info.st_mode):
            if not rules.ignored(relative, False):
                yield Entry(
                    relative,
                    "file",
                    _file_mode(info.st_mode),
                    info.st_size,
                    Path(child.path),
                    mtime_ns=info.st_mtime_ns,
                )
        elif not rules.ignored(relative, False):
            warn(f"skipped {relative}: it is not a regular file, folder or link (a fifo, socket or device)")


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _file_mode(mode: int) -> int:
    return 0o755 if mode & 0o111 else 0o644


def _link_entry(root: Path, real_root: Path, relative: str, rules: IgnoreRules, warn: Warn) -> Entry | None:
    """A link whose final target lies inside the project, as a relative link to that target."""
    where = root / relative
    target = os.path.realpath(where)
    if target != str(real_root) and not target.startswith(str(real_root) + os.sep):
        warn(f"skipped link {relative} -> {os.readlink(where)}: it points outside the project")
        return None
    if not os.path.exists(target):
        warn(f"skipped link {relative} -> {os.readlink(where)}: its target does not exist")
        return None
    target_relative = Path(target).relative_to(real_root).as_posix()
    if target_relative != "." and _excluded(target_relative, real_root, rules):
        warn(f"skipped link {relative} -> {os.readlink(where)}: its target is excluded from the bundle")
        return None
    parent = Path(real_root, relative).parent
    return Entry(relative, "link", 0o777, target=os.path.relpath(target, parent))


def _excluded(relative: str, real_root: Path, rules: IgnoreRules) -> bool:
    """Whether ``relative`` (a real path inside the project) or one of its folders is excluded."""
    parts = relative.split("/")
    for depth in range(1, len(parts) + 1):
        path = "/".join(parts[:depth])
        full = real_root / path
        is_dir = full.is_dir()
        if rules.ignored(path, is_dir, is_venv=is_dir and (full / VENV_MARK).is_file()):
            return True
    return False


def check_size(entries: list[Entry], max_bytes: int) -> int:
    """The total size of the files; BundleTooLarge naming the biggest when it passes ``max_bytes``."""
    total = sum(entry.size for entry in entries)
    if total <= max_bytes:
        return total
    biggest = sorted(((e.path, e.size) for e in entries if e.kind == "file"), key=lambda item: (-item[1], item[0]))[:10]
    lines = "\n".join(f"  {_human(size):>10}  {path}" for path, size in biggest)
    raise BundleTooLarge(
        f"the project holds {_human(total)} of files, more than the {_human(max_bytes)} a bundle may hold. "
        f"The biggest files:\n{lines}\n"
        f"Exclude what the app does not need in {IGNORE_FILE} (gitignore syntax), or raise the limit with --max-bytes.",
        total,
        max_bytes,
        biggest,
    )


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


def write_tar_gz(entries: list[Entry], out: io.BufferedIOBase) -> None:
    """Writes the entries as a deterministic tar.gz to ``out``."""
    # filename="" leaves the name out of the gzip header; mtime=0 leaves the time out.
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as compressed:
        with tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
            for entry in entries:
                info = tarfile.TarInfo(entry.path)
                info.mtime = FIXED_MTIME
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = entry.mode
                if entry.kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif entry.kind == "link":
                    info.type = tarfile.SYMTYPE
                    info.linkname = entry.target
                    tar.addfile(info)
                else:
                    assert entry.source is not None
                    _add_file(tar, info, entry)


def _add_file(tar: tarfile.TarFile, info: tarfile.TarInfo, entry: Entry) -> None:
    assert entry.source is not None
    try:
        with open(entry.source, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size != entry.size:
                raise BundleError(f"{entry.path} changed while the bundle was written; try again")
            info.size = size
            tar.addfile(info, handle)
    except OSError as error:
        raise BundleError(f"cannot read {entry.source}: {error.strerror or error}") from error


def default_output(project: str | os.PathLike[str]) -> Path:
    """``<project>/.svc/bundle.tar.gz``: inside the project, but excluded from its bundles."""
    return Path(project) / ".svc" / "bundle.tar.gz"


def build_bundle(
    project: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    warn: Warn = lambda _message: None,
) -> BundleResult:
    """Writes the bundle of ``project`` to ``out`` (atomically) and describes it."""
    target = Path(out) if out is not None else default_output(project)
    entries = collect(project, warn=warn, exclude=frozenset({os.path.realpath(target)}))
    check_size(entries, max_bytes)
    return write_entries(entries, target)


def write_entries(entries: list[Entry], target: Path) -> BundleResult:
    """Writes the tar.gz of ``entries`` to ``target`` atomically (a temporary file renamed into place)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".bundle-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write_tar_gz(entries, handle)
        digest = hashlib.sha256()
        with open(temporary, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    files = sum(1 for entry in entries if entry.kind != "dir")
    return BundleResult(target.resolve(), digest.hexdigest(), target.stat().st_size, files)
