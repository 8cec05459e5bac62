"""svc.Cors: checked when made, on endpoints, realtime handlers and @svc.endpoint methods, written to the manifest."""

from __future__ import annotations

import pytest
import svc
from svc.manifest import build_manifest


def test_the_manifest_writes_cors_on_endpoints_and_realtime_handlers(app):
    @app.endpoint(cors=svc.Cors(origins=["https://app.example.com"], methods=["get"], headers=["X-Api-Key"]))
    def e() -> None: ...

    @app.realtime(cors=svc.Cors(origins=["*"], max_age=0))
    def r(message: str) -> str:
        return message

    @app.endpoint
    def plain() -> None: ...

    options = {w["name"]: w["options"]["cors"] for w in build_manifest(app, "app")["workloads"]}
    assert options == {
        "e": {
            "origins": ["https://app.example.com"],
            "methods": ["GET"],
            "headers": ["x-api-key"],
            "credentials": False,
            "max_age": 600,
        },
        "r": {
            "origins": ["*"],
            "methods": None,
            "headers": ["authorization", "content-type"],
            "credentials": False,
            "max_age": 0,
        },
        "plain": None,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"origins": "https://a.example"}, r"origins='https://a.example' is a single string: pass a list"),
        ({"origins": []}, "must be a non-empty list of origins"),
        (
            {"origins": ["https://a.example/path"]},
            r"holds 'https://a.example/path', which is not an origin: .*'https://a.example'",
        ),
        ({"origins": ["https://A.example"]}, "which is not an origin"),
        ({"origins": ["ftp://a.example"]}, "is not an http or https origin"),
        ({"origins": ["*"], "credentials": True}, r"holds '\*' with credentials=True, which browsers refuse"),
        ({"origins": ["*"], "methods": ["FETCH"]}, "list distinct HTTP methods"),
        ({"origins": ["*"], "headers": ["bad header"]}, "is not a header name"),
        ({"origins": ["*"], "max_age": 86_401}, "max_age=86401 is out of range"),
        ({"origins": ["*"], "credentials": "yes"}, "credentials='yes'"),
    ],
)
def test_bad_cors_fails_where_it_is_made_naming_the_field(kwargs, message):
    with pytest.raises(svc.InvalidOptionError, match=message) as caught:
        svc.Cors(**kwargs)
    assert str(caught.value).startswith("svc.Cors: ")


def test_cors_is_an_option_of_endpoints_and_realtime_handlers_not_of_functions_or_asgi_apps(app):
    cors = svc.Cors(origins=["*"])
    with pytest.raises(svc.InvalidOptionError, match="cors=.* is not an option of @app.function"):
        app.function(cors=cors)
    with pytest.raises(svc.InvalidOptionError, match="cors=.* is not an option of app.asgi"):
        app.asgi(name="web", cors=cors)
    with pytest.raises(svc.InvalidOptionError, match="cors='https://a.example' is a str, not a svc.Cors"):
        app.endpoint(cors="https://a.example")


def test_a_class_endpoint_method_takes_cors(app):
    @app.cls()
    class Model:
        @svc.method()
        def predict(self, x: int) -> int:
            return x

        @svc.endpoint(cors=svc.Cors(origins=["https://app.example.com"]))
        def score(self, x: int) -> int:
            return x

    served = next(w for w in build_manifest(app, "app")["workloads"] if w["name"] == "model-score")
    assert served["options"]["cors"]["origins"] == ["https://app.example.com"]
