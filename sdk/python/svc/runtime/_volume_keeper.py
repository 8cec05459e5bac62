"""The volume keeper: the files of one CSI volume, served over HTTP to the svc server.

On Nomad with a CSI plugin a volume's files are reachable only inside an allocation that
mounts it, so svc runs one keeper per volume (``python -m svc.runtime volume-keeper``). The
server keeps authorization, limits and the public API; the keeper does the filesystem work,
with the semantics of ``core/services/volumes/files.ts``: every path is checked to stay in
the root where it leads (through symbolic links), an upload is written to a
``.svc-upload-*`` file beside its target and renamed onto it once complete.

Routes (all but ``GET /health`` need a signed ``Authorization``, below), ``path`` in the query:
``GET /entries``, ``GET /stat``, ``GET /file``, ``PUT /file``, ``DELETE /file``, ``GET /usage``.
Errors are JSON ``{"problem": "<kind>", ...}``.

Requests are signed, not sent with the token itself (a keeper's old address may answer for some other
process once its allocation is gone): ``Authorization: SvcKeeper <ms>.<nonce>.<mac>``, the mac the
HMAC-SHA256 under the token of ``<method>\n<path>?<query>\n<ms>.<nonce>``, hex. A signature more than
five minutes from the keeper's clock, or one already seen, is refused.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import hmac
import json
import math
import os
import secrets
import shutil
import stat
import sys
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timedelta
from typing import IO, Any
from urllib.parse import parse_qs

from ._requests import Receive, Scope
from ._responses import Send

MAX_LIST_ENTRIES = 10_000
"""A page of a listing holds at most this many entries (and by default this many), as the server's."""

SIGNATURE_SKEW_MS = 5 * 60 * 1000
"""How far a request's signed time may be from the keeper's clock."""

UPLOAD_PREFIX = ".svc-upload-"
"""Uploads in progress are files with this prefix beside their target; listings leave them out."""

REPLACED_SUFFIX = "-replaced"
"""A file an upload replaced keeps a hidden name with this suffix until the upload removes it, just after its
answer: no longer the volume's, it is not counted."""

IO_BYTES = 1024 * 1024
"""An upload is written, a download read, in pieces of about this size: memory stays flat."""

_EPOCH = datetime(1970, 1, 1)

_PROC_FDS = os.path.isdir("/proc/self/fd")
"""Whether an opened folder can be reached by its /proc/self/fd link (looked at once)."""


class Problem(Exception):
    """An answer other than success: ``{"problem": kind, **details}`` with ``status``."""

    def __init__(self, status: int, kind: str, **details: Any) -> None:
        super().__init__(kind)
        self.status = status
        self.body: dict[str, Any] = {"problem": kind, **details}


def _js_ms(ns: int) -> float:
    # Node's mtimeMs (sec * 1000 + nsec / 1e6, a float): the same arithmetic gives the same dates and tags.
    seconds, nanos = divmod(ns, 1_000_000_000)
    return seconds * 1000 + nanos / 1e6


def _iso(ns: int) -> str:
    """A time as JavaScript's ``Date.toISOString()`` writes Node's ``stats.mtime`` (rounded to the millisecond)."""
    moment = _EPOCH + timedelta(milliseconds=math.floor(_js_ms(ns) + 0.5))
    return moment.isoformat(timespec="milliseconds") + "Z"


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text, rest = "", abs(number)
    while True:
        rest, digit = divmod(rest, 36)
        text = digits[digit] + text
        if rest == 0:
            return ("-" if number < 0 else "") + text


def _etag(info: os.stat_result) -> str:
    """Changes with the file's inode, size, content (mtime) or inode change (ctime, which no one can set back)."""

    def micros(ns: int) -> str:
        return _base36(math.floor(_js_ms(ns) * 1000 + 0.5))

    return f'"{_base36(info.st_ino)}-{_base36(info.st_size)}-{micros(info.st_mtime_ns)}-{micros(info.st_ctime_ns)}"'


def _entry(at: str, info: os.stat_result) -> dict[str, Any]:
    kind = "dir" if stat.S_ISDIR(info.st_mode) else "link" if stat.S_ISLNK(info.st_mode) else "file"
    return {
        "path": at,
        "type": kind,
        "size": info.st_size if kind == "file" else 0,
        "modifiedAt": _iso(info.st_mtime_ns),
    }


