"""``python -m svc.runtime volume-keeper``: the files of one volume over HTTP, as a CSI volume's allocation serves them.

One real keeper (a subprocess, on a free localhost port) serves a temporary root for the whole module;
each test works in its own folder of it. The serving tests need a Python with the runtime's requirements
(SVC_TEST_RUNTIME_PYTHON, which ``npm run test:py`` sets); the argument errors run anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers import SDK_ROOT
from runtime_helpers import RUNTIME_PYTHON, needs_runtime

TOKEN = "s3cret-token"


def signed(
    method: str, target: str, token: str = TOKEN, at: int | None = None, nonce: str | None = None
) -> dict[str, str]:
    """The Authorization svc's keeper client sends: the request signed with the token, never the token itself."""
    path, _, query = target.partition("?")
    at = int(time.time() * 1000) if at is None else at
    nonce = secrets.token_hex(8) if nonce is None else nonce
    mac = hmac.new(token.encode(), f"{method}\n{path}?{query}\n{at}.{nonce}".encode(), hashlib.sha256).hexdigest()
    return {"Authorization": f"SvcKeeper {at}.{nonce}.{mac}"}


MIB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Keeper:
    """A running keeper: its root, port and stderr; ``call`` answers ``(status, headers, body)``."""

    def __init__(self, root: Path, token_file: Path) -> None:
        self.root = root
        self.port = free_port()
        self.process = subprocess.Popen(
            [RUNTIME_PYTHON or sys.executable, "-m", "svc.runtime", "volume-keeper", "--root", str(root)]
            + ["--host", "127.0.0.1", "--port", str(self.port), "--token-file", str(token_file)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(SDK_ROOT)},
            text=True,
        )
        self.lines: list[str] = []
        listening = threading.Event()

        def read() -> None:
            for line in self.process.stderr:
                self.lines.append(line)
                if line.startswith("svc volume keeper: serving"):
                    listening.set()
            listening.set()

        threading.Thread(target=read, daemon=True).start()
        if not listening.wait(20) or self.process.poll() is not None:
            self.process.kill()
            raise AssertionError(f"the keeper never listened:\n{''.join(self.lines)}")

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def call(
        self,
        method: str,
        route: str,
        headers: dict[str, str] | None = None,
        body: Any = None,
        chunked: bool = False,
        **query: Any,
    ) -> tuple[int, dict[str, str], bytes]:
        connection = self.connect()
        try:
            target = f"{route}?{urlencode(query)}" if query else route
            sent = signed(method, target) if headers is None else headers
            connection.request(method, target, body=body, headers=sent, encode_chunked=chunked)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def json(self, method: str, route: str, **query: Any) -> tuple[int, Any]:
        status, headers, body = self.call(method, route, **query)
        assert headers["content-type"] == "application/json", (status, body)
        return status, json.loads(body)


@pytest.fixture(scope="module")
def keeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keeper]:
    if RUNTIME_PYTHON is None:
        pytest.skip("uvicorn is not importable; set SVC_TEST_RUNTIME_PYTHON (npm run test:py does)")
    base = tmp_path_factory.mktemp("keeper")
    (base / "root").mkdir()
    (base / "outside").mkdir()
    (base / "outside" / "secret.txt").write_text("not yours")
    (base / "root" / "out").symlink_to(base / "outside")  # a link that leads out of the root
    token_file = base / "token"
    token_file.write_text(f"  {TOKEN}\n")  # whitespace around the token is not part of it
    running = Keeper(base / "root", token_file)
    yield running
    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(10) == 0, "".join(running.lines)  # stops cleanly on SIGTERM


def uploads_in(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(".svc-upload-")]


