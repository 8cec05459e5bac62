"""Joining the container's cgroup: which ``cgroup.procs`` files a request may name, and the write itself.

The kernel's side (limits, OOM kills) is tested with real cgroups by the platform's tests
(test/e2e/resource-limits.test.ts); here the files are plain files.
"""

from __future__ import annotations

import os

import pytest
from helpers import run_python
from svc.runtime._cgroup import CgroupError, cgroup_files, join_cgroup


def test_no_cgroup_means_none() -> None:
    assert cgroup_files(None) == []
    assert cgroup_files([]) == []


def test_takes_absolute_cgroup_procs_paths() -> None:
    files = ["/sys/fs/cgroup/cpu/svc/1-ab/c-1/cgroup.procs", "/sys/fs/cgroup/memory/svc/1-ab/c-1/cgroup.procs"]
    assert cgroup_files(files) == files


@pytest.mark.parametrize(
    "bad", ["/sys/fs/cgroup/x/cgroup.procs", ["relative/cgroup.procs"], ["/etc/passwd"], [3], {"a": 1}]
)
def test_refuses_anything_else(bad: object) -> None:
    with pytest.raises(CgroupError, match="cgroup must be a list of absolute paths of cgroup.procs files") as raised:
        cgroup_files(bad)
    assert repr(bad[0] if isinstance(bad, list) else bad) in str(raised.value), "the message names what was wrong"


def test_a_bad_cgroup_flag_is_a_usage_error_naming_it(tmp_path) -> None:
    ran = run_python(
        "-m",
        "svc.runtime",
        "--root",
        str(tmp_path),
        "--entry",
        "app",
        "--workload",
        "w",
        "--socket",
        str(tmp_path / "s.sock"),
        "--cgroup",
        "relative/cgroup.procs",
    )
    assert ran.returncode == 2
    assert "--cgroup" in ran.stderr and "'relative/cgroup.procs' is not one" in ran.stderr


def test_join_writes_this_process_pid_into_each_file(tmp_path) -> None:
    files = [str(tmp_path / name / "cgroup.procs") for name in ("cpu", "memory")]
    for file in files:
        os.makedirs(os.path.dirname(file))
    join_cgroup(files)
    assert [open(file).read() for file in files] == [str(os.getpid())] * 2


def test_join_names_the_file_that_refused(tmp_path) -> None:
    missing = str(tmp_path / "gone" / "cgroup.procs")
    with pytest.raises(
        CgroupError, match=f"could not join the container's cgroup \\({missing}: No such file or directory\\)"
    ):
        join_cgroup([missing])
