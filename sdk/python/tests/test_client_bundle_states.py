"""A warm .remote() tells an unchanged project by the states of its paths, and any change still gives a fresh bundle.

The clock the client compares file times with is moved 10 s ahead (``settled``), so that the files
just written here count as old: the states are then trusted, and only they can notice a change.
"""

from __future__ import annotations

import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from svc._client import _project
from svc._client._project import Project


def write(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roots the client walked (``collect``), in order."""
    walked: list[str] = []
    real = _project.collect

    def counting(root, **options):  # type: ignore[no-untyped-def]
        walked.append(root)
        return real(root, **options)

    monkeypatch.setattr(_project, "collect", counting)
    return walked


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_project, "time", SimpleNamespace(time_ns=lambda: time.time_ns() + 10 * 10**9))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    write(tmp_path / "app.py", "import svc\n")
    write(tmp_path / "lib" / "helpers.py", "X = 1\n")
    write(tmp_path / "data.txt", "data")
    return Project(str(tmp_path), "app", "states", {})


def members(project: Project) -> dict[str, tuple[int, bytes]]:
    """What the bundle holds: each member's mode and content."""
    with tarfile.open(project.bundle().path) as tar:
        return {m.name: (m.mode, tar.extractfile(m).read() if m.isfile() else b"") for m in tar.getmembers()}  # type: ignore[union-attr]


def test_a_settled_project_is_walked_once(project, walks, settled):
    first = project.bundle()
    assert project.bundle() is first and project.bundle() is first
    assert len(walks) == 1


def test_a_project_changed_a_moment_ago_is_walked_on_every_call(project, walks):
    first = project.bundle()
    assert project.bundle() is first
    assert len(walks) == 2  # its files' times are too recent to tell a change within the same clock tick


@pytest.mark.parametrize("target", ["../data.txt", "/usr"], ids=["bundled", "left out: outside"])
def test_a_project_with_a_symbolic_link_is_walked_on_every_call(project, walks, settled, target):
    os.symlink(target, Path(project.root) / "lib" / "alias")
    project.bundle()
    project.bundle()
    assert len(walks) == 2


def _grow(root: Path) -> None:
    with open(root / "data.txt", "a") as handle:
        handle.write(" more")


def _same_size_other_bytes(root: Path) -> None:
    info = os.stat(root / "data.txt")
    (root / "data.txt").write_text("DATA")
    os.utime(root / "data.txt", ns=(info.st_atime_ns, info.st_mtime_ns))  # a tool that keeps the time


def _executable(root: Path) -> None:
    os.chmod(root / "lib" / "helpers.py", 0o755)


def _new_file_in_a_folder(root: Path) -> None:
    write(root / "lib" / "more.py")


def _removed(root: Path) -> None:
    os.remove(root / "lib" / "helpers.py")


def _renamed(root: Path) -> None:
    os.rename(root / "lib" / "helpers.py", root / "lib" / "renamed.py")


def _excluded_by_svcignore(root: Path) -> None:
    write(root / ".svcignore", "data.txt\n")


def _venv_no_more(root: Path) -> None:
    os.remove(root / "env" / "pyvenv.cfg")  # an excluded virtual environment becomes a plain folder


CHANGES: dict[str, Callable[[Path], None]] = {
    "a file grew": _grow,
    "a file has other bytes": _same_size_other_bytes,
    "a file became executable": _executable,
    "a file was added to a folder": _new_file_in_a_folder,
    "a file was removed": _removed,
    "a file was renamed": _renamed,
    ".svcignore excludes a file": _excluded_by_svcignore,
    "a folder no longer holds pyvenv.cfg": _venv_no_more,
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_any_change_is_seen_and_gives_a_fresh_bundle(project, walks, settled, change):
    root = Path(project.root)
    write(root / "env" / "pyvenv.cfg", "home = /usr\n")
    write(root / "env" / "lib" / "site.py")
    before = members(project)
    assert project.bundle() is project.bundle()
    assert len(walks) == 1
    CHANGES[change](root)
    after = members(project)
    assert len(walks) == 2, "the change made the client walk the project again"
    if change == "a file has other bytes":
        # The walk tells changes by size and modification time, as it always did: a file rewritten to the
        # same size with its old time back keeps the bundle (the states only decide when to walk).
        assert after == before
    else:
        assert after != before
    assert project.bundle() is project.bundle()
    assert len(walks) == 2, "after the new walk the project is settled again"


def test_rules_that_leave_svcignore_out_are_watched_too(tmp_path, walks, settled):
    write(tmp_path / "app.py")
    write(tmp_path / "data.txt")
    write(tmp_path / ".svcignore", ".svcignore\n")
    project = Project(str(tmp_path), "app", "states", {})
    assert set(members(project)) == {"app.py", "data.txt"}
    write(tmp_path / ".svcignore", ".svcignore\ndata.txt\n")
    assert set(members(project)) == {"app.py"}
