"""``svc.Volume``: a named folder of files a workspace keeps on the server (docs/volumes.md), and its files in and
out from Python. Files stream both ways: an upload is read from its file as it is sent, a download written as it
comes, so their size does not matter to this process's memory. Nothing is asked of the server until the first use.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import http.client
import os
import re
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, cast
from urllib.parse import quote

from . import _checks
from .exceptions import InvalidOptionError, InvalidRequestError, NotFoundError, RemoteError, ServerUnreachableError

if TYPE_CHECKING:
    from ._client._http import Api

_CHUNK = 1024 * 1024


_FILES_AT_ONCE = 4
"""Files of a folder put at once (``put_dir``)."""

_LIST_PAGE = 10_000
"""Entries a listing's page brings (``iterdir``): the most the API gives."""


@dataclass(frozen=True)
class FileEntry:
    """One file or folder of a volume: its path from the volume's root, ``file``, ``dir`` or ``link``, its size in
    bytes (a file's; 0 otherwise) and when it last changed (ISO 8601)."""

    path: str
    type: str
    size: int
    modified_at: str


class Volume:
    """A volume of the workspace this process is signed in to.

    Example::

        vol = svc.Volume.from_name("models", create_if_missing=True)
        vol.put_file("./small.bin", "weights/small.bin")
        print([entry.path for entry in vol.listdir("weights")])
        data = b"".join(vol.read_file("weights/small.bin"))
    """

    def __init__(self, name: str, *, create_if_missing: bool = False, read_only: bool = False) -> None:
        self.name = name
        self.is_read_only = read_only
        """Whether ``volumes={path: vol}`` mounts it read-only (``vol.read_only()``)."""
        self._create_if_missing = create_if_missing
        self._checked = False
        self._lock = threading.Lock()

    @classmethod
    def from_name(cls, name: str, *, create_if_missing: bool = False) -> Volume:
        """The volume ``name`` (a lowercase DNS label); with ``create_if_missing=True`` it is created at its first use
        when the workspace has none of that name, else that first use raises ``svc.NotFoundError``."""
        try:
            checked = _checks.name(name)
        except _checks.Problem as problem:
            _checks.reject("svc.Volume.from_name", "name", name, problem)
        if not isinstance(cast(object, create_if_missing), bool):
            raise InvalidOptionError(
                f"svc.Volume.from_name: create_if_missing={create_if_missing!r} must be True or False",
                option="create_if_missing",
            )
        return cls(checked, create_if_missing=create_if_missing)

    def __repr__(self) -> str:
        return f"svc.Volume({self.name!r}){'.read_only()' if self.is_read_only else ''}"

    def read_only(self) -> Volume:
        """The same volume, mounted read-only where it is given in ``volumes=``: a write there fails (``OSError``,
        EROFS). Its files still change through ``put_file`` and ``svc volume put``, and others that mount it."""
        return Volume(self.name, create_if_missing=self._create_if_missing, read_only=True)

    def listdir(self, path: str = "", *, recursive: bool = False) -> list[FileEntry]:
        """What the folder ``path`` holds (the root by default; everything below it with ``recursive=True``), or the one
        entry of a file, sorted by path: all of it, however many entries (``iterdir`` yields them as they come)."""
        return list(self.iterdir(path, recursive=recursive))

    def iterdir(self, path: str = "", *, recursive: bool = False) -> Iterator[FileEntry]:
        """The entries ``listdir`` gives, one at a time, fetched a page of at most 10 000 at a time: a folder of a
        million files is walked without holding its listing."""
        base = f"{self._path()}/entries?path={quote(_remote(path))}&limit={_LIST_PAGE}"
        if recursive:
            base += "&recursive=true"
        after: str | None = None
        while True:
            page = self._api().request("GET", base if after is None else f"{base}&after={quote(after)}").json()
            for e in cast("list[dict[str, Any]]", page["entries"]):
                yield FileEntry(e["path"], e["type"], int(e["size"]), e["modifiedAt"])
            after = cast("str | None", page["next"])
            if after is None:
                return

    def read_file(self, path: str) -> Iterator[bytes]:
        """The bytes of the file ``path``, in chunks as they arrive: ``b"".join(vol.read_file(p))`` for all of them."""
        stream = self._api().open("GET", f"{self._path()}/files?path={quote(_remote(path))}", timeout=None)
        try:
            if stream.status != 200:
                _raise(stream.status, stream.read(), f"GET {self._path()}/files")
            while True:
                chunk = stream.response.read(_CHUNK)
                if not chunk:
                    return
                yield chunk
        finally:
            stream.close()

    def get_file(self, path: str, local: str | os.PathLike[str]) -> None:
        """Downloads the file ``path`` to ``local``: written beside it first (``<local>.svc-partial``), renamed onto it
        once it has all the bytes the server announced. A download cut off by the network keeps what came, with the
        file's ETag (``<local>.svc-partial.etag``); the next ``get_file`` (or ``svc volume get``) into ``local`` asks
        only for the rest, or for all of it when the file changed meanwhile. Parts that ``svc volume get`` left
        (``<local>.svc-partial.parts``) are fetched again. One download into ``local`` at a time. A ``local`` that is
        a folder, or ends in ``/`` (made if need be), gets the file inside it under its own name, as ``cp`` puts it."""
        target = Path(local)
        if target.is_dir() or str(local).endswith(("/", os.sep)):
            target = target / Path(_remote(path)).name
        target.parent.mkdir(parents=True, exist_ok=True)
        with _download_lock(target):
            self._fetch_into(path, target, resume=True)

    def _fetch_into(self, path: str, target: Path, *, resume: bool) -> None:
        partial = target.with_name(f"{target.name}.svc-partial")
        etag_file = target.with_name(f"{target.name}.svc-partial.etag")
        parts_file = target.with_name(f"{target.name}.svc-partial.parts")
        if parts_file.exists():  # parts that ``svc volume get`` fetched in any order: not a beginning to go on from
            _discard(partial, etag_file)
            parts_file.unlink(missing_ok=True)
        kept = partial.stat().st_size if resume and partial.exists() else 0
        etag = etag_file.read_text().strip() if kept and etag_file.exists() else ""
        headers = {"Range": f"bytes={kept}-", "If-Range": etag} if etag else {}
        where = f"GET {self._path()}/files"
        stream = self._api().open(
            "GET", f"{self._path()}/files?path={quote(_remote(path))}", headers=headers, timeout=None
        )
        try:
            span = _content_range(stream.headers.get("content-range", ""))
            if etag and (stream.status == 416 or (stream.status == 206 and span[:2] != (kept, span[2] - 1))):
                if stream.status == 416 and span[2] == kept:  # all of it came before; only the rename did not
                    _finish(partial, etag_file, target, kept)
                    return
                _discard(partial, etag_file)  # not a beginning of this file, or not the rest asked for
                stream.close()
                self._fetch_into(path, target, resume=False)
                return
            if stream.status != 200 and not (stream.status == 206 and etag):
                try:
                    body = stream.read()
                except (OSError, http.client.HTTPException):
                    body = b""
                _raise(stream.status, body, where)
            appending = stream.status == 206
            total = span[2] if appending else int(stream.headers.get("content-length", "-1"))
            fresh = stream.headers.get("etag", "")
            if not appending and fresh and not fresh.startswith("W/"):  # a weak ETag never matches If-Range
                etag_file.write_text(fresh)
            elif not appending:
                etag_file.unlink(missing_ok=True)
            resumable = appending or etag_file.exists()
            _write_from(stream.response, partial, appending, resumable=resumable, where=where)
            if 0 <= total and partial.stat().st_size < total:  # the connection ended early: http.client reads short
                _cut_off(partial, resumable, where, None)
            _finish(partial, etag_file, target, total if total >= 0 else None)
        finally:
            stream.close()

    def put_file(self, local: str | os.PathLike[str] | IO[bytes], path: str) -> FileEntry:
        """Uploads a file (a path, or a binary file object read from where it is) to ``path``; a file there is
        replaced once all of the new one arrived. A ``path`` ending in ``/`` is a folder: a local file goes in it
        under its own name, as ``svc volume put`` puts it. ``svc.InvalidRequestError`` (``volume_full``) past the
        limits."""
        remote = _remote(path)
        if remote.endswith("/") and isinstance(local, (str, os.PathLike)):
            remote += Path(local).name
        if not remote or remote.endswith("/"):
            raise ValueError(
                f"Volume.put_file: {path!r} names a folder; give the file a path inside the volume, like "
                "'weights/small.bin'"
            )
        headers = {"Content-Type": "application/octet-stream"}
        url = f"{self._path()}/files?path={quote(remote)}"
        if isinstance(local, (str, os.PathLike)):
            with open(local, "rb") as handle:
                headers["Content-Length"] = str(os.fstat(handle.fileno()).st_size)
                answer = self._api().request("PUT", url, body=handle, headers=headers, timeout=None, ok=(201,))
        else:
            answer = self._api().request("PUT", url, body=local, headers=headers, timeout=None, ok=(201,))
        entry = cast("dict[str, Any]", answer.json()["entry"])
        return FileEntry(entry["path"], entry["type"], int(entry["size"]), entry["modifiedAt"])

    def put_dir(self, local: str | os.PathLike[str], path: str = "") -> list[FileEntry]:
        """Uploads every file below the folder ``local`` to the same paths below ``path`` (the root by default), four
        at once; their entries in the files' order. The first failure is raised once the uploads under way ended,
        and no other starts after it."""
        root = Path(local)
        if not root.is_dir():
            raise NotADirectoryError(f"Volume.put_dir: {root} is not a folder")
        base = _remote(path)
        files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())

        failed = threading.Event()

        def put(file: Path) -> FileEntry | None:
            if failed.is_set():
                return None  # not started: an upload before it failed (raised first, in the files' order)
            relative = file.relative_to(root).as_posix()
            try:
                return self.put_file(file, f"{base}/{relative}" if base else relative)
            except BaseException:
                failed.set()
                raise

        # Four files at once, as ``svc volume put`` sends a folder: a small file's upload mostly waits on the server.
        with concurrent.futures.ThreadPoolExecutor(max_workers=_FILES_AT_ONCE) as pool:
            entries = list(pool.map(put, files))
        return [entry for entry in entries if entry is not None]

    def remove_file(self, path: str, *, recursive: bool = False) -> None:
        """Removes the file ``path``, or the folder with what it holds when ``recursive=True``."""
        suffix = "&recursive=true" if recursive else ""
        self._api().request("DELETE", f"{self._path()}/files?path={quote(_remote(path))}{suffix}")

    def _path(self) -> str:
        return f"/volumes/{self.name}"

    def _api(self) -> Api:
        from ._client._credentials import find_credentials
        from ._client._http import Api

        api = Api(find_credentials())
        with self._lock:
            if not self._checked:
                self._ensure(api)
                self._checked = True
        return api

    def _ensure(self, api: Api) -> None:
        """The volume exists, or is created when ``create_if_missing``; NotFoundError otherwise."""
        found = api.request("GET", self._path(), ok=(200, 404))
        if found.status == 200:
            return
        if not self._create_if_missing:
            raise NotFoundError(
                f"the workspace has no volume {self.name}: create it with svc volume create {self.name}, "
                f"or svc.Volume.from_name({self.name!r}, create_if_missing=True)"
            )
        api.request("POST", "/volumes", json_body={"name": self.name}, ok=(201, 409))  # 409: made meanwhile