def wait_for(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# -- access --------------------------------------------------------------------


@needs_runtime
def test_health_needs_no_token_and_everything_else_does(keeper: Keeper):
    status, headers, body = keeper.call("GET", "/health", headers={})
    assert (status, json.loads(body)) == (200, {"ok": True})
    minutes_ago = int(time.time() * 1000) - 6 * 60 * 1000
    refused = [
        {},
        {"Authorization": f"Bearer {TOKEN}"},  # the token itself is never what a request carries
        {"Authorization": TOKEN},
        signed("GET", "/usage", token="wrong"),
        signed("GET", "/usage?path=other"),  # signed for another request
        signed("POST", "/usage"),
        signed("GET", "/usage", at=minutes_ago),  # too old
        {"Authorization": signed("GET", "/usage")["Authorization"].replace("SvcKeeper", "Bearer")},
        {"Authorization": "SvcKeeper \u00b2.nonce.mac"},  # a digit to str.isdigit, not to int()
        {"Authorization": "SvcKeeper -5.nonce.mac"},
    ]
    for headers in refused:
        status, answer_headers, body = keeper.call("GET", "/usage", headers=headers)
        assert (status, json.loads(body)) == (401, {"problem": "unauthorized"}), headers
        assert answer_headers["content-type"] == "application/json"
    once = signed("GET", "/usage", nonce="same-nonce")
    assert keeper.call("GET", "/usage", headers=once)[0] == 200
    assert keeper.call("GET", "/usage", headers=once)[0] == 401, "a request sent again is refused"
    assert keeper.json("GET", "/nowhere") == (404, {"problem": "no_route"})
    assert keeper.json("POST", "/file", path="x") == (404, {"problem": "no_route"})


@needs_runtime
def test_paths_are_checked_again(keeper: Keeper):
    for bad in ("../x", "a/../b", "a//b", "/a", "a/", ".", "a\\b", "a\0b"):
        assert keeper.json("GET", "/entries", path=bad) == (400, {"problem": "bad_path"}), bad
    assert keeper.json("PUT", "/file", path="../escape.txt", room=10) == (400, {"problem": "bad_path"})
    assert not (keeper.root.parent / "escape.txt").exists()


@needs_runtime
def test_a_link_out_of_the_root_is_refused_everywhere(keeper: Keeper):
    outside = {"problem": "outside"}
    assert keeper.json("GET", "/entries", path="out") == (400, outside)
    assert keeper.json("GET", "/entries", path="out/secret.txt") == (400, outside)
    assert keeper.json("GET", "/stat", path="out/secret.txt") == (400, outside)
    assert keeper.json("GET", "/file", path="out/secret.txt", start=0, end=3) == (400, outside)
    status, _, body = keeper.call("PUT", "/file", body=b"mine", path="out/new.txt", room=100)
    assert (status, json.loads(body)) == (400, outside)
    assert keeper.json("DELETE", "/file", path="out/secret.txt") == (400, outside)
    assert sorted(os.listdir(keeper.root.parent / "outside")) == ["secret.txt"]  # nothing written, nothing removed


# -- listings -------------------------------------------------------------------


@needs_runtime
def test_entries_of_a_folder_a_file_and_recursively(keeper: Keeper):
    folder = keeper.root / "list"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "inner.txt").write_bytes(b"12345")
    (folder / "b.txt").write_bytes(b"abc")
    (folder / "c-link").symlink_to("b.txt")
    (folder / ".svc-upload-0123456789abcdef").write_bytes(b"half")  # an upload in progress: not listed
    os.utime(folder / "b.txt", ns=(1_700_000_000_123_500_000, 1_700_000_000_123_500_000))

    status, answer = keeper.json("GET", "/entries", path="list")
    assert status == 200
    entries = answer["entries"]
    assert [(e["path"], e["type"], e["size"]) for e in entries] == [
        ("list/a", "dir", 0),
        ("list/b.txt", "file", 3),
        ("list/c-link", "link", 0),  # a link is typed as such, never followed
    ]
    # As JavaScript's Date.toISOString() writes Node's mtime: UTC, milliseconds (rounded), Z.
    assert entries[1]["modifiedAt"] == "2023-11-14T22:13:20.124Z"

    status, answer = keeper.json("GET", "/entries", path="list", recursive=1)
    assert [e["path"] for e in answer["entries"]] == ["list/a", "list/a/inner.txt", "list/b.txt", "list/c-link"]

    assert keeper.json("GET", "/entries", path="list/b.txt") == (
        200,
        {
            "entries": [{"path": "list/b.txt", "type": "file", "size": 3, "modifiedAt": "2023-11-14T22:13:20.124Z"}],
            "next": None,
        },
    )
    status, answer = keeper.json("GET", "/entries")  # the root: paths without a prefix
    assert status == 200 and {"list", "out"} <= {e["path"] for e in answer["entries"]}
    assert keeper.json("GET", "/entries", path="list/nothing") == (404, {"problem": "not_found"})
    assert keeper.json("GET", "/entries", path="list/b.txt/x") == (404, {"problem": "not_found"})


