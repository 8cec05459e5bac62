"""``<endpoint>.request(...)`` and ``<asgi>.request(...)`` against a real `svc server`: the deployment,
a preview preferred over it, ``target=`` forcing one, query and JSON arguments, typed errors."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import svc

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402

ghost = svc.App("client-ghost")


@ghost.endpoint(route="/boo", methods=["GET"])
def boo() -> str:
    """An endpoint of an app that is never deployed."""
    return "boo"


@pytest.fixture(scope="module")
def client_app(server):
    sys.path.insert(0, str(client_harness.PROJECT))
    module = importlib.import_module("client_app")
    server.deploy(client_harness.PROJECT)
    yield module
    sys.path.remove(str(client_harness.PROJECT))
    server.api("DELETE", "/apps/client-test")


def test_an_endpoint_answers_from_its_deployment(client_app):
    response = client_app.add.request(a=1)
    assert response.status_code == 200 and response.ok
    assert response.json() == {"sum": 3, "stage": "deployed"}
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.text == '{"sum":3,"stage":"deployed"}'


def test_get_arguments_go_in_the_query_string(client_app):
    # Positional arguments bind to the function's parameters; a list is the key repeated.
    assert client_app.add.request(5, b=10, extra=[1, 2]).json()["sum"] == 18
    assert "?a=5&b=10&extra=1&extra=2" in client_app.add.request(5, b=10, extra=[1, 2]).url


def test_post_arguments_go_as_the_json_body(client_app):
    assert client_app.echo.request("hi", count=2).json() == {"echo": ["hi", "hi"], "stage": "deployed"}


def test_a_preview_is_preferred_and_target_deployed_forces_the_deployment(server, client_app):
    server.deploy(client_harness.PROJECT, preview=True)
    try:
        assert client_app.add.request(a=1).json()["stage"] == "preview"
        assert "/client-test--preview/add/add" in client_app.add.request(a=1).url
        assert client_app.add.request(a=1, target="deployed").json()["stage"] == "deployed"
        assert client_app.echo.request("x", target="preview").json()["stage"] == "preview"
    finally:
        assert server.api("DELETE", "/apps/client-test/preview")[0] == 204
    assert client_app.add.request(a=1).json()["stage"] == "deployed"
    with pytest.raises(svc.NotFoundError, match="no preview of client-test"):
        client_app.add.request(a=1, target="preview")
    with pytest.raises(ValueError, match="target='staging'"):
        client_app.add.request(a=1, target="staging")


def test_an_error_answer_is_returned_and_raise_for_status_raises_its_typed_error(client_app):
    response = client_app.add.request(a="three")
    assert (response.status_code, response.ok) == (422, False)
    assert response.json()["error"]["code"] == "invalid_arguments"
    with pytest.raises(svc.InvalidRequestError) as caught:
        response.raise_for_status()
    assert (caught.value.code, caught.value.status) == ("invalid_arguments", 422)
    assert caught.value.message == "query parameter 'a' must be an integer, got 'three'"


def test_wrong_arguments_fail_here_like_a_call(client_app):
    with pytest.raises(TypeError):
        client_app.add.request(1, 2, [3], 4)


def test_an_app_neither_previewed_nor_deployed_is_not_found(server):
    with pytest.raises(svc.NotFoundError) as caught:
        boo.request()
    assert caught.value.message == f"the app client-ghost is neither previewed nor deployed on {server.url}"


def test_a_bad_token_is_unauthorized_and_no_token_is_not_signed_in(client_app, monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_TOKEN", "svc_" + "y" * 40)
    with pytest.raises(svc.UnauthorizedError) as caught:
        client_app.add.request(a=1)
    assert caught.value.code == "unauthorized" and not isinstance(caught.value, svc.NotSignedInError)
    monkeypatch.delenv("SVC_TOKEN")
    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("SVC_DATA_DIR", str(tmp_path))
    with pytest.raises(svc.NotSignedInError) as signed_out:
        client_app.add.request(a=1)
    assert signed_out.value.code == "not_signed_in"


def test_an_asgi_app_takes_method_path_params_json_and_headers(server):
    pytest.importorskip("fastapi")
    sys.path.insert(0, str(client_harness.WEB_PROJECT))
    try:
        client_web = importlib.import_module("client_web")
    finally:
        sys.path.remove(str(client_harness.WEB_PROJECT))
    server.deploy(client_harness.WEB_PROJECT)
    try:
        got = client_web.web.request("GET", "/items/3", params={"q": "pens"})
        assert got.status_code == 200
        assert got.json() == {"item_id": 3, "q": "pens", "authorization": "Bearer svc_"}
        created = client_web.web.request("POST", "items", json={"name": "pen"}, headers={"Authorization": "none"})
        assert created.json() == {"created": {"name": "pen"}}
        missing = client_web.web.request("GET", "/nowhere", target="deployed")
        assert missing.status_code == 404
        with pytest.raises(svc.NotFoundError):
            missing.raise_for_status()
    finally:
        server.api("DELETE", "/apps/client-web")
