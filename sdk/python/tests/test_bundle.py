"""svc.bundle: determinism, normalisation, links and the size limit."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from helpers import run_python
from svc.bundle import FIXED_MTIME, BundleError, BundleTooLarge, build_bundle, collect


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Writes ``files`` (relative path → content) under ``root``."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def members(bundle: Path) -> list[tarfile.TarInfo]:
    with tarfile.open(bundle, "r:gz") as tar:
        return tar.getmembers()


def names(bundle: Path) -> list[str]:
    return [member.name for member in members(bundle)]


PROJECT = {
    "app.py": "import svc\napp = svc.App('demo')\n",
    "pkg/__init__.py": "",
    "pkg/util.py": "X = 1\n",
    "data/table.csv": "a,b\n1,2\n",
}


def test_the_same_tree_gives_the_same_bytes_and_sha(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    first = build_bundle(project, tmp_path / "one.tar.gz")
    second = build_bundle(project, tmp_path / "two.tar.gz")
    assert first.sha256 == second.sha256
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    assert first.sha256 == hashlib.sha256((tmp_path / "one.tar.gz").read_bytes()).hexdigest()
    assert first.size == (tmp_path / "one.tar.gz").stat().st_size
    assert first.files == 4


def test_a_copy_made_in_another_order_elsewhere_gives_the_same_sha(tmp_path):
    one = tree(tmp_path / "one", PROJECT)
    two = tree(tmp_path / "two", dict(reversed(list(PROJECT.items()))))
    assert build_bundle(one, tmp_path / "1.tgz").sha256 == build_bundle(two, tmp_path / "2.tgz").sha256


def test_touching_mtimes_and_owners_changes_nothing(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    before = build_bundle(project, tmp_path / "a.tgz").sha256
    for path in project.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    (project / "pkg" / "util.py").chmod(0o600)  # only the executable bit counts
    assert build_bundle(project, tmp_path / "b.tgz").sha256 == before


def test_a_content_change_a_rename_or_the_executable_bit_changes_the_sha(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    shas = {build_bundle(project, tmp_path / "0.tgz").sha256}
    (project / "pkg" / "util.py").write_text("X = 2\n")
    shas.add(build_bundle(project, tmp_path / "1.tgz").sha256)
    (project / "data" / "table.csv").rename(project / "data" / "table2.csv")
    shas.add(build_bundle(project, tmp_path / "2.tgz").sha256)
    (project / "app.py").chmod(0o744)
    shas.add(build_bundle(project, tmp_path / "3.tgz").sha256)
    assert len(shas) == 4


def test_entries_are_sorted_and_normalised(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o700)
    (project / "secret.txt").write_text("s")
    (project / "secret.txt").chmod(0o600)
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle)
    found = members(bundle)
    assert [m.name for m in found] == sorted(m.name for m in found)
    for member in found:
        assert (member.mtime, member.uid, member.gid, member.uname, member.gname) == (FIXED_MTIME, 0, 0, "", "")
        assert member.isdir() or member.isfile()
    modes = {m.name: m.mode for m in found}
    assert modes["run.sh"] == 0o755 and modes["secret.txt"] == 0o644 and modes["pkg"] == 0o755


def test_the_gzip_header_holds_no_time_and_no_name(tmp_path):
    bundle = tmp_path / "b.tgz"
    build_bundle(tree(tmp_path / "p", PROJECT), bundle)
    header = bundle.read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] == 0, "no FNAME (nor any other optional field)"
    assert header[4:8] == b"\0\0\0\0", "MTIME is zero"


def test_long_and_non_ascii_names_round_trip(tmp_path):
    deep = "/".join(["a-rather-long-folder-name"] * 6) + "/module.py"
    project = tree(tmp_path / "p", {deep: "x", "données/été.py": "y"})
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle)
    assert deep in names(bundle) and "données/été.py" in names(bundle)


def test_empty_folders_are_kept(tmp_path):
    project = tree(tmp_path / "p", {"app.py": ""})
    (project / "uploads").mkdir()
    bundle = tmp_path / "b.tgz"
    result = build_bundle(project, bundle)
    assert names(bundle) == ["app.py", "uploads"] and result.files == 1


def test_the_default_output_is_inside_the_project_and_never_bundled(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    first = build_bundle(project)
    assert first.path == (project / ".svc" / "bundle.tar.gz").resolve()
    assert build_bundle(project).sha256 == first.sha256


def test_an_output_file_inside_the_project_is_not_bundled_by_the_next_run(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    first = build_bundle(project, project / "out.tgz")
    assert build_bundle(project, project / "out.tgz").sha256 == first.sha256
    assert "out.tgz" not in names(project / "out.tgz")


# Links and special files


def test_a_link_inside_the_project_is_stored_as_a_relative_link_to_its_final_target(tmp_path):
    project = tree(tmp_path / "p", {"pkg/real.py": "x", "conf/settings.toml": "y"})
    (project / "alias.py").symlink_to(project / "pkg" / "real.py")  # absolute, inside
    (project / "pkg" / "chain.py").symlink_to("../alias.py")  # through another link
    (project / "configs").symlink_to("conf")  # a folder
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle)
    links = {m.name: m.linkname for m in members(bundle) if m.issym()}
    assert links == {"alias.py": "pkg/real.py", "pkg/chain.py": "real.py", "configs": "conf"}
    assert "configs/settings.toml" not in names(bundle), "a linked folder is not walked twice"


def test_links_leaving_the_project_dangling_or_into_excluded_paths_are_skipped_with_a_warning(tmp_path):
    outside = tree(tmp_path / "outside", {"secret": "s"})
    project = tree(tmp_path / "p", {"app.py": "", ".venv/pyvenv.cfg": "", ".venv/bin/python": ""})
    (project / "etc").symlink_to("/etc")
    (project / "secret").symlink_to(outside / "secret")
    (project / "up").symlink_to("..")
    (project / "gone").symlink_to("nothing-here")
    (project / "python").symlink_to(".venv/bin/python")
    warnings: list[str] = []
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle, warn=warnings.append)
    assert names(bundle) == ["app.py"]
    text = "\n".join(warnings)
    for name in ("etc", "secret", "up"):
        assert f"skipped link {name} -> " in text and "outside the project" in text
    assert "skipped link gone -> nothing-here: its target does not exist" in text
    assert "skipped link python -> .venv/bin/python: its target is excluded" in text


def test_a_fifo_is_skipped_with_a_warning(tmp_path):
    project = tree(tmp_path / "p", {"app.py": ""})
    os.mkfifo(project / "pipe")
    warnings: list[str] = []
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle, warn=warnings.append)
    assert names(bundle) == ["app.py"]
    assert warnings == ["skipped pipe: it is not a regular file, folder or link (a fifo, socket or device)"]


def test_hard_links_become_plain_files(tmp_path):
    project = tree(tmp_path / "p", {"a.py": "same"})
    os.link(project / "a.py", project / "b.py")
    bundle = tmp_path / "b.tgz"
    build_bundle(project, bundle)
    assert all(m.isfile() for m in members(bundle)) and names(bundle) == ["a.py", "b.py"]


# The size limit


def test_a_project_over_the_limit_fails_naming_the_biggest_files(tmp_path):
    project = tree(tmp_path / "p", {"app.py": "x", "model.bin": b"\0" * 3000, "data/big.csv": "y" * 2000})
    out = tmp_path / "b.tgz"
    with pytest.raises(BundleTooLarge) as caught:
        build_bundle(project, out, max_bytes=4096)
    message = str(caught.value)
    assert "4.9 KiB of files, more than the 4.0 KiB" in message
    assert message.index("model.bin") < message.index("data/big.csv") < message.index("app.py")
    assert ".svcignore" in message and "--max-bytes" in message
    assert caught.value.biggest[0] == ("model.bin", 3000)
    assert not out.exists(), "nothing is written"


def test_excluded_files_do_not_count_towards_the_limit(tmp_path):
    project = tree(tmp_path / "p", {"app.py": "x", "node_modules/huge.js": "y" * 10_000})
    assert build_bundle(project, tmp_path / "b.tgz", max_bytes=100).files == 1


def test_not_a_folder(tmp_path):
    with pytest.raises(BundleError, match="not a folder"):
        collect(tmp_path / "missing")


# python -m svc.bundle


def test_the_command_prints_one_json_line_and_writes_the_bundle(tmp_path):
    project = tree(tmp_path / "p", PROJECT)
    out = tmp_path / "out" / "bundle.tar.gz"
    result = run_python("-m", "svc.bundle", str(project), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1
    line = json.loads(result.stdout)
    assert line == {
        "path": str(out.resolve()),
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "size": out.stat().st_size,
        "files": 4,
    }


def test_the_command_reports_the_size_limit_and_exits_3(tmp_path):
    project = tree(tmp_path / "p", {"big.bin": b"\0" * 2048})
    result = run_python("-m", "svc.bundle", str(project), "--out", str(tmp_path / "b.tgz"), "--max-bytes", "1024")
    assert result.returncode == 3
    assert result.stdout == ""
    assert "more than the 1.0 KiB a bundle may hold" in result.stderr and "big.bin" in result.stderr


def test_the_command_prints_warnings_on_stderr(tmp_path):
    project = tree(tmp_path / "p", {"app.py": ""})
    (project / "etc").symlink_to("/etc")
    result = run_python("-m", "svc.bundle", str(project), "--out", str(tmp_path / "b.tgz"))
    assert result.returncode == 0
    assert "warning: skipped link etc -> /etc: it points outside the project" in result.stderr
    json.loads(result.stdout)


@pytest.mark.parametrize("args", [[], ["a", "b"], ["p", "--max-bytes", "0"], ["p", "--max-bytes", "x"]])
def test_wrong_usage_exits_2(tmp_path, args):
    result = run_python("-m", "svc.bundle", *args, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""


def test_a_missing_folder_exits_1(tmp_path):
    result = run_python("-m", "svc.bundle", str(tmp_path / "missing"))
    assert result.returncode == 1 and "not a folder" in result.stderr


def test_the_bundle_is_plain_gzip_and_tar(tmp_path):
    bundle = tmp_path / "b.tgz"
    build_bundle(tree(tmp_path / "p", PROJECT), bundle)
    raw = gzip.decompress(bundle.read_bytes())
    assert len(raw) % 512 == 0
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        assert tar.extractfile("pkg/util.py").read() == b"X = 1\n"
