"""The Python client rides through a change of leader among svc replicas: an API answer 503 ``not_leader``
(nothing was done) is sent again after its Retry-After, body and all, within ``LEADER_WAIT``; another
503 is raised at once (docs/operators.md, "Leader and followers")."""

from __future__ import annotations

import http.server
import io
import json

import pytest
from helpers import serve_http
from svc import exceptions as ex
from svc._client import _http
from svc._client._credentials import Credentials

NOT_LEADER = json.dumps({"error": {"code": "not_leader", "message": "this svc replica is a standby."}}).encode()
STARTING = json.dumps({"error": {"code": "starting", "message": "still starting."}}).encode()


class _Replicas(http.server.BaseHTTPRequestHandler):
    answers: list[tuple[int, bytes]] = []
    seen: list[bytes] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        _Replicas.seen.append(self.rfile.read(length))
        status, body = _Replicas.answers.pop(0) if _Replicas.answers else (500, b"{}")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture()
def api():
    _Replicas.answers, _Replicas.seen = [], []
    with serve_http(_Replicas) as server:
        yield _http.Api(Credentials(server=server, token="t", server_from="test", token_from="test"))


def test_sends_again_until_a_leader_answers(api: _http.Api) -> None:
    _Replicas.answers = [(503, NOT_LEADER), (201, b'{"ok": true}')]
    answer = api.request("POST", "/runs", json_body={"a": 1})
    assert answer.status == 201
    assert _Replicas.seen == [b'{"a": 1}', b'{"a": 1}']


def test_sends_an_upload_again_from_its_start(api: _http.Api) -> None:
    _Replicas.answers = [(503, NOT_LEADER), (201, b'{"ok": true}')]
    upload = io.BytesIO(b"bundle-bytes")
    api.request("POST", "/bundles", body=upload, headers={"Content-Length": "12"})
    assert _Replicas.seen == [b"bundle-bytes", b"bundle-bytes"]


def test_gives_up_after_leader_wait_and_never_retries_another_503(
    api: _http.Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_http, "LEADER_WAIT", 1.5)
    _Replicas.answers = [(503, NOT_LEADER)] * 3
    with pytest.raises(ex.RemoteError) as raised:
        api.request("POST", "/runs", json_body={})
    assert raised.value.code == "not_leader"
    assert len(_Replicas.seen) == 2

    _Replicas.answers, _Replicas.seen = [(503, STARTING)], []
    with pytest.raises(ex.RemoteError) as raised:
        api.request("POST", "/runs", json_body={})
    assert raised.value.code == "starting"
    assert len(_Replicas.seen) == 1


class _OneWay(io.RawIOBase):
    """A stream that cannot go back (a pipe): its bytes cannot be sent twice."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        size = min(len(buffer), len(self._data))
        buffer[:size], self._data = self._data[:size], self._data[size:]
        return size


def test_does_not_send_again_a_body_it_cannot_rewind(api: _http.Api) -> None:
    _Replicas.answers = [(503, NOT_LEADER), (201, b'{"ok": true}')]
    with pytest.raises(ex.RemoteError) as raised:
        api.request("POST", "/bundles", body=_OneWay(b"bundle-bytes"), headers={"Content-Length": "12"})
    assert raised.value.code == "not_leader"
    assert _Replicas.seen == [b"bundle-bytes"]
