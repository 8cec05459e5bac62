"""``svc.Volume`` against a real `svc server`: made on first use when asked to, files and folders in and out byte
for byte (streamed), listings, removal, and the server's refusals raised as svc's exceptions."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import subprocess
import threading
from urllib.parse import urlsplit

import pytest
import svc


def test_a_volume_that_does_not_exist_is_not_found_unless_created_on_first_use(server):
    with pytest.raises(
        svc.NotFoundError, match="the workspace has no volume never-made: create it with svc volume create"
    ):
        svc.Volume.from_name("never-made").listdir()
    vol = svc.Volume.from_name("sdk-made", create_if_missing=True)
    assert vol.listdir() == []
    assert svc.Volume.from_name("sdk-made", create_if_missing=True).listdir() == []  # there already: used as it is


def test_files_and_folders_go_in_and_out_byte_for_byte(server, tmp_path):
    vol = svc.Volume.from_name("sdk-files", create_if_missing=True)
    blob = os.urandom(3 * 1024 * 1024 + 17)
    (tmp_path / "blob.bin").write_bytes(blob)
    entry = vol.put_file(tmp_path / "blob.bin", "weights/blob.bin")
    assert (entry.path, entry.type, entry.size) == ("weights/blob.bin", "file", len(blob))
    assert vol.put_file(io.BytesIO(b"from memory"), "/notes.txt").size == len(b"from memory")  # a leading / is the root
    assert vol.put_file(tmp_path / "blob.bin", "copies/").path == "copies/blob.bin"  # into the folder, under its name
    vol.remove_file("copies", recursive=True)
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_text("a")
    (tree / "sub" / "b.txt").write_text("bb")
    assert [e.path for e in vol.put_dir(tree, "data")] == ["data/a.txt", "data/sub/b.txt"]

    assert [(e.path, e.type) for e in vol.listdir()] == [("data", "dir"), ("notes.txt", "file"), ("weights", "dir")]
    assert [e.path for e in vol.listdir("data", recursive=True)] == ["data/a.txt", "data/sub", "data/sub/b.txt"]
    read = b"".join(vol.read_file("weights/blob.bin"))
    assert hashlib.sha256(read).digest() == hashlib.sha256(blob).digest()
    vol.get_file("data/sub/b.txt", tmp_path / "out" / "b.txt")
    assert (tmp_path / "out" / "b.txt").read_text() == "bb"
    vol.get_file("data/a.txt", f"{tmp_path}/into/")  # a folder named with a trailing /, made
    vol.get_file("data/sub/b.txt", tmp_path / "into")  # a folder there
    assert sorted(p.name for p in (tmp_path / "into").iterdir()) == ["a.txt", "b.txt"]
    assert not (tmp_path / "out" / "b.txt.svc-partial").exists()

    vol.remove_file("data", recursive=True)
    vol.remove_file("notes.txt")
    assert [e.path for e in vol.listdir()] == ["weights"]


def test_a_folder_goes_in_several_files_at_once_in_order_and_a_refusal_is_raised(server, tmp_path):
    vol = svc.Volume.from_name("sdk-put-dir", create_if_missing=True)
    tree = tmp_path / "rows"
    tree.mkdir()
    for i in range(40):
        (tree / f"{i:02}.txt").write_text(str(i))
    entries = vol.put_dir(tree, "rows")
    assert [e.path for e in entries] == [f"rows/{i:02}.txt" for i in range(40)], "in the files' order"
    assert [e.size for e in entries] == [len(str(i)) for i in range(40)]
    assert len(vol.listdir("rows")) == 40


def test_a_listing_comes_page_by_page_and_whole(server, tmp_path, monkeypatch):
    vol = svc.Volume.from_name("sdk-pages", create_if_missing=True)
    tree = tmp_path / "rows"
    (tree / "inner").mkdir(parents=True)
    for i in range(5):
        (tree / f"{i}.txt").write_text(str(i))
    (tree / "inner" / "deep.txt").write_text("deep")
    vol.put_dir(tree, "rows")
    monkeypatch.setattr("svc._volume._LIST_PAGE", 2)  # pages of two entries: four requests for the seven below
    asked: list[str] = []
    request = svc._client._http.Api.request

    def counted(self, method, target, *args, **kwargs):
        asked.append(target)
        return request(self, method, target, *args, **kwargs)

    monkeypatch.setattr(svc._client._http.Api, "request", counted)
    walked = vol.iterdir("rows", recursive=True)
    assert next(walked).path == "rows/0.txt" and len(asked) == 1  # the first page, before the others are asked for
    assert [e.path for e in walked] == [
        "rows/1.txt",
        "rows/2.txt",
        "rows/3.txt",
        "rows/4.txt",
        "rows/inner",
        "rows/inner/deep.txt",
    ]
    assert len(asked) == 4 and asked[-1].endswith("&after=rows/inner")
    assert [e.path for e in vol.listdir("rows")] == [
        "rows/0.txt",
        "rows/1.txt",
        "rows/2.txt",
        "rows/3.txt",
        "rows/4.txt",
        "rows/inner",
    ]
    (tree / "bad\\name.txt").write_text("x")  # a backslash, which a volume's path may not hold
    with pytest.raises(svc.InvalidRequestError):
        vol.put_dir(tree, "again")


def test_the_server_s_refusals_are_svc_exceptions(server, tmp_path):
    vol = svc.Volume.from_name("sdk-refusals", create_if_missing=True)
    with pytest.raises(svc.InvalidRequestError, match=r'contains "\.\.": a path may not leave the volume'):
        vol.listdir("../elsewhere")
    with pytest.raises(svc.NotFoundError, match='has no file or folder "missing.bin"'):
        b"".join(vol.read_file("missing.bin"))
    with pytest.raises(ValueError, match="give the file a path inside the volume"):
        vol.put_file(io.BytesIO(b"x"), "/")
    with pytest.raises(ValueError, match="'notes/' names a folder"):
        vol.put_file(io.BytesIO(b"x"), "notes/")  # a file object has no name of its own to take
    with pytest.raises(svc.InvalidOptionError, match="svc.Volume.from_name: name='Not A Label'"):
        svc.Volume.from_name("Not A Label")


def _cutting_proxy(target: str, cut_after: int) -> tuple[str, socket.socket]:
    """A TCP proxy to ``target``'s host and port that closes both sides once ``cut_after`` bytes of answer passed."""
    parts = urlsplit(target)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((parts.hostname, parts.port))

            def forward_request(client: socket.socket = client, upstream: socket.socket = upstream) -> None:
                try:
                    while data := client.recv(65536):
                        upstream.sendall(data)
                except OSError:
                    pass

            threading.Thread(target=forward_request, daemon=True).start()
            passed = 0
            try:
                while data := upstream.recv(65536):
                    passed += len(data)
                    if passed > cut_after:
                        break
                    client.sendall(data)
            except OSError:
                pass
            for side in (
                client,
                upstream,
            ):  # shutdown first: close alone leaves the other thread's recv holding it open
                with contextlib.suppress(OSError):
                    side.shutdown(socket.SHUT_RDWR)
                side.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", listener


