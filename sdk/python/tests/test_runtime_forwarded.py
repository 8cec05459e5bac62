"""What an ``asgi`` workload learns from the gateway's ``x-forwarded-*`` headers: the URL prefix it is
mounted under, the client's address and the scheme (``_forwarded.py``), and what its app then sees."""

from __future__ import annotations

import json

import pytest
from helpers import call_asgi
from runtime_helpers import serve
from svc.runtime._forwarded import read_forwarded


def scope(*headers: tuple[bytes, bytes], kind: str = "http") -> dict[str, object]:
    return {"type": kind, "headers": [(b"host", b"svc"), *headers]}


@pytest.mark.parametrize(
    "headers, prefix",
    [
        ([(b"x-forwarded-prefix", b"/default/app/web")], "/default/app/web"),
        ([(b"X-Forwarded-Prefix", b"/default/app/web/")], "/default/app/web"),
        ([], ""),
        ([(b"x-forwarded-prefix", b"")], ""),
        ([(b"x-forwarded-prefix", b"/a b")], ""),
        ([(b"x-forwarded-prefix", b"relative/path")], ""),
        ([(b"x-forwarded-prefix", b"/default/app/web"), (b"x-forwarded-prefix", b"/other")], ""),
        ([(b"x-forwarded-prefixes", b"/default/app/web")], ""),
    ],
)
def test_reads_one_well_formed_prefix_and_ignores_anything_else(headers, prefix):
    assert read_forwarded(scope(*headers))[0] == prefix
    assert read_forwarded(scope(*headers))[0] == prefix, "the same answer from the remembered verdict"


@pytest.mark.parametrize(
    "values, client",
    [
        ([b"203.0.113.7"], ("203.0.113.7", 0)),
        ([b"203.0.113.7:5123"], ("203.0.113.7", 5123)),
        ([b"2001:db8::1"], ("2001:db8::1", 0)),
        ([b"[2001:db8::1]:443"], ("2001:db8::1", 443)),
        ([b"::ffff:127.0.0.1"], ("::ffff:127.0.0.1", 0)),
        # Behind a trusted proxy the gateway sends the chain: its first entry is the client.
        ([b"198.51.100.2, 10.0.0.5"], ("198.51.100.2", 0)),
        ([b" 198.51.100.2 ", b"10.0.0.5"], ("198.51.100.2", 0)),
        ([b"host:notaport"], ("host", 0)),
        ([b""], None),
        ([], None),
    ],
)
def test_the_client_is_the_first_address_of_x_forwarded_for(values, client):
    headers = [(b"x-forwarded-for", value) for value in values]
    assert read_forwarded(scope(*headers))[1] == client
    assert read_forwarded(scope(*headers))[1] == client, "the same answer from the remembered verdict"


@pytest.mark.parametrize(
    "value, kind, scheme",
    [
        (b"https", "http", "https"),
        (b"http", "http", "http"),
        (b" HTTPS ", "http", "https"),
        (b"https", "websocket", "wss"),
        (b"http", "websocket", "ws"),
        (b"wss", "websocket", "wss"),
        (b"gopher", "http", None),
    ],
)
def test_the_scheme_comes_from_x_forwarded_proto(value, kind, scheme):
    assert read_forwarded(scope((b"x-forwarded-proto", value), kind=kind))[2] == scheme


def echo_origin():
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await receive()
        body = json.dumps({"client": scope["client"], "scheme": scope["scheme"]}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    return app


def test_the_app_sees_the_client_and_scheme_the_gateway_saw():
    headers = [
        ("X-Forwarded-For", "203.0.113.7"),
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Prefix", "/default/shop/web"),
    ]
    answer = call_asgi(serve("asgi", echo_origin()), "GET", "/", headers=headers).json()
    assert answer == {"client": ["203.0.113.7", 0], "scheme": "https"}


def test_without_the_headers_the_app_sees_what_the_server_saw():
    answer = call_asgi(serve("asgi", echo_origin()), "GET", "/").json()
    assert answer == {"client": None, "scheme": "http"}