@needs_runtime
def test_a_listing_comes_in_pages(keeper: Keeper):
    folder = keeper.root / "crowd"
    folder.mkdir()
    for index in range(10_001):
        (folder / f"f{index:05}").touch()
    status, first = keeper.json("GET", "/entries", path="crowd")  # at most 10 000 without a limit
    assert status == 200 and len(first["entries"]) == 10_000 and first["next"] == "crowd/f09999"
    status, rest = keeper.json("GET", "/entries", path="crowd", after=first["next"], limit=10_000)
    assert status == 200 and [e["path"] for e in rest["entries"]] == ["crowd/f10000"] and rest["next"] is None
    status, two = keeper.json("GET", "/entries", path="crowd", after="crowd/f00003", limit=2)
    assert [e["path"] for e in two["entries"]] == ["crowd/f00004", "crowd/f00005"] and two["next"] == "crowd/f00005"
    for bad in ({"limit": 0}, {"limit": 10_001}, {"limit": "x"}, {"after": "elsewhere/f1"}, {"after": "crowd/../x"}):
        assert keeper.json("GET", "/entries", path="crowd", **bad)[0] == 400, bad
    assert keeper.call("DELETE", "/file", path="crowd", recursive=1)[0] == 204


# -- reading --------------------------------------------------------------------


@needs_runtime
def test_stat_then_a_range_of_the_file_checked_by_its_etag(keeper: Keeper):
    (keeper.root / "read").mkdir()
    path = keeper.root / "read" / "data.bin"
    path.write_bytes(bytes(range(256)) * 4)
    status, info = keeper.json("GET", "/stat", path="read/data.bin")
    assert status == 200 and info["size"] == 1024
    etag = info["etag"]
    assert etag.startswith('"') and etag.endswith('"') and etag.count("-") == 3

    status, headers, body = keeper.call("GET", "/file", path="read/data.bin", start=10, end=19, etag=etag)
    assert (status, body) == (200, bytes(range(10, 20)))
    assert headers["content-length"] == "10"
    assert headers["content-type"] == "application/octet-stream"
    assert headers["etag"] == etag
    status, _, body = keeper.call("GET", "/file", path="read/data.bin", start=0, end=1023, etag=etag)
    assert (status, body) == (200, path.read_bytes())
    status, headers, body = keeper.call("GET", "/file", path="read/data.bin", start=1024, end=1023, etag=etag)
    assert (status, headers["content-length"], body) == (200, "0", b"")

    for start, end in ((5, 3), ("", 3), (0, ""), ("x", 3), (-1, 3), (0, -2)):
        answer = keeper.json("GET", "/file", path="read/data.bin", start=start, end=end, etag=etag)
        assert answer == (400, {"problem": "bad_range"}), (start, end)
    assert keeper.json("GET", "/file", path="read/data.bin", end=3, etag=etag) == (400, {"problem": "bad_range"})
    assert keeper.json("GET", "/file", path="read/data.bin", start=0, end=1024) == (400, {"problem": "bad_range"})
    # Past the end of the file the etag named: it is shorter than when the caller looked.
    assert keeper.json("GET", "/file", path="read/data.bin", start=0, end=1024, etag=etag) == (
        412,
        {"problem": "changed"},
    )

    # Appended to since (a container's log): the bytes asked for are still the ones the etag named.
    with path.open("ab") as file:
        file.write(b"more")
    status, _, body = keeper.call("GET", "/file", path="read/data.bin", start=1020, end=1023, etag=etag)
    assert (status, body) == (200, bytes(range(252, 256)))
    # Another file under the name (an upload's rename), or the same one cut shorter: changed.
    replacement = keeper.root / "read" / "replacement.bin"
    replacement.write_bytes(bytes(range(256)) * 4)
    os.replace(replacement, path)
    assert keeper.json("GET", "/file", path="read/data.bin", start=0, end=3, etag=etag) == (412, {"problem": "changed"})
    etag = keeper.json("GET", "/stat", path="read/data.bin")[1]["etag"]
    os.truncate(path, 100)
    assert keeper.json("GET", "/file", path="read/data.bin", start=0, end=200, etag=etag) == (
        412,
        {"problem": "changed"},
    )
    assert keeper.json("GET", "/stat", path="read/data.bin")[1]["etag"] != etag

    assert keeper.json("GET", "/stat", path="read") == (400, {"problem": "is_folder"})
    assert keeper.json("GET", "/file", path="read", start=0, end=0) == (400, {"problem": "is_folder"})
    assert keeper.json("GET", "/stat", path="read/none") == (404, {"problem": "not_found"})
    assert keeper.json("GET", "/file", path="read/none", start=0, end=0) == (404, {"problem": "not_found"})