def test_a_download_cut_off_goes_on_where_it_stopped(server, tmp_path, monkeypatch):
    vol = svc.Volume.from_name("sdk-resume", create_if_missing=True)
    blob = os.urandom(6 * 1024 * 1024)
    vol.put_file(io.BytesIO(blob), "big.bin")
    target = tmp_path / "big.bin"
    proxy, listener = _cutting_proxy(os.environ["SVC_SERVER"], 2 * 1024 * 1024)
    try:
        with monkeypatch.context() as patched:
            patched.setenv("SVC_SERVER", proxy)
            with pytest.raises(svc.ServerUnreachableError, match="the download stopped after") as cut:
                vol.get_file("big.bin", target)
    finally:
        listener.close()
    assert "Call get_file again" in (cut.value.hint or "")
    partial = tmp_path / "big.bin.svc-partial"
    kept = partial.read_bytes()
    assert 0 < len(kept) < len(blob) and kept == blob[: len(kept)], "a beginning of the file kept"
    assert not target.exists()

    # Mark the kept bytes: a download that goes on from them leaves the mark, one that starts over would not.
    mark = bytes([kept[0] ^ 0xFF])
    partial.write_bytes(mark + kept[1:])
    vol.get_file("big.bin", target)  # through the server itself: the rest only
    fetched = target.read_bytes()
    assert fetched[:1] == mark, "the kept bytes were not fetched again"
    assert fetched[1:] == blob[1:]
    assert not (tmp_path / "big.bin.svc-partial").exists()
    assert not (tmp_path / "big.bin.svc-partial.etag").exists()


