"""Whether this process touched CUDA, which a checkpoint template must not have done before it forks.

CUDA's state does not survive ``fork()``: a child of a process that initialised CUDA fails (or
hangs) at its first CUDA call. A template of a workload with ``gpu=`` therefore runs its
``@svc.enter(snap=True)`` methods and ``on_start`` without a GPU (its environment shows none) and
checks before it serves any fork; each container it forks is given its own GPUs and initialises
CUDA itself. Two signs are checked: PyTorch's own flag (when torch was imported; its import alone
does not initialise CUDA) and an NVIDIA device file held open (any library that opened the driver).
"""

from __future__ import annotations

import os
import sys

from .._workloads import Workload
from ._startup import Exit, say

EXIT_CUDA_BEFORE_FORK = 7
"""A checkpoint template that touched CUDA before forking exits with this code."""

_DEVICE_FILES = "/dev/nvidia"


def cuda_touched(fd_dir: str = "/proc/self/fd") -> str | None:
    """What shows that this process initialised CUDA, or None."""
    torch = sys.modules.get("torch")
    is_initialized = getattr(getattr(torch, "cuda", None), "is_initialized", None)
    if callable(is_initialized):
        try:
            if is_initialized():
                return "torch.cuda.is_initialized() is True"
        except Exception:  # a broken torch is not a CUDA context: its own calls will say what is wrong
            pass
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
        if target.startswith(_DEVICE_FILES):
            return f"it holds {target} open"
    return None


def refuse_if_cuda_touched(workload: Workload, fd_dir: str = "/proc/self/fd") -> None:
    """Exit 7 with the reason and the fix when the template touched CUDA; nothing otherwise."""
    why = cuda_touched(fd_dir)
    if why is None:
        return
    first = "@svc.enter(snap=True)" if workload.cls is not None else "on_start"
    say(
        f"{workload.name}: the checkpoint template touched CUDA before forking ({why}); a forked container"
        f" cannot use it. Load to CPU memory in {first} (a checkpoint template has no GPU), and move to the GPU"
        ' (.to("cuda")) in an @svc.enter() without snap or in the first call: each container runs that itself,'
        " with its own GPU (docs/gpus.md, Checkpoints with GPUs). Containers start without the checkpoint."
    )
    raise Exit(EXIT_CUDA_BEFORE_FORK)