@needs_runtime
def test_a_download_the_client_leaves_closes_the_file(keeper: Keeper):
    fds = Path(f"/proc/{keeper.process.pid}/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc")
    (keeper.root / "big").mkdir()
    path = keeper.root / "big" / "sparse.bin"
    with open(path, "wb") as file:
        file.truncate(64 * 1024 * MIB)  # sparse; more than the keeper could read while the test waits
    size = 64 * 1024 * MIB

    def open_in_keeper() -> bool:
        found = False
        for fd in os.listdir(fds):
            try:
                found = found or os.readlink(fds / fd) == str(path)
            except OSError:
                pass
        return found

    connection = keeper.connect()
    target = f"/file?path=big/sparse.bin&start=0&end={size - 1}"
    connection.request("GET", target, headers=signed("GET", target))
    response = connection.getresponse()
    assert response.status == 200 and len(response.read(MIB)) == MIB
    assert open_in_keeper()
    connection.close()
    assert wait_for(lambda: not open_in_keeper()), "the keeper kept the file open after the client left"


# -- writing --------------------------------------------------------------------


@needs_runtime
def test_a_streamed_upload_lands_whole(keeper: Keeper):
    data = os.urandom(3 * MIB + 12345)

    def pieces() -> Iterator[bytes]:
        for at in range(0, len(data), 100_000):
            yield data[at : at + 100_000]

    status, _, body = keeper.call("PUT", "/file", body=pieces(), chunked=True, path="up/nested/data.bin", room=10 * MIB)
    answer = json.loads(body)
    assert status == 200, answer
    entry = answer["entry"]
    assert (entry["path"], entry["type"], entry["size"], answer["replacedBytes"]) == (
        "up/nested/data.bin",
        "file",
        len(data),
        0,
    )
    target = keeper.root / "up" / "nested" / "data.bin"
    assert target.read_bytes() == data
    assert target.stat().st_mode & 0o777 == 0o644 & ~current_umask()
    assert uploads_in(target.parent) == []
    # Replaced whole, and readable back in one go; the file replaced is removed just after the answer.
    status, _, body = keeper.call("PUT", "/file", body=b"short", path="up/nested/data.bin", room=10)
    assert status == 200 and target.read_bytes() == b"short"
    assert json.loads(body)["replacedBytes"] == len(data), "the bytes of the file it replaced"
    deadline = time.monotonic() + 5
    while uploads_in(target.parent) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert uploads_in(target.parent) == []
    status, info = keeper.json("GET", "/stat", path="up/nested/data.bin")
    status, _, body = keeper.call("GET", "/file", path="up/nested/data.bin", start=0, end=4, etag=info["etag"])
    assert body == b"short"


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@needs_runtime
def test_uploads_that_cannot_land(keeper: Keeper):
    (keeper.root / "put" / "folder").mkdir(parents=True)
    (keeper.root / "put" / "file.txt").write_text("x")

    def put(path: str, body: bytes = b"data", room: int = 100) -> tuple[int, Any]:
        status, _, answer = keeper.call("PUT", "/file", body=body, path=path, room=room)
        return status, json.loads(answer)

    assert put("") == (400, {"problem": "root"})
    assert put("put/folder") == (409, {"problem": "is_folder"})
    assert put("put/file.txt/x") == (409, {"problem": "not_a_folder"})
    assert put("put/file.txt/x/y") == (409, {"problem": "not_a_folder"})
    assert put("put/file.txt", room="many") == (400, {"problem": "bad_room"})
    assert (keeper.root / "put" / "file.txt").read_text() == "x"


