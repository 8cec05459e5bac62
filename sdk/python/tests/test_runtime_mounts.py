"""Mounting volumes in a container (``SVC_VOLUME_MOUNTS``): what the variable may hold, what a mount may
not hide, and real bind mounts in a private mount namespace, as root and as an unprivileged user (through a
user namespace). Each mount is made in a child process: the test's own namespace never changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import SDK_ROOT, run_python
from svc.runtime._mounts import Mount, MountError, check_mounts, mounts_from

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="bind mounts need root (or a user namespace it can hand out)")

CHILD = """
import json, os, sys
from svc.runtime._mounts import MountError, mount_volumes
try:
    mount_volumes(sys.argv[1], None)
except MountError as error:
    print(json.dumps({"error": str(error)}))
    sys.exit(0)
target = sys.argv[2]
found = open(os.path.join(target, "seed.txt")).read()
with open(os.path.join(target, "written.txt"), "w") as file:
    file.write("from the container")
try:
    open(os.path.join(sys.argv[3], "nope.txt"), "w")
    read_only = "writable"
except OSError as error:
    read_only = error.strerror
print(json.dumps({"found": found, "read_only": read_only, "env": os.environ.get("SVC_VOLUME_MOUNTS"), "uid": os.getuid()}))
"""


def test_no_variable_means_no_mounts():
    assert mounts_from({}) == []
    assert mounts_from({"SVC_VOLUME_MOUNTS": ""}) == []


def test_reads_the_mounts_and_refuses_a_malformed_variable():
    text = json.dumps([{"path": "/data/", "source": "/v/a", "read_only": True}, {"path": "/b", "source": "/v/b"}])
    assert mounts_from({"SVC_VOLUME_MOUNTS": text}) == [Mount("/data", "/v/a", True), Mount("/b", "/v/b", False)]
    for bad, message in [
        ("{", "is not JSON"),
        ('{"path": "/a"}', "must be a list of mounts"),
        ("[3]", "holds 3, not a mount"),
        ('[{"path": "data", "source": "/v"}]', "needs absolute path and source"),
    ]:
        with pytest.raises(MountError, match=message):
            mounts_from({"SVC_VOLUME_MOUNTS": bad})


def test_refuses_a_mount_over_what_the_container_runs_from(tmp_path):
    code = tmp_path / "code"
    for path, kept in [(str(tmp_path), [str(code)]), (str(code / "sub"), [str(code)]), ("/opt/py", ["/opt"])]:
        with pytest.raises(MountError, match=f"cannot mount a volume at {path}: it overlaps"):
            check_mounts([Mount(path, "/srv/volumes/v", False)], kept)
    with pytest.raises(MountError, match="overlaps /srv/volumes/v"):
        check_mounts([Mount("/srv/volumes", "/srv/volumes/v", False)], [])
    check_mounts([Mount("/data", "/srv/volumes/v", False)], [str(code), sys.prefix])


def _volumes(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    source = tmp_path / "volume"
    source.mkdir()
    (source / "seed.txt").write_text("in the volume")
    target, ro = tmp_path / "mnt" / "rw", tmp_path / "mnt" / "ro"
    env = json.dumps(
        [
            {"path": str(target), "source": str(source), "read_only": False},
            {"path": str(ro), "source": str(source), "read_only": True},
        ]
    )
    return source, target, ro, env


def _as(user: int | None):
    def drop() -> None:
        if user is not None:
            os.setgid(user)
            os.setuid(user)

    return drop


def _python_for(user: int) -> str | None:
    """An interpreter ``user`` may run that finds the SDK (the test's own may live in root's home)."""
    for python in (sys.executable, "/usr/bin/python3"):
        probe = [python, "-c", "import svc.runtime._mounts"]
        env = {"PYTHONPATH": str(SDK_ROOT)}
        try:
            if subprocess.run(probe, env=env, capture_output=True, timeout=30, preexec_fn=_as(user)).returncode == 0:
                return python
        except OSError:
            continue
    return None


def _run_child(
    tmp_path: Path, env_value: str, target: Path, ro: Path, user: int | None = None, python: str = sys.executable
) -> dict[str, object]:
    ran = subprocess.run(
        [python, "-c", CHILD, str(tmp_path / "code"), str(target), str(ro)],
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT), "SVC_VOLUME_MOUNTS": env_value},
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_as(user),
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


@root_only
def test_as_root_binds_each_volume_privately_read_only_where_asked(tmp_path):
    source, target, ro, env = _volumes(tmp_path)
    seen = _run_child(tmp_path, env, target, ro)
    assert seen == {"found": "in the volume", "read_only": "Read-only file system", "env": None, "uid": 0}
    assert (source / "written.txt").read_text() == "from the container", "the write reached the volume"
    assert not (source / "nope.txt").exists()
    assert target.is_dir() and list(target.iterdir()) == [], "the host sees an empty mount point: nothing propagated"


@root_only
def test_an_unprivileged_user_mounts_through_a_user_namespace():
    # Not pytest's tmp_path: its parents are root's alone, and this user must reach the files.
    tmp_path = Path(tempfile.mkdtemp(prefix="svc-mounts-"))
    try:
        _unprivileged(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _unprivileged(tmp_path: Path) -> None:
    source, target, ro, env = _volumes(tmp_path)
    nobody = 65534
    for path in (tmp_path, source, source / "seed.txt"):
        os.chown(path, nobody, nobody)
    tmp_path.chmod(0o755)
    python = _python_for(nobody)
    if python is None:
        pytest.skip("no Python here that an unprivileged user may run with the SDK")
    seen = _run_child(tmp_path, env, target, ro, user=nobody, python=python)
    if "error" in seen:
        assert "not root, and this kernel refuses an unprivileged user namespace" in str(seen["error"])
        pytest.skip(f"this kernel gives no user namespaces: {seen['error']}")
    assert seen == {"found": "in the volume", "read_only": "Read-only file system", "env": None, "uid": nobody}
    assert (source / "written.txt").read_text() == "from the container"


@root_only
def test_a_missing_mount_point_that_cannot_be_made_says_what_to_do(tmp_path):
    source = tmp_path / "volume"
    source.mkdir()
    (tmp_path / "file").write_text("")
    env = json.dumps([{"path": str(tmp_path / "file" / "x"), "source": str(source), "read_only": False}])
    seen = _run_child(tmp_path, env, tmp_path, tmp_path)
    assert "cannot create the mount point" in str(seen["error"]) and "create the folder on this host first" in str(
        seen["error"]
    )


def test_the_runtime_refuses_to_start_over_its_own_code_and_says_why(tmp_path):
    (tmp_path / "app.py").write_text("import svc\napp = svc.App('a')\n@app.function\ndef f() -> None: ...\n")
    env = json.dumps([{"path": str(tmp_path), "source": str(tmp_path / "v"), "read_only": False}])
    ran = subprocess.run(
        [sys.executable, "-m", "svc.runtime", "--root", str(tmp_path), "--entry", "app", "--workload", "f"]
        + ["--socket", str(tmp_path / "s.sock")],
        env={**os.environ, "PYTHONPATH": str(SDK_ROOT), "SVC_VOLUME_MOUNTS": env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode == 1
    assert f"cannot mount a volume at {tmp_path}: it overlaps {tmp_path}" in ran.stderr
    assert run_python("-c", "print(1)").returncode == 0
