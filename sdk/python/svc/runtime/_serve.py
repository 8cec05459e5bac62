"""Serving an ASGI app on a Unix socket with uvicorn: the only module that imports uvicorn."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import threading
from typing import Any

import uvicorn

from . import _lifeline

HARD_EXIT_AFTER = 5.0
"""Seconds a shutdown asked for by the lifeline may take before the process is ended."""


class _Server(uvicorn.Server):
    """uvicorn's server, announcing on stderr once the socket accepts connections."""

    def __init__(self, config: uvicorn.Config, banner: str) -> None:
        super().__init__(config)
        self._banner = banner

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self._banner, file=sys.stderr, flush=True)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _exit_quietly(signum: int, frame: Any) -> None:
    sys.exit(0)


def serve(app: Any, workload: str, socket_path: str) -> int:
    """Serves ``app`` on ``socket_path`` until SIGTERM, SIGINT or the lifeline closes."""
    config = uvicorn.Config(
        app,
        uds=socket_path,
        lifespan="off",
        access_log=False,
        log_level="warning",
        loop="uvloop" if _available("uvloop") else "auto",
        http="httptools" if _available("httptools") else "auto",
        # Clients see svc, not the server software behind it: no "server: uvicorn".
        server_header=False,
        date_header=True,
    )
    server = _Server(config, f"svc runtime: {workload} listening on {socket_path}")

    def platform_gone() -> None:
        # Act first: with the platform gone, stderr is usually a broken pipe too,
        # and a failing print must not stop the shutdown.
        server.should_exit = True
        timer = threading.Timer(HARD_EXIT_AFTER, os._exit, args=(1,))
        timer.daemon = True
        timer.start()
        try:
            print("svc runtime: stdin closed, the platform went away; shutting down", file=sys.stderr, flush=True)
        except OSError:
            pass

    _lifeline.watch(sys.stdin.fileno(), platform_gone)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal
    # with the previous handler: make that a clean exit instead of a kill.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_quietly)
    try:
        server.run()
    finally:
        if server.started and os.path.exists(socket_path):
            os.unlink(socket_path)
    return 0 if server.started else 1
