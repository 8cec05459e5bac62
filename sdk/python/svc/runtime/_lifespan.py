"""The ASGI lifespan protocol: acknowledged for svc's own kinds, driven for a user's ASGI app.

``acknowledge`` answers a server's lifespan messages for the kinds that have no
start-up of their own (``on_start`` runs before the app is created).
``AppLifespan`` runs the lifespan of a user's ASGI application (FastAPI's
``lifespan=``/``on_event("startup")``, Starlette's ``on_startup``) exactly once,
whoever asks first: the server's lifespan messages, an explicit ``startup()``, or
the first request.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from .._tracebacks import format_user_traceback
from ._requests import Receive
from ._responses import Send


async def acknowledge(receive: Receive, send: Send, on_shutdown: Callable[[], Any] | None = None) -> None:
    """Completes startup at once, and shutdown once ``on_shutdown`` (a class's ``@svc.exit()`` method) ran.

    ``on_shutdown`` runs in a thread when it is a plain function (it may block), on the loop when it is
    ``async``; its exception is printed with its traceback and the shutdown completes all the same.
    """
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if on_shutdown is not None:
                await _run_shutdown(on_shutdown)
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _run_shutdown(on_shutdown: Callable[[], Any]) -> None:
    try:
        if asyncio.iscoroutinefunction(on_shutdown):
            await on_shutdown()
        else:
            result = await asyncio.to_thread(on_shutdown)
            if asyncio.iscoroutine(result):
                await result
    except (Exception, SystemExit) as error:
        sys.stderr.write(format_user_traceback(error))
        name = getattr(on_shutdown, "__qualname__", "the exit method")
        print(f"svc runtime: @svc.exit() {name} failed (traceback above)", file=sys.stderr, flush=True)


class LifespanFailed(Exception):
    """The user's application reported ``lifespan.startup.failed`` or ``lifespan.shutdown.failed``."""


class AppLifespan:
    """Runs one ASGI application's lifespan: ``startup()`` once, ``shutdown()`` once.

    An application that raises on the lifespan scope before answering, or returns
    without answering, does not support the protocol (ASGI says to carry on without
    it): both calls then do nothing. ``state`` is the lifespan state the application
    filled in; the caller copies it into each request's scope.
    """

    def __init__(self, app: Callable[..., Any], name: str) -> None:
        self._app = app
        self._name = name
        self.state: dict[str, Any] = {}
        self._startup: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[dict[str, Any]] | None = None
        self._outbox: asyncio.Queue[dict[str, Any]] | None = None
        self._supported = True
        self._answered = False  # the application sent a lifespan message
        self._failed = False  # ... and one of them said "failed"
        self._shut_down = False

    @property
    def ready(self) -> bool:
        """True once the startup has run and succeeded (what every request asks first)."""
        startup = self._startup
        return startup is not None and startup.done() and not startup.cancelled() and startup.exception() is None

    async def startup(self) -> None:
        """Runs the application's startup, or waits for the run already under way.

        Raises LifespanFailed, with the application's message, when it failed; every
        later call raises the same.
        """
        if self._startup is None:
            self._startup = asyncio.ensure_future(self._run_startup())
        elif self._startup.done():
            # Every request asks: once it is over, answer without a shield (a future and callbacks each time).
            self._startup.result()
            return
        await asyncio.shield(self._startup)

    async def shutdown(self) -> None:
        """Runs the application's shutdown once; nothing when startup never succeeded."""
        if self._shut_down or self._task is None or not self._supported or self._task.done():
            return
        self._shut_down = True
        assert self._inbox is not None
        await self._inbox.put({"type": "lifespan.shutdown"})
        reply = await self._reply()
        if reply is not None and reply["type"] == "lifespan.shutdown.failed":
            raise LifespanFailed(reply.get("message") or f"{self._name}: the ASGI app's shutdown failed")
        await asyncio.wait({self._task}, timeout=5)

    async def _run_startup(self) -> None:
        self._inbox, self._outbox = asyncio.Queue(), asyncio.Queue()
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        self._task = asyncio.ensure_future(self._run(scope))
        await self._inbox.put({"type": "lifespan.startup"})
        reply = await self._reply()
        if reply is None:
            self._supported = False
        elif reply["type"] == "lifespan.startup.failed":
            raise LifespanFailed(reply.get("message") or f"{self._name}: the ASGI app's startup failed")

    async def _run(self, scope: dict[str, Any]) -> None:
        assert self._inbox is not None and self._outbox is not None
        try:
            await self._app(scope, self._inbox.get, self._send)
        except Exception as exc:
            if not self._answered:
                print(
                    f"svc runtime: {self._name} does not support the ASGI lifespan protocol "
                    f"({type(exc).__name__} on the lifespan scope); serving it without startup and shutdown",
                    file=sys.stderr,
                    flush=True,
                )
            elif not self._failed:  # after a "failed" message, that message (with its traceback) says it all
                print(
                    f"svc runtime: {self._name}'s lifespan raised:\n" + format_user_traceback(exc),
                    file=sys.stderr,
                    end="",
                    flush=True,
                )

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._outbox is not None
        self._answered = True
        self._failed = self._failed or message["type"].endswith(".failed")
        await self._outbox.put(message)

    async def _reply(self) -> dict[str, Any] | None:
        """The application's next lifespan message; None when it returned (or raised) instead."""
        assert self._outbox is not None and self._task is not None
        get = asyncio.ensure_future(self._outbox.get())
        await asyncio.wait({get, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not get.done():
            get.cancel()
            await asyncio.wait({get})
            return None if self._outbox.empty() else self._outbox.get_nowait()  # sent just before it returned
        return get.result()
