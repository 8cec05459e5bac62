"""Kept-alive connections (``svc._client._connections``): a request sent with ``reuse=True`` after one that
finished goes on the same connection, and never on one that cannot carry it (the server closed it or
said it would, it rested too long, its last answer was not read as far as its caller needed)."""

from __future__ import annotations

import http.client
import http.server
import io
import socket
import threading
from collections.abc import Iterator

import pytest
from helpers import serve_http
from svc._client import _connections, _http
from svc._client._http import open_url


class _Server(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections open unless told otherwise
    ports: list[int] = []
    close_after = False
    say_close = False
    closed = threading.Event()
    numbering = threading.Lock()  # calls from several threads each get their own number

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with _Server.numbering:
            _Server.ports.append(self.client_address[1])
            number = len(_Server.ports)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        if _Server.say_close:
            self.send_header("Connection", "close")
        self.end_headers()
        for line in (b'{"type":"log"}\n', f'{{"type":"result","n":{number}}}\n'.encode()):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        if _Server.close_after:  # as a server closing an idle connection: no word in the answer
            self.close_connection = True
            # The FIN goes out now, not when the server's thread gets round to closing the socket.
            self.connection.shutdown(socket.SHUT_WR)
            _Server.closed.set()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture()
def url() -> Iterator[str]:
    _Server.ports, _Server.close_after, _Server.say_close = [], False, False
    _Server.closed.clear()
    with serve_http(_Server) as server:
        yield f"{server}/runs/run-1/calls"
    _connections._kept.clear()


def call(url: str, *, finish: bool = True) -> bytes:
    """One call read up to its last frame, as ``.remote()`` reads it (the end of the body left unread)."""
    with open_url("POST", url, body=b"call", reuse=True) as stream:
        assert stream.readline() == b'{"type":"log"}\n'
        last = stream.readline()
        if finish:
            stream.finish()
        return last


def test_a_call_after_a_finished_one_goes_on_the_same_connection(url: str) -> None:
    assert [call(url) for _ in range(3)] == [b'{"type":"result","n":%d}\n' % n for n in (1, 2, 3)]
    assert len(set(_Server.ports)) == 1


def test_a_connection_whose_answer_was_not_finished_is_not_used_again(url: str) -> None:
    call(url, finish=False)
    call(url)
    assert len(set(_Server.ports)) == 2


def test_a_connection_the_server_closed_is_not_sent_a_request(url: str) -> None:
    _Server.close_after = True
    call(url)
    assert _Server.closed.wait(5), "the server closed its side"
    call(url)  # on a stale connection this would fail: the server is gone from it
    assert len(set(_Server.ports)) == 2


def test_a_connection_the_server_said_it_closes_is_not_used_again(url: str) -> None:
    _Server.say_close = True
    call(url)
    call(url)
    assert len(set(_Server.ports)) == 2


def test_a_connection_idle_too_long_is_closed_instead(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_connections, "MAX_IDLE", 0.0)
    call(url)
    call(url)
    assert len(set(_Server.ports)) == 2


def test_requests_without_reuse_each_open_their_own(url: str) -> None:
    for _ in range(2):
        with open_url("POST", url, body=b"call") as stream:
            stream.read()
            stream.finish()
    assert len(set(_Server.ports)) == 2


def test_calls_from_threads_at_once_each_get_a_connection(url: str) -> None:
    call(url)
    answers: list[bytes] = []
    threads = [threading.Thread(target=lambda: answers.append(call(url))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(answers) == sorted(b'{"type":"result","n":%d}\n' % n for n in (2, 3, 4))


class _CountingSocket:
    """A connected socket that records what each ``sendall`` wrote."""

    def __init__(self, sock: socket.socket, writes: list[bytes]) -> None:
        self._sock = sock
        self._writes = writes

    def sendall(self, data: bytes) -> None:
        self._writes.append(bytes(data))
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._sock, name)


@pytest.fixture()
def writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Each write the client's new connections make."""
    written: list[bytes] = []
    real = _http._connect

    def counting(origin: _connections.Origin) -> http.client.HTTPConnection:
        connection = real(origin)
        connection.sock = _CountingSocket(connection.sock, written)  # type: ignore[assignment]
        return connection

    monkeypatch.setattr(_http, "_connect", counting)
    return written


def test_a_call_goes_out_in_one_write_head_and_body(url: str, writes: list[bytes]) -> None:
    call(url)
    call(url)
    assert len(writes) == 2, "one write per call"
    for write in writes:
        assert write.startswith(b"POST /runs/run-1/calls HTTP/1.1\r\n") and write.endswith(b"\r\n\r\ncall")


def test_a_body_read_from_a_file_is_sent_after_the_head(url: str, writes: list[bytes]) -> None:
    with open_url("POST", url, body=io.BytesIO(b"call"), headers={"Content-Length": "4"}) as stream:
        stream.read()
    assert writes[0].endswith(b"\r\n\r\n") and writes[1:] == [b"call"]