def test_parts_that_svc_volume_get_left_are_fetched_again_not_taken_for_a_beginning(server, tmp_path):
    vol = svc.Volume.from_name("sdk-resume-parts", create_if_missing=True)
    blob = os.urandom(1024 * 1024)
    vol.put_file(io.BytesIO(blob), "data.bin")
    target = tmp_path / "data.bin"
    # The CLI's partial file has the file's size, holes and all: it is no beginning, and its record goes with it.
    (tmp_path / "data.bin.svc-partial").write_bytes(bytes(len(blob)))
    record = {"etag": '"a-version"', "size": len(blob), "done": [[0, 4096]]}
    (tmp_path / "data.bin.svc-partial.parts").write_text(json.dumps(record))
    vol.get_file("data.bin", target)
    assert target.read_bytes() == blob
    assert not list(tmp_path.glob("data.bin.svc-partial*")), "nothing of the partial left"


def test_a_changed_file_is_fetched_whole_and_a_running_download_is_not_joined(server, tmp_path):
    vol = svc.Volume.from_name("sdk-resume-changed", create_if_missing=True)
    blob = os.urandom(1024 * 1024)
    vol.put_file(io.BytesIO(blob), "data.bin")
    target = tmp_path / "data.bin"
    (tmp_path / "data.bin.svc-partial").write_bytes(os.urandom(4096))
    (tmp_path / "data.bin.svc-partial.etag").write_text('"an-older-version"')
    vol.get_file("data.bin", target)
    assert target.read_bytes() == blob

    other = subprocess.Popen(["sleep", "30"])
    try:
        (tmp_path / "again.bin.svc-partial.lock").write_text(str(other.pid))
        with pytest.raises(svc.InvalidRequestError, match=rf"another download \(process {other.pid}\) is writing"):
            vol.get_file("data.bin", tmp_path / "again.bin")
    finally:
        other.kill()
        other.wait()
    vol.get_file("data.bin", tmp_path / "again.bin")  # its process is gone: the lock is taken over
    assert (tmp_path / "again.bin").read_bytes() == blob


def test_two_threads_do_not_download_into_one_file_at_once(server, tmp_path):
    vol = svc.Volume.from_name("sdk-resume-threads", create_if_missing=True)
    vol.put_file(io.BytesIO(os.urandom(4 * 1024 * 1024)), "data.bin")
    outcomes: list[BaseException | None] = []

    def fetch() -> None:
        try:
            vol.get_file("data.bin", tmp_path / "data.bin")
            outcomes.append(None)
        except BaseException as error:  # noqa: BLE001 (the test reads what each thread met)
            outcomes.append(error)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [o for o in outcomes if isinstance(o, svc.InvalidRequestError) and o.code == "conflict"]
    assert len([o for o in outcomes if o is None]) + len(refused) == 4, outcomes
    assert (tmp_path / "data.bin").read_bytes() == b"".join(vol.read_file("data.bin"))
    assert not list(tmp_path.glob("data.bin.svc-partial*")), "no lock or partial left"