@needs_runtime
def test_an_upload_past_its_room_leaves_nothing(keeper: Keeper):
    (keeper.root / "room").mkdir()

    def pieces() -> Iterator[bytes]:
        for _ in range(8):
            yield b"x" * 500

    status, _, body = keeper.call("PUT", "/file", body=pieces(), chunked=True, path="room/big.bin", room=1000)
    answer = json.loads(body)
    assert status == 413 and answer["problem"] == "full" and 1000 < answer["written"] <= 4000, answer
    assert os.listdir(keeper.root / "room") == []  # no target, no temporary file
    # The connection was kept in order: the next upload on the keeper works.
    status, _, body = keeper.call("PUT", "/file", body=b"x" * 1000, path="room/fits.bin", room=1000)
    assert status == 200 and json.loads(body)["entry"]["size"] == 1000


@needs_runtime
def test_an_upload_the_client_abandons_leaves_nothing(keeper: Keeper):
    folder = keeper.root / "gone"
    folder.mkdir()
    with socket.create_connection(("127.0.0.1", keeper.port), timeout=10) as client:
        client.sendall(
            b"PUT /file?path=gone/part.bin&room=100000000 HTTP/1.1\r\nHost: keeper\r\n"
            + f"Authorization: {signed('PUT', '/file?path=gone/part.bin&room=100000000')['Authorization']}\r\n".encode()
            + b"Transfer-Encoding: chunked\r\n\r\n"
        )
        client.sendall(b"%x\r\n" % 70_000 + b"y" * 70_000 + b"\r\n")
        assert wait_for(lambda: uploads_in(folder) != []), "the upload never started"
    assert wait_for(lambda: uploads_in(folder) == []), f"a temporary file survived: {uploads_in(folder)}"
    assert os.listdir(folder) == []


# -- removing and usage ---------------------------------------------------------


@needs_runtime
def test_removing_files_folders_and_links(keeper: Keeper):
    folder = keeper.root / "rm"
    (folder / "tree" / "deep").mkdir(parents=True)
    (folder / "tree" / "deep" / "f.txt").write_text("f")
    (folder / "one.txt").write_text("1")
    (folder / "keep").mkdir()
    (folder / "keep" / "kept.txt").write_text("kept")
    (folder / "link-to-keep").symlink_to("keep")
    (folder / "link-out").symlink_to(keeper.root.parent / "outside")

    assert keeper.call("DELETE", "/file", path="rm/one.txt")[0] == 204
    assert not (folder / "one.txt").exists()
    assert keeper.json("DELETE", "/file", path="rm/one.txt") == (404, {"problem": "not_found"})
    assert keeper.json("DELETE", "/file", path="rm/none/x") == (404, {"problem": "not_found"})
    assert keeper.json("DELETE", "/file", path="rm/tree") == (400, {"problem": "needs_recursive"})
    assert keeper.json("DELETE", "/file", path="rm/tree", recursive=0) == (400, {"problem": "needs_recursive"})
    assert keeper.call("DELETE", "/file", path="rm/tree", recursive=1)[0] == 204
    assert not (folder / "tree").exists()
    assert keeper.json("DELETE", "/file") == (400, {"problem": "root"})
    assert keeper.json("DELETE", "/file", path="", recursive=1) == (400, {"problem": "root"})

    # A link goes itself, whatever it points to (inside or out), never its target.
    assert keeper.call("DELETE", "/file", path="rm/link-to-keep")[0] == 204
    assert keeper.call("DELETE", "/file", path="rm/link-out", recursive=1)[0] == 204
    assert sorted(os.listdir(folder)) == ["keep"]
    assert (folder / "keep" / "kept.txt").read_text() == "kept"
    assert (keeper.root.parent / "outside" / "secret.txt").exists()