def _remote(path: str) -> str:
    """A path inside the volume as the API takes it: ``/`` or a leading ``/`` is the volume's root."""
    return str(path).lstrip("/")


def _content_range(header: str) -> tuple[int, int, int]:
    """``Content-Range: bytes <first>-<last>/<total>`` (or ``bytes */<total>``) as three numbers; -1 where absent."""
    match = re.fullmatch(r"bytes (?:(\d+)-(\d+)|\*)/(\d+)", header.strip())
    if match is None:
        return (-1, -1, -1)
    first, last, total = match.groups()
    return (int(first) if first else -1, int(last) if last else -1, int(total))


def _write_from(response: IO[bytes], partial: Path, appending: bool, *, resumable: bool, where: str) -> None:
    """The answer's bytes into ``partial``. A local failure (writing, or flushing at the close) keeps nothing; the
    network's keeps what came when the file has an ETag to check the rest against, and says to call again."""
    cut: BaseException | None = None
    try:
        with open(partial, "ab" if appending else "wb") as out:
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except (OSError, http.client.HTTPException) as error:
                    cut = error
                    break
                if not chunk:
                    break
                out.write(chunk)
    except OSError:
        _discard(partial, partial.with_name(f"{partial.name}.etag"))
        raise
    if cut is not None:
        _cut_off(partial, resumable, where, cut)