def _js_order(name: str) -> bytes:
    # JavaScript sorts strings by UTF-16 code units, Python by code points: listings come in the server's order.
    return name.encode("utf-16-be", "surrogatepass")


def _parts(query: dict[str, str], field: str = "path") -> list[str]:
    """The path's segments, checked again here: the keeper trusts no one with its root."""
    shown = query.get(field, "")
    parts = shown.split("/") if shown else []
    if any(part in ("", ".", "..") or "\0" in part or "\\" in part or part.startswith(UPLOAD_PREFIX) for part in parts):
        raise Problem(400, "bad_path")
    return parts


def _count(text: str | None, minimum: int = 0) -> int | None:
    """A decimal integer of at least ``minimum`` (no sign, spaces or underscores), or None."""
    if text is None:
        return None
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    number = int(text)
    return number if number >= minimum else None


def _usage(root: str) -> int:
    """Bytes held by the regular files below ``root`` (links not followed, uploads in progress included, files an
    upload replaced and is about to remove left out)."""
    total, folders = 0, [root]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(entry.path)
                        elif entry.is_file(follow_symlinks=False) and not _replaced(entry.name):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:  # gone while counted
                        pass
        except OSError:
            pass
    return total


class _Keeper:
    """The ASGI app: one volume's files under ``root``, for callers with ``token``."""

    def __init__(self, root: str, token: str) -> None:
        self._root = os.path.realpath(root)
        self._token = token.encode()
        self._seen: OrderedDict[str, int] = OrderedDict()
        """Nonces of signatures taken, with when they stop counting (ms): a request sent again is refused."""
        self._routes: dict[tuple[str, str], Callable[[dict[str, str], Receive, Send], Awaitable[None]]] = {
            ("GET", "/entries"): self._get_entries,
            ("GET", "/stat"): self._get_stat,
            ("GET", "/file"): self._get_file,
            ("PUT", "/file"): self._put_file,
            ("DELETE", "/file"): self._delete_file,
            ("GET", "/usage"): self._get_usage,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": f"{message['type']}.complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        if scope["type"] != "http":
            await send({"type": "websocket.close"})
            return
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._handle(scope, receive, tracked)
        except Exception as error:
            if started:  # too late for an answer: uvicorn closes the connection
                raise
            problem = _problem_of(error)
            await _send_json(send, problem.status, problem.body)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, route = scope["method"], scope["path"]
        if (method, route) == ("GET", "/health"):
            await _send_json(send, 200, {"ok": True})
            return
        given = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        signed = f"{method}\n{route}?{scope.get('query_string', b'').decode('latin-1')}"
        if not self._signed(signed, given.decode("latin-1")):
            raise Problem(401, "unauthorized")
        handler = self._routes.get((method, route))
        if handler is None:
            raise Problem(404, "no_route")
        raw = scope.get("query_string", b"").decode("latin-1")
        # surrogateescape: a name that is not UTF-8 still names its bytes on the disk.
        fields = parse_qs(raw, keep_blank_values=True, errors="surrogateescape")
        query = {name: values[0] for name, values in fields.items()}
        await handler(query, receive, send)

    def _signed(self, request: str, authorization: str) -> bool:
        """Whether ``authorization`` signs ``request`` with the token, now, for the first time."""
        scheme, _, signature = authorization.partition(" ")
        at, _, rest = signature.partition(".")
        nonce, _, mac = rest.partition(".")
        signed_at = _count(at)
        if scheme != "SvcKeeper" or signed_at is None or at.startswith("-") or not nonce or not mac:
            return False
        now = int(time.time() * 1000)
        if abs(now - signed_at) > SIGNATURE_SKEW_MS:
            return False
        expected = hmac.new(self._token, f"{request}\n{at}.{nonce}".encode("latin-1"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), mac.encode("latin-1")) or nonce in self._seen:
            return False
        # Kept in the order they came, so their expiry too: only the oldest are ever due.
        while self._seen and next(iter(self._seen.values())) < now:
            self._seen.popitem(last=False)
        self._seen[nonce] = now + 2 * SIGNATURE_SKEW_MS
        return True

    def _inside(self, parts: list[str]) -> tuple[str, bool]:
        """The real path of ``parts`` and whether it exists; its deepest existing ancestor joined with the rest
        when not. A path that leads outside the root (through a link) is refused like ``..``."""
        known = self._root
        for index, part in enumerate(parts):
            step = os.path.join(known, part)
            if not os.path.lexists(step):
                return os.path.join(known, *parts[index:]), False
            known = os.path.realpath(step)
            if not self._within(known):
                raise Problem(400, "outside")
        return known, True

    # A container that mounts the volume may swap a folder of a checked path for a link out of it: what
    # is opened is checked again where the kernel says it is, and files are reached from their opened
    # folder (dir_fd, or its /proc/self/fd link), never through the path once more.

    def _within(self, real: str) -> bool:
        return real == self._root or real.startswith(self._root + os.sep)

    def _held(self, fd: int) -> int:
        """``fd``, once what it opened is inside the root; closed and refused (outside) when not."""
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # no /proc: the path check stands alone
            return fd
        if self._within(where):
            return fd
        os.close(fd)
        raise Problem(400, "outside")

    def _open_folder(self, real: str) -> int:
        return self._held(os.open(real, os.O_RDONLY | os.O_DIRECTORY))

    # The filesystem work runs in threads (asyncio.to_thread): a slow network file system
    # never stalls the other requests, nor the transfers in progress.

    async def _get_entries(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        parts, after = _parts(query), _parts(query, "after") if "after" in query else None
        limit = _count(query.get("limit", str(MAX_LIST_ENTRIES)), 1)
        if limit is None or limit > MAX_LIST_ENTRIES or (after is not None and after[: len(parts)] != parts):
            raise Problem(400, "bad_page")
        listing = await asyncio.to_thread(self._entries, parts, query.get("recursive") == "1", after, limit)
        await _send_json(send, 200, listing)

    def _entries(self, parts: list[str], recursive: bool, after: list[str] | None, limit: int) -> dict[str, Any]:
        """A page of the listing: the entries after ``after`` in its order (its names from the root), at most
        ``limit``, and ``next``: the last one's path when more come, else None."""
        shown = "/".join(parts)
        real, found = self._inside(parts)
        if not found:
            raise Problem(404, "not_found")
        info = os.stat(real)
        if not stat.S_ISDIR(info.st_mode):
            return {"entries": [_entry(shown, info)] if after is None else [], "next": None}

        def children(folder: int, prefix: str, cursor: list[str]) -> Iterator[tuple[int, str, str, list[str] | None]]:
            """A folder's entries by name, from the cursor's first name on; with each, what of the cursor is left
            below it (None: the entry itself comes on this page)."""
            names = sorted((name for name in os.listdir(folder) if not name.startswith(UPLOAD_PREFIX)), key=_js_order)
            first = _js_order(cursor[0]) if cursor else None
            for name in names:
                if first is not None and _js_order(name) < first:
                    continue
                seen = first is not None and name == cursor[0]
                yield folder, name, f"{prefix}/{name}" if prefix else name, cursor[1:] if seen else None

        # Depth first, each folder's children by name; a stack of iterators, not recursion: folders nest deeper
        # than Python's recursion limit. Each folder is listed from its opened descriptor and entered without
        # following a link, so what is listed stays inside the root however its folders are swapped meanwhile.
        entries: list[dict[str, Any]] = []
        top = self._open_folder(real)
        # One descriptor per folder on the way down, closed once its children are all listed.
        stack = [(top, children(top, shown, (after or [])[len(parts) :]))]
        try:
            while stack:
                item = next(stack[-1][1], None)
                if item is None:
                    os.close(stack.pop()[0])
                    continue
                folder, name, at, below = item
                details = os.lstat(name, dir_fd=folder)
                if below is None:
                    if len(entries) == limit:
                        return {"entries": entries, "next": entries[-1]["path"]}
                    entries.append(_entry(at, details))
                if recursive and stat.S_ISDIR(details.st_mode):
                    child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                    stack.append((child, children(child, at, below or [])))
        finally:
            for fd, _ in stack:
                os.close(fd)
        return {"entries": entries, "next": None}

    async def _get_stat(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        fd, info = await asyncio.to_thread(self._open_file, _parts(query))
        os.close(fd)
        await _send_json(send, 200, {"size": info.st_size, "etag": _etag(info)})

    def _open_file(self, parts: list[str]) -> tuple[int, os.stat_result]:
        """A regular file, opened for reading, and what fstat says of it; not_found, or is_folder."""
        real, found = self._inside(parts)
        if not found:
            raise Problem(404, "not_found")
        # O_NONBLOCK: a FIFO a container made opens at once instead of waiting for a writer (no effect on files).
        fd = self._held(os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK))
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise Problem(400, "is_folder")
        return fd, info

    async def _get_file(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        parts = _parts(query)
        fd, info = await asyncio.to_thread(self._open_file, parts)
        try:
            etag = _etag(info)
            start, end = _count(query.get("start")), _count(query.get("end"), minimum=-1)
            if start is None or end is None or start > end + 1:
                raise Problem(400, "bad_range")
            # The file the caller's etag named, grown since or not (a container appending to a log): the
            # bytes asked for are still those. Another file under the name, or one cut shorter, is not.
            if "etag" in query and (
                query["etag"].strip('"').split("-")[0] != _base36(info.st_ino) or end >= info.st_size
            ):
                raise Problem(412, "changed")
            if end >= info.st_size:
                raise Problem(400, "bad_range")
            headers = [
                (b"content-type", b"application/octet-stream"),
                (b"content-length", str(end - start + 1).encode()),
                (b"etag", etag.encode()),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await _stream(fd, start, end, receive, send)
        finally:
            os.close(fd)

    async def _put_file(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        parts = _parts(query)
        if not parts:
            raise Problem(400, "root")
        room = _count(query.get("room"))
        if room is None:
            raise Problem(400, "bad_room")
        file, folder, temporary, target = await asyncio.to_thread(self._open_upload, parts)
        kept = False
        try:
            written = 0
            batch: list[bytes] = []
            batch_bytes = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # the client went away: nothing is kept, no one to answer
                chunk: bytes = message.get("body", b"")
                more: bool = message.get("more_body", False)
                written += len(chunk)
                if written > room:
                    raise Problem(413, "full", written=written)
                batch.append(chunk)
                batch_bytes += len(chunk)
                # The socket's small reads gathered into one write of about IO_BYTES, done off the loop.
                if batch_bytes >= IO_BYTES or not more:
                    await asyncio.to_thread(file.write, b"".join(batch))
                    batch, batch_bytes = [], 0
                if not more:
                    break
            info, replaced, replaced_bytes = await asyncio.to_thread(_commit, file, folder, temporary, target)
            kept = True
            try:
                await _send_json(send, 200, {"entry": _entry("/".join(parts), info), "replacedBytes": replaced_bytes})
            finally:  # after the answer: freeing a large file is not the upload's to wait for
                if replaced is not None:
                    await asyncio.to_thread(_unlink_quietly, replaced, folder)
        finally:
            if not kept:
                await asyncio.to_thread(_discard, file, folder, temporary)
            os.close(folder)

    def _open_upload(self, parts: list[str]) -> tuple[IO[bytes], int, str, str]:
        """The temporary file of an upload to ``parts`` (folders made as needed), its folder's descriptor, and
        the temporary file's and the target's names in it."""
        parent, found = self._inside(parts[:-1])
        if found and not os.path.isdir(parent):
            raise Problem(409, "not_a_folder")
        os.makedirs(parent, exist_ok=True)
        folder = self._open_folder(parent)
        try:
            try:
                if stat.S_ISDIR(os.lstat(parts[-1], dir_fd=folder).st_mode):
                    raise Problem(409, "is_folder")
            except FileNotFoundError:
                pass
            temporary = UPLOAD_PREFIX + secrets.token_hex(8)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            return os.fdopen(os.open(temporary, flags, 0o644, dir_fd=folder), "wb"), folder, temporary, parts[-1]
        except BaseException:
            os.close(folder)
            raise

    async def _delete_file(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        await asyncio.to_thread(self._remove, _parts(query), query.get("recursive") == "1")
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def _remove(self, parts: list[str], recursive: bool) -> None:
        if not parts:
            raise Problem(400, "root")
        parent, found = self._inside(parts[:-1])
        if not found:
            raise Problem(404, "not_found")
        folder = self._open_folder(parent)
        try:
            name = parts[-1]
            try:
                info = os.lstat(name, dir_fd=folder)
            except FileNotFoundError:
                raise Problem(404, "not_found") from None
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(name, dir_fd=folder)  # a link is removed itself, never what it points to
            elif not recursive:
                raise Problem(400, "needs_recursive")
            else:
                _remove_tree(folder, parent, name)
        finally:
            os.close(folder)

    async def _get_usage(self, query: dict[str, str], receive: Receive, send: Send) -> None:
        await _send_json(send, 200, {"bytes": await asyncio.to_thread(_usage, self._root)})


def _remove_tree(folder: int, parent: str, name: str) -> None:
    """The folder ``name`` and all below it, reached through the opened ``folder`` (the parent at ``parent``)."""
    # rmtree itself works from descriptors and follows no link; dir_fd came in Python 3.11, before it
    # the opened folder is reached through its /proc/self/fd link.
    if sys.version_info >= (3, 11):
        shutil.rmtree(name, dir_fd=folder)
    elif _PROC_FDS:
        shutil.rmtree(f"/proc/self/fd/{folder}/{name}")
    else:
        shutil.rmtree(os.path.join(parent, name))


def _commit(file: IO[bytes], folder: int, temporary: str, target: str) -> tuple[os.stat_result, str | None, int]:
    """Syncs the upload and renames it onto ``target``; with its entry, the hidden name a file it replaced keeps
    until the caller removes it (a rename onto a large file waits for the kernel to free it: 0.3 s per 2 GiB), and
    the bytes of the file it replaced (0 for none: the server counts the volume's size on from them)."""
    file.flush()
    os.fsync(file.fileno())  # durable before it takes the name: a crash never leaves a short file there
    file.close()
    hidden = UPLOAD_PREFIX + secrets.token_hex(8) + REPLACED_SUFFIX
    replaced: str | None = hidden
    replaced_bytes = 0
    try:
        there = os.lstat(target, dir_fd=folder)
        replaced_bytes = there.st_size if stat.S_ISREG(there.st_mode) else 0
        if not stat.S_ISREG(there.st_mode):
            raise FileNotFoundError(target)  # only a file is kept aside
        os.link(target, hidden, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except OSError:  # nothing there to replace, or no hard links on this file system: the rename frees it
        replaced = None
    try:
        os.rename(temporary, target, src_dir_fd=folder, dst_dir_fd=folder)
        return os.lstat(target, dir_fd=folder), replaced, replaced_bytes
    except BaseException:
        if replaced is not None:
            _unlink_quietly(replaced, folder)
        raise


def _replaced(name: str) -> bool:
    return name.startswith(UPLOAD_PREFIX) and name.endswith(REPLACED_SUFFIX)


def _unlink_quietly(name: str, folder: int) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except OSError:  # gone already
        pass


def _discard(file: IO[bytes], folder: int, temporary: str) -> None:
    for undo in (file.close, lambda: os.unlink(temporary, dir_fd=folder)):
        try:
            undo()
        except OSError:  # a full disk fails the close's flush too; the file is closed all the same
            pass


async def _stream(fd: int, start: int, end: int, receive: Receive, send: Send) -> None:
    """Sends bytes ``start`` to ``end`` of ``fd``, read off the loop; stops when the client goes."""
    gone = asyncio.Event()

    async def watch() -> None:
        # uvicorn's send does nothing once the client left: its http.disconnect is the sign to stop reading.
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.create_task(watch())
    try:
        position = start
        while not gone.is_set():
            chunk = b""
            if position <= end:
                chunk = await asyncio.to_thread(os.pread, fd, min(IO_BYTES, end + 1 - position), position)
                if not chunk:
                    raise OSError(f"the file shrank while it was read (at byte {position}, of {end + 1})")
            position += len(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": position <= end})
            if position > end:
                return
    finally:
        watcher.cancel()


def _problem_of(error: Exception) -> Problem:
    if isinstance(error, Problem):
        return error
    if isinstance(error, FileNotFoundError):  # gone between two steps, or a dangling link
        return Problem(404, "not_found")
    if isinstance(error, NotADirectoryError):  # a file where a folder of the path should be
        return Problem(409, "not_a_folder")
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return Problem(507, "disk_full")
    return Problem(500, "internal", message=str(error))


async def _send_json(send: Send, status: int, value: dict[str, Any]) -> None:
    body = json.dumps(value).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def keeper_app(root: str, token: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The keeper's ASGI app for the volume mounted at ``root`` (a folder), answering callers with ``token``."""
    return _Keeper(root, token)


def serve_keeper(root: str, host: str, port: int, token: str) -> int:
    """Serves the keeper on ``host:port`` until SIGTERM or SIGINT: 0 then, 1 when it could not listen."""
    from . import _serve  # imports uvicorn: only here, where a keeper runs

    return _serve.serve(
        keeper_app(root, token),
        (host, port),
        banner=f"svc volume keeper: serving {root} on {host}:{port}",
        lifeline_fd=None,
        gone_message="",
    )