@needs_runtime
def test_usage_counts_the_regular_files_below_the_root(keeper: Keeper):
    (keeper.root / "usage").mkdir()
    (keeper.root / "usage" / "a.bin").write_bytes(b"a" * 1234)
    (keeper.root / "usage" / ".svc-upload-feedfeedfeedfeed").write_bytes(b"b" * 10)  # counted: it takes room
    replaced = keeper.root / "usage" / ".svc-upload-deaddeaddeaddead-replaced"
    replaced.write_bytes(b"c" * 99)  # not counted: no longer the volume's, removed in a moment
    (keeper.root / "usage" / "link").symlink_to("a.bin")  # not followed
    expected = 0
    for folder, _, names in os.walk(keeper.root):
        for name in names:
            info = os.lstat(os.path.join(folder, name))
            counted = not os.path.islink(os.path.join(folder, name)) and not name.endswith("-replaced")
            expected += info.st_size if counted else 0
    assert keeper.json("GET", "/usage") == (200, {"bytes": expected})
    assert expected >= 1244


# -- arguments ------------------------------------------------------------------


def start_with(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUNTIME_PYTHON or sys.executable, "-m", "svc.runtime", "volume-keeper", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT)},
    )


def test_wrong_arguments_exit_2_and_say_what_to_fix(tmp_path: Path):
    token = tmp_path / "token"
    token.write_text(TOKEN)
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    cases = [
        (["--root", str(tmp_path / "none"), "--port", "1", "--token-file", str(token)], "--root"),
        (["--root", str(token), "--port", "1", "--token-file", str(token)], "is not a folder"),
        (["--root", str(tmp_path), "--port", "1", "--token-file", str(tmp_path / "none")], "--token-file"),
        (["--root", str(tmp_path), "--port", "1", "--token-file", str(empty)], "is empty"),
        (["--root", str(tmp_path), "--port", "70000", "--token-file", str(token)], "--port"),
        (["--root", str(tmp_path), "--token-file", str(token)], "--port"),
    ]
    for args, message in cases:
        result = start_with(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)


# -- a folder swapped for a link while the keeper works ---------------------------


@needs_runtime
def test_a_folder_swapped_for_a_link_out_of_the_root_is_never_followed(keeper: Keeper, tmp_path: Path):
    """A container swaps ``race/a`` between a real folder and a link out of the root between the keeper's
    check of a path and its use: no read or removal may reach the folder outside."""
    outside = tmp_path / "elsewhere"
    (outside / "victim").mkdir(parents=True)
    (outside / "secret.txt").write_text("OUTSIDE")
    a = keeper.root / "race" / "a"
    a.mkdir(parents=True)
    (a / "secret.txt").write_text("inside")
    stop = threading.Event()

    def swap() -> None:
        real = a.with_name("a.real")
        while not stop.is_set():
            try:
                a.rename(real)
                a.symlink_to(outside)
                time.sleep(0.0002)  # each state held a moment, so that a check and a use can fall on either side
                a.unlink()
                real.rename(a)
                time.sleep(0.0002)
            except OSError:  # in the keeper's way this turn
                if not a.exists() and real.exists():
                    real.rename(a)
        if a.is_symlink():
            a.unlink()
        if real.exists():
            real.rename(a)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for _ in range(400):
            _, _, body = keeper.call("GET", "/file", path="race/a/secret.txt", start=0, end=5)
            assert body != b"OUTSI", "a read followed the link out of the root"
            keeper.call("DELETE", "/file", path="race/a/victim", recursive="1")
            assert (outside / "victim").is_dir(), "a removal followed the link out of the root"
    finally:
        stop.set()
        swapper.join(10)
    assert (outside / "secret.txt").read_text() == "OUTSIDE"
