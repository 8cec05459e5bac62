"""A checkpoint template must not fork after touching CUDA; a fork request carries its container's GPU variables.

Real CUDA cannot run here: PyTorch's flag is a stand-in module in ``sys.modules``, the device file
a symlink to ``/dev/nvidia0`` in a folder that plays ``/proc/self/fd``.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from svc.runtime._cuda_fork import EXIT_CUDA_BEFORE_FORK, cuda_touched, refuse_if_cuda_touched
from svc.runtime._startup import Exit
from svc.runtime._template import BadRequest, gpu_env_of


def fake_torch(initialized: bool) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_initialized=lambda: initialized)  # type: ignore[attr-defined]
    return torch


def test_untouched_without_torch_or_device_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    (tmp_path / "3").symlink_to("/tmp/something")
    assert cuda_touched(str(tmp_path)) is None
    monkeypatch.setitem(sys.modules, "torch", fake_torch(False))
    assert cuda_touched(str(tmp_path)) is None, "importing torch does not initialise CUDA"


def test_torch_flag_and_an_open_device_file_each_tell_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "torch", fake_torch(True))
    assert cuda_touched(str(tmp_path)) == "torch.cuda.is_initialized() is True"
    monkeypatch.delitem(sys.modules, "torch")
    (tmp_path / "5").symlink_to("/dev/nvidia0")
    assert cuda_touched(str(tmp_path)) == "it holds /dev/nvidia0 open"


def test_the_refusal_names_the_snap_enter_and_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", fake_torch(True))
    workload = types.SimpleNamespace(name="model", cls=object)
    with pytest.raises(Exit) as exited:
        refuse_if_cuda_touched(workload, str(tmp_path))  # type: ignore[arg-type]
    assert exited.value.code == EXIT_CUDA_BEFORE_FORK
    said = capsys.readouterr().err
    assert "model: the checkpoint template touched CUDA before forking" in said
    assert "Load to CPU memory in @svc.enter(snap=True)" in said and '.to("cuda")' in said
    workload.cls = None
    with pytest.raises(Exit):
        refuse_if_cuda_touched(workload, str(tmp_path))  # type: ignore[arg-type]
    assert "Load to CPU memory in on_start" in capsys.readouterr().err


def test_a_fork_request_may_give_the_gpu_variables_and_nothing_else():
    assert gpu_env_of({}) == {}
    env = {"CUDA_VISIBLE_DEVICES": "GPU-1", "NVIDIA_VISIBLE_DEVICES": "GPU-1", "SVC_GPU_MODEL": "L4"}
    assert gpu_env_of({"gpu_env": env}) == env
    for bad in ({"PATH": "/x"}, {"CUDA_VISIBLE_DEVICES": 1}, ["CUDA_VISIBLE_DEVICES"]):
        with pytest.raises(BadRequest, match="gpu_env"):
            gpu_env_of({"gpu_env": bad})
