"""Serving an ASGI app on a Unix socket (or a TCP ``(host, port)``) with uvicorn: the only module that imports uvicorn.

Runs in a worker process, after the fork: uvicorn's event loop starts here and
never in the supervisor or the template, which must stay free to fork.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn  # pyright: ignore[reportMissingModuleSource] # only in images; typings/ has its stub

from . import _lifeline, _timeouts

HARD_EXIT_AFTER = 5.0
"""Seconds a shutdown asked for by the lifeline may take before the process is ended."""


TICK = 0.1
"""Seconds between uvicorn's housekeeping ticks (its date header, its request limit), as uvicorn's own loop."""

DRAIN_POLL = 0.005
"""Seconds between looks at the connections and tasks still open while draining."""


class _Server(uvicorn.Server):
    """uvicorn's server, announcing on stderr (and to the supervisor) once the socket accepts connections.

    It also stops as soon as it is asked to: uvicorn looks at ``should_exit`` only every 0.1 s
    and sleeps 0.1 s more before it looks at the connections left, so a stop (a redeploy
    retiring the old version, a scale-down) waited ~0.2 s for nothing. Here setting
    ``should_exit`` wakes the main loop, and draining looks every few milliseconds.
    """

    def __init__(self, config: uvicorn.Config, banner: str, on_started: Callable[[], None] | None) -> None:
        self._exit_wanted = False
        self._wake: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        super().__init__(config)
        self._banner = banner
        self._on_started = on_started

    @property
    def should_exit(self) -> bool:  # a flag that also wakes the loop
        return self._exit_wanted

    @should_exit.setter
    def should_exit(self, value: bool) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        # Set by uvicorn's signal handler, by the lifeline's and the time-outs' threads: wake the loop from any of them.
        self._exit_wanted = value
        if value and self._wake is not None:
            loop, event = self._wake
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is closed: nothing waits any more
                pass

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self._banner, file=sys.stderr, flush=True)
            if self._on_started is not None:
                self._on_started()

    # main_loop and shutdown follow uvicorn 0.54's own (Server.main_loop, Server.shutdown) and read its
    # server_state, force_exit and lifespan (requirements.txt asks for uvicorn>=0.30): check them against a newer uvicorn's.
    async def main_loop(self) -> None:
        event = asyncio.Event()
        self._wake = (asyncio.get_running_loop(), event)
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            try:
                await asyncio.wait_for(event.wait(), TICK)
            except asyncio.TimeoutError:
                pass

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        # Idle keep-alive connections close now; busy ones once their response is sent.
        for connection in list(state.connections):
            connection.shutdown()
        limit = self.config.timeout_graceful_shutdown
        deadline = None if limit is None else time.monotonic() + limit
        while (state.connections or state.tasks) and not self.force_exit:
            if deadline is not None and time.monotonic() >= deadline:
                for task in state.tasks:
                    task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
                break
            await asyncio.sleep(DRAIN_POLL)
        if not self.force_exit:
            await self.lifespan.shutdown()


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _config(app: Any, socket_path: Any) -> uvicorn.Config:
    # A str is a Unix socket's path; anything else a TCP (host, port), bound with SO_REUSEADDR
    # (asyncio's default) so that a restarted worker listens on its port again at once.
    where: dict[str, Any] = (
        {"uds": socket_path} if isinstance(socket_path, str) else {"host": socket_path[0], "port": socket_path[1]}
    )
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
        # The gateway's X-Forwarded-For/-Proto are read by the asgi kind itself, in the pass it makes over the
        # headers anyway (_forwarded.py); the other kinds never read the client or scheme.
        proxy_headers=False,
    )


def preload() -> None:
    """Imports what uvicorn loads lazily (protocols, loop, logging set-up) before the workers are forked.

    Each worker would otherwise pay ~50 ms for it after the fork; the socket is not bound here.
    The event loop's module too: uvicorn imports it only when a worker's server runs.
    """
    _config(_no_app, os.devnull).load()
    if _available("uvloop"):
        importlib.import_module("uvloop")


def _no_app(scope: Any, receive: Any, send: Any) -> None:
    """Stands in for the app while ``preload`` loads uvicorn's modules: never called."""


def serve(
    app: Any,
    socket_path: Any,
    *,
    banner: str,
    lifeline_fd: int | None,
    gone_message: str,
    on_started: Callable[[], None] | None = None,
    on_retiring: Callable[[], None] | None = None,
    index: int = 0,
) -> int:
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

    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then raises the signal again with the
    # handler it found: this one, which only asks the server to stop (done by then), so that the
    # worker exits cleanly instead of by the signal. The same when a second SIGTERM (the group's,
    # then the supervisor's) lands while asyncio winds down, where an exception would cut its
    # clean-up short.
    def stop_serving(signum: int, frame: Any) -> None:
        server.should_exit = True

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop_serving)
    try:
        server.run()
    finally:
        if server.started and isinstance(socket_path, str) and os.path.exists(socket_path):
            os.unlink(socket_path)
    if retired.is_set():
        return _timeouts.EXIT_TIMED_OUT
    return 0 if server.started else 1
