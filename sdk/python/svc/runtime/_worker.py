"""What a worker process runs once the supervisor forked it: warm up if needed, build the app, serve."""

from __future__ import annotations

import os
import traceback
from typing import Any, NoReturn

from .._workloads import Workload
from ._exit import exit_now
from ._startup import EXIT_SERVER_FAILED, NOT_WARMED, Exit, enter_worker, make_app, warm


def run_worker(
    workload: Workload, index: int, socket_path: Any, warmed: Any, ready_fd: int, parent_fd: int
) -> NoReturn:
    """Never returns: a forked child must not unwind into its parent's stack or run its exit hooks."""
    code = EXIT_SERVER_FAILED
    try:
        code = _serve_worker(workload, index, socket_path, warmed, ready_fd, parent_fd)
    except Exit as error:
        code = error.code
    except SystemExit as error:  # the graceful end of uvicorn's signal handling
        code = error.code if isinstance(error.code, int) else 0
    except BaseException:
        traceback.print_exc()
    finally:
        exit_now(code)


def _serve_worker(workload: Workload, index: int, socket_path: Any, warmed: Any, ready_fd: int, parent_fd: int) -> int:
    value = enter_worker(workload, warm(workload) if warmed is NOT_WARMED else warmed)
    app = make_app(workload, value)
    from ._serve import serve

    def started() -> None:
        # One short write: atomic on a pipe shared by every worker.
        os.write(ready_fd, f"{index} {os.getpid()}\n".encode())

    def retiring() -> None:
        os.write(ready_fd, f"{index} {os.getpid()} retiring\n".encode())

    return serve(
        app,
        socket_path,
        banner=f"svc runtime: {workload.name} listening on {socket_path} (worker {index}, pid {os.getpid()})",
        lifeline_fd=parent_fd,
        gone_message="the container's supervisor went away",
        on_started=started,
        on_retiring=retiring,
        index=index,
    )
