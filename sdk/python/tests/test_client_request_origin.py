"""``<endpoint>.request()`` sends the saved token only to the server it belongs to, even when the server's
app view names another origin for the workload (``--host 0.0.0.0`` printed as 127.0.0.1, a public URL):
the workload's path is called on the token's own server (docs/cli.md, "Which server, which token").
"""

from __future__ import annotations

import http.server
import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import serve_http

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402

MODULE = "review_origin_app"
SOURCE = """
import svc

app = svc.App("review-origin")


@app.endpoint(route="/hi", methods=["POST"])
def hi(name: str) -> dict:
    return {"hi": name}
"""


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        _Recorder.seen.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
        body = b'{"hi": "recorder"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture()
def recorder():
    _Recorder.seen.clear()
    with serve_http(_Recorder) as url:
        yield url


@pytest.fixture()
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / f"{MODULE}.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    sys.modules.pop(MODULE, None)


def test_request_sends_the_saved_token_only_to_the_server_it_belongs_to(recorder, project, tmp_path, monkeypatch):
    port = client_harness.free_port()
    server = client_harness.start_server(port=port, env={"SVC_PUBLIC_URL": recorder})
    server.url = f"http://127.0.0.1:{port}"  # where it listens (it prints its publicUrl)
    try:
        view = server.deploy(project)
        assert any(d["urls"]["path"].startswith(recorder) for d in view["deployments"]), view
        # Signed in the way `svc login` leaves it: a credentials file naming the server and its token.
        config = tmp_path / "config"
        config.mkdir(mode=0o700)
        (config / "credentials.json").write_text(
            json.dumps(
                {
                    "version": 1,
                    "server": server.url,
                    "token": server.token,
                    "workspace": "default",
                    "savedAt": "2030-01-01T00:00:00Z",
                }
            )
        )
        (config / "credentials.json").chmod(0o600)
        for name in ("SVC_SERVER", "SVC_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("SVC_CONFIG_DIR", str(config))
        monkeypatch.setenv("SVC_DATA_DIR", str(tmp_path / "no-data"))

        module = importlib.import_module(MODULE)
        response = module.hi.request(name="Ada")
    finally:
        server.stop()
        server.remove_files()
    leaked = [seen for seen in _Recorder.seen if server.token in seen["authorization"]]
    assert leaked == [], (
        f"the token of {server.url} went to {recorder} (status {response.status_code}, "
        f"body {response.text!r}): {leaked}"
    )