def _cut_off(partial: Path, resumable: bool, where: str, error: BaseException | None) -> NoReturn:
    """The network ended the download early: what came is kept when there is an ETag to resume against."""
    if not resumable:
        _discard(partial, partial.with_name(f"{partial.name}.etag"))
    kept = partial.stat().st_size if partial.exists() else 0
    raise ServerUnreachableError(
        f"{where}: the download stopped after {kept} bytes{f' ({error!r})' if error else ''}",
        hint="Call get_file again (or run svc volume get): it goes on from there."
        if resumable
        else "Call get_file again; it starts over.",
    ) from error


def _finish(partial: Path, etag_file: Path, target: Path, total: int | None) -> None:
    """Renames the partial file onto ``target`` once it has the size the server announced."""
    size = partial.stat().st_size
    if total is not None and size != total:
        _discard(partial, etag_file)
        raise RemoteError(
            f"the download into {target} has {size} bytes where the server announced {total}",
            code="unexpected_response",
            hint="Call get_file again; it starts over.",
        )
    os.replace(partial, target)
    etag_file.unlink(missing_ok=True)


def _discard(partial: Path, etag_file: Path) -> None:
    partial.unlink(missing_ok=True)
    etag_file.unlink(missing_ok=True)


# The downloads of this process, by lock path: the lock file names a process, not a thread.
_held: set[Path] = set()
_held_lock = threading.Lock()

