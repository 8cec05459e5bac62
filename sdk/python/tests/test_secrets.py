"""svc.Secret and secrets=: checked at the decorator line, names only in the manifest, from_dict beside it."""

from __future__ import annotations

import os

import pytest
import svc
from svc.manifest import build_manifest


def test_from_name_checks_the_name_rule():
    assert svc.Secret.from_name("db").name == "db"
    with pytest.raises(svc.InvalidOptionError, match=r"svc.Secret.from_name: name='Bad_Name'"):
        svc.Secret.from_name("Bad_Name")


def test_from_dict_checks_keys_and_values_without_showing_a_value():
    secret = svc.Secret.from_dict({"API_KEY": "hush-1", "UNSET": None})
    assert secret.name is None and secret.keys == ("API_KEY",)
    assert "hush-1" not in repr(secret) and "API_KEY" in repr(secret)
    for values, pattern in [
        ({"1X": "hush-2"}, "not an environment variable name"),
        ({"SVC_APP": "hush-2"}, "svc sets"),
        ({"A": 5}, "value of A is a int"),
        ({"A": "a\0b"}, "NUL"),
    ]:
        with pytest.raises(svc.InvalidOptionError, match=pattern) as caught:
            svc.Secret.from_dict(values)
        assert "hush-2" not in str(caught.value)


def test_secrets_option_takes_a_list_of_secrets_on_every_kind(app):
    db = svc.Secret.from_name("db")

    @app.function(secrets=[db])
    def f() -> None: ...

    @app.endpoint(secrets=[db])
    def e() -> None: ...

    @app.realtime(secrets=[db])
    def r(message: str) -> str: ...

    async def web(scope, receive, send): ...

    app.asgi(name="web", secrets=[db])(web)
    assert [w.secrets for w in app.workloads] == [(db,)] * 4


@pytest.mark.parametrize(
    "value,pattern",
    [
        ("db", r"not one name: write \[svc.Secret.from_name\('db'\)\]"),
        (["db"], r"holds the string 'db': write svc.Secret.from_name\('db'\)"),
        ([svc.Secret.from_name("db"), svc.Secret.from_name("db")], "names the secret 'db' twice"),
        ({"db": 1}, "not a list"),
    ],
)
def test_bad_secrets_option(app, value, pattern):
    with pytest.raises(svc.InvalidOptionError, match=pattern) as caught:
        app.endpoint(secrets=value)
    assert caught.value.option == "secrets"


def test_manifest_names_secrets_and_keeps_inline_values_apart(app):
    inline = svc.Secret.from_dict({"TOKEN": "hush-3"})

    @app.endpoint(secrets=[svc.Secret.from_name("db"), inline])
    def a() -> None: ...

    @app.function(secrets=[inline, svc.Secret.from_dict({"OTHER": "x"})])
    def b() -> None: ...

    @app.function
    def c() -> None: ...

    manifest = build_manifest(app, "app")
    assert [w.get("secrets") for w in manifest["workloads"]] == [["db", "@0"], ["@0", "@1"], None]
    assert "secrets" not in manifest["workloads"][2], "left out without any: older manifests stay the same"
    assert manifest["inline_secrets"] == [{"TOKEN": "hush-3"}, {"OTHER": "x"}]
    assert "hush-3" not in str(manifest["workloads"])


def test_local_sets_from_dict_values_for_the_call_only(app, monkeypatch):
    monkeypatch.setenv("KEPT", "before")
    monkeypatch.delenv("ADDED", raising=False)

    @app.function(secrets=[svc.Secret.from_dict({"KEPT": "during", "ADDED": "yes"}), svc.Secret.from_name("db")])
    def read() -> tuple[str | None, str | None]:
        return os.environ.get("KEPT"), os.environ.get("ADDED")

    assert read.local() == ("during", "yes")
    assert (os.environ.get("KEPT"), os.environ.get("ADDED")) == ("before", None)
