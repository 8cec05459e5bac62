# What svc uses of uvicorn (see ../README.md); signatures as in uvicorn 0.30 and later, the
# keyword arguments svc passes and no others.
import socket
from typing import Any, Callable, Literal

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
    def load(self) -> None: ...

class Server:
    config: Config
    started: bool
    should_exit: bool
    def __init__(self, config: Config) -> None: ...
    def run(self, sockets: list[socket.socket] | None = None) -> None: ...
    async def startup(self, sockets: list[socket.socket] | None = None) -> None: ...
