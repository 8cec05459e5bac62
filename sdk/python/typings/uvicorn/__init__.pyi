# What svc uses of uvicorn (see ../README.md); signatures as in uvicorn 0.30 and later, the
# keyword arguments svc passes and no others.
import asyncio
import socket
from collections.abc import Callable
from typing import Any, Literal, Protocol

class Config:
    def __init__(
        self,
        app: Callable[..., Any] | str,
        host: str = "127.0.0.1",
        port: int = 8000,
        uds: str | None = None,
        *,
        loop: str = "auto",
        http: str = "auto",
        lifespan: Literal["auto", "on", "off"] = "auto",
        log_level: str | int | None = None,
        access_log: bool = True,
        proxy_headers: bool = True,
        server_header: bool = True,
        date_header: bool = True,
        forwarded_allow_ips: list[str] | str | None = None,
    ) -> None: ...
    timeout_graceful_shutdown: int | None
    def load(self) -> None: ...

class _Connection(Protocol):
    def shutdown(self) -> None: ...

class ServerState:
    connections: set[_Connection]
    tasks: set[asyncio.Task[None]]

class _Lifespan(Protocol):
    async def shutdown(self) -> None: ...

class Server:
    config: Config
    started: bool
    should_exit: bool
    force_exit: bool
    servers: list[asyncio.base_events.Server]
    server_state: ServerState
    lifespan: _Lifespan
    def __init__(self, config: Config) -> None: ...
    def run(self, sockets: list[socket.socket] | None = None) -> None: ...
    async def startup(self, sockets: list[socket.socket] | None = None) -> None: ...
    async def main_loop(self) -> None: ...
    async def on_tick(self, counter: int) -> bool: ...
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None: ...
