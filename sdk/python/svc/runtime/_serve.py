"""Serving an ASGI app on a Unix socket (or a TCP ``(host, port)``) with uvicorn: the only module that imports uvicorn.

Runs in a worker process, after the fork: uvicorn's event loop starts here and
never in the supervisor or the template, which must stay free to fork.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import threading
from typing import Any, Callable

import uvicorn  # pyright: ignore[reportMissingModuleSource] # only in images; typings/ has its stub

from . import _lifeline, _timeouts

HARD_EXIT_AFTER = 5.0
"""Seconds a shutdown asked for by the lifeline may take before the process is ended."""


class _Server(uvicorn.Server):
    """uvicorn's server, announcing on stderr (and to the supervisor) once the socket accepts connections."""

    def __init__(self, config: uvicorn.Config, banner: str, on_started: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._banner = banner
        self._on_started = on_started

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self._banner, file=sys.stderr, flush=True)
            if self._on_started is not None:
                self._on_started()


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _exit_quietly(signum: int, frame: Any) -> None:
    sys.exit(0)


def _config(app: Any, socket_path: Any) -> uvicorn.Config:
    # A str is a Unix socket's path; anything else a TCP (host, port), bound with SO_REUSEADDR
    # (asyncio's default) so that a restarted worker listens on its port again at once.
    where: dict[str, Any] = {"uds": socket_path} if isinstance(socket_path, str) else {"host": socket_path[0], "port": socket_path[1]}
    return uvicorn.Config(
        app,
        **where,
        # Every kind answers lifespan messages; a user ASGI app's startup runs before the socket serves, its shutdown on exit.
        lifespan="on",
        access_log=False,
        log_level="warning",
        loop="uvloop" if _available("uvloop") else "auto",
        http="httptools" if _available("httptools") else "auto",
        # Clients see svc, not the server software behind it: no "server: uvicorn".
        server_header=False,
        date_header=True,
        # Only the gateway reaches the workers: trust its X-Forwarded-For/-Proto for the client and scheme.
        proxy_headers=True,
        forwarded_allow_ips="*",
    )


def preload() -> None:
    """Imports what uvicorn loads lazily (protocols, loop, logging set-up) before the workers are forked.

    Each worker would otherwise pay ~50 ms for it after the fork; the socket is not bound here.
    """
    _config(_no_app, os.devnull).load()


def _no_app(scope: Any, receive: Any, send: Any) -> None:
    """Stands in for the app while ``preload`` loads uvicorn's modules: never called."""


def serve(app: Any, socket_path: Any, *, banner: str, lifeline_fd: int | None, gone_message: str,
          on_started: Callable[[], None] | None = None, on_retiring: Callable[[], None] | None = None,
          index: int = 0) -> int:
    """Serves ``app`` on ``socket_path`` until SIGTERM, SIGINT, end-of-file on ``lifeline_fd``
    or a call past its time-out (then returns ``_timeouts.EXIT_TIMED_OUT``)."""
    server = _Server(_config(app, socket_path), banner, on_started)
    retired = threading.Event()

    def retire() -> None:
        # Stop listening and let the other calls in hand finish (bounded): the supervisor then
        # starts a fresh worker, while the timed-out call's code dies with this process.
        if retired.is_set():
            return
        retired.set()
        if on_retiring is not None:
            try:
                on_retiring()
            except OSError:  # the supervisor is gone: the lifeline ends this worker anyway
                pass
        server.should_exit = True
        timer = threading.Timer(HARD_EXIT_AFTER, os._exit, args=(_timeouts.EXIT_TIMED_OUT,))
        timer.daemon = True
        timer.start()

    _timeouts.install(retire, index)

    def gone() -> None:
        # Act first: the other end is usually gone with its pipes, and a failing
        # print must not stop the shutdown.
        server.should_exit = True
        timer = threading.Timer(HARD_EXIT_AFTER, os._exit, args=(1,))
        timer.daemon = True
        timer.start()
        try:
            print(f"svc runtime: {gone_message}; shutting down", file=sys.stderr, flush=True)
        except OSError:
            pass

    if lifeline_fd is not None:
        _lifeline.watch(lifeline_fd, gone)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal
    # with the previous handler: make that a clean exit instead of a kill.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_quietly)
    try:
        server.run()
    finally:
        if server.started and isinstance(socket_path, str) and os.path.exists(socket_path):
            os.unlink(socket_path)
    if retired.is_set():
        return _timeouts.EXIT_TIMED_OUT
    return 0 if server.started else 1
