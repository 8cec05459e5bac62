"""``svc.Volume`` against a real `svc server`: made on first use when asked to, files and folders in and out byte
for byte (streamed), listings, removal, and the server's refusals raised as svc's exceptions."""

from __future__ import annotations

import hashlib
import io
import os

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
    assert not (tmp_path / "out" / "b.txt.svc-partial").exists()

    vol.remove_file("data", recursive=True)
    vol.remove_file("notes.txt")
    assert [e.path for e in vol.listdir()] == ["weights"]


def test_the_server_s_refusals_are_svc_exceptions(server, tmp_path):
    vol = svc.Volume.from_name("sdk-refusals", create_if_missing=True)
    with pytest.raises(svc.InvalidRequestError, match=r'contains "\.\.": a path may not leave the volume'):
        vol.listdir("../elsewhere")
    with pytest.raises(svc.NotFoundError, match='has no file or folder "missing.bin"'):
        b"".join(vol.read_file("missing.bin"))
    with pytest.raises(ValueError, match="give the file a path inside the volume"):
        vol.put_file(io.BytesIO(b"x"), "/")
    with pytest.raises(svc.InvalidOptionError, match="svc.Volume.from_name: name='Not A Label'"):
        svc.Volume.from_name("Not A Label")