# A lock file still empty this long after it was made was left by a process stopped between making and writing it.
_EMPTY_LOCK_SECONDS = 10


@contextlib.contextmanager
def _download_lock(target: Path) -> Generator[None, None, None]:
    """``<local>.svc-partial.lock`` naming this process, as ``svc volume get`` takes it: two downloads appending to
    one partial file would make one file of both. Made whole at once (a file with the PID, linked to the lock's
    name, which fails where one exists); a lock whose process is gone is taken over."""
    lock = target.with_name(f"{target.name}.svc-partial.lock")
    with _held_lock:
        if lock in _held:
            raise InvalidRequestError(f"another download of this process is writing {target}", code="conflict")
        _held.add(lock)
    try:
        _take(lock, target)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        with _held_lock:
            _held.discard(lock)


def _take(lock: Path, target: Path) -> None:
    mine = lock.with_name(f"{lock.name}.{os.getpid()}.{threading.get_ident()}")
    mine.write_text(str(os.getpid()))
    try:
        for _ in range(2):
            try:
                os.link(mine, lock)
                return
            except FileExistsError:
                pass
            holder = _holder(lock)
            # This process's own PID there: a lock of a process gone that had it before (its threads are in _held).
            if holder is None or (holder != os.getpid() and _process_runs(holder)):
                raise InvalidRequestError(
                    f"another download (process {holder if holder else '?'}) is writing {target}",
                    code="conflict",
                    hint=f"Wait for it to end, or stop it; a lock left by a process that is gone: {lock}",
                )
            # Left by a download that was stopped: moved aside first, so that two takers cannot both win.
            aside = lock.with_name(f"{mine.name}.stale")
            with contextlib.suppress(FileNotFoundError):
                os.replace(lock, aside)
                aside.unlink()
        raise InvalidRequestError(f"cannot take {lock}: another download keeps taking it", code="conflict")
    finally:
        mine.unlink(missing_ok=True)


def _holder(lock: Path) -> int | None:
    """The process a lock names; 0 for a lock gone or unreadable; None for one just made and not written yet."""
    try:
        text = lock.read_text().strip()
        if not text:
            return None if time.time() - lock.stat().st_mtime < _EMPTY_LOCK_SECONDS else 0
        return int(text)
    except (OSError, ValueError):
        return 0


def _process_runs(pid: int) -> bool:
    """Whether process ``pid`` runs. Windows has no signal 0 (os.kill would send Ctrl-C): it is asked by handle."""
    if pid <= 0:
        return False
    if os.name == "nt":
        return _windows_process_runs(pid)
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # it runs, as another user
    except (OSError, OverflowError):
        return False
    return True


def _windows_process_runs(pid: int) -> bool:
    import ctypes

    kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009 (Windows only: absent from ctypes elsewhere)
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def _raise(status: int, data: bytes, where: str) -> None:
    from ._client._errors import error_from_answer

    raise error_from_answer(status, data, where)
