"""ASGI workloads, called directly: every route of the user's app, its WebSockets, root_path
from the gateway's prefix, lifespan, concurrency and on_start."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import call_asgi
from runtime_helpers import Session, http_call, run, serve

PREFIX = [("X-Forwarded-Prefix", "/default/shop/web")]


def make_app(log: list | None = None, fail_startup: bool = False):
    """A plain ASGI app: a few HTTP routes, a WebSocket echo route and a lifespan."""
    log = [] if log is None else log

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                log.append(message["type"])
                if message["type"] == "lifespan.startup":
                    if fail_startup:
                        await send({"type": "lifespan.startup.failed", "message": "no database"})
                        return
                    scope["state"]["db"] = "connected"
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        elif scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            while (message := await receive())["type"] == "websocket.receive":
                await send({"type": "websocket.send", "text": f"{scope['path']}: {message.get('text')}"})
        else:
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            route = scope["path"][len(scope["root_path"]) :]
            answer = {
                "route": route,
                "path": scope["path"],
                "root_path": scope["root_path"],
                "raw_path": scope["raw_path"].decode(),
                "method": scope["method"],
                "body": body.decode(),
                "url_for_item": f"{scope['root_path']}/items/1",
                "state": scope.get("state"),
            }
            status = 404 if route.startswith("/missing") else 200
            await send(
                {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": json.dumps(answer).encode()})

    return app


# HTTP


def test_health_is_answered_by_the_runtime_before_the_app():
    async def never(scope, receive, send):
        raise AssertionError("the app must not see the health check")

    reply = call_asgi(serve("asgi", never), "GET", "/_svc/health")
    assert (reply.status, reply.json()) == (200, {"status": "ok", "workload": "web"})


def test_every_route_and_method_reaches_the_app_as_it_answers_it():
    web = serve("asgi", make_app())
    reply = call_asgi(web, "POST", "/orders/7", body="hi")
    assert reply.status == 200
    assert (reply.json()["route"], reply.json()["method"], reply.json()["body"]) == ("/orders/7", "POST", "hi")
    assert call_asgi(web, "DELETE", "/missing/x").status == 404


def test_root_path_comes_from_the_gateways_prefix_header():
    answer = call_asgi(serve("asgi", make_app()), "GET", "/items/1", headers=PREFIX).json()
    assert answer["root_path"] == "/default/shop/web"
    assert answer["path"] == "/default/shop/web/items/1"  # as uvicorn --root-path does: path includes it
    assert answer["raw_path"] == "/default/shop/web/items/1"
    assert answer["route"] == "/items/1"
    assert answer["url_for_item"] == "/default/shop/web/items/1"


@pytest.mark.parametrize(
    "header,root_path",
    [
        (None, ""),
        ("/default/shop/web/", "/default/shop/web"),
        ("not-a-path", ""),
        ("/a b", ""),
        ("/", ""),
    ],
)
def test_without_a_usable_prefix_the_path_is_left_alone(header, root_path):
    headers = [] if header is None else [("X-Forwarded-Prefix", header)]
    answer = call_asgi(serve("asgi", make_app()), "GET", "/items/1", headers=headers).json()
    assert (answer["root_path"], answer["route"]) == (root_path, "/items/1")


def test_an_exception_in_the_app_is_500_handler_error_with_the_traceback_in_the_logs(capfd):
    async def broken(scope, receive, send):
        if scope["type"] == "http":
            raise KeyError("secret")

    reply = call_asgi(serve("asgi", broken), "GET", "/x")
    assert reply.status == 500
    assert reply.json() == {"error": {"code": "handler_error", "message": "KeyError in web; see the workload logs"}}
    err = capfd.readouterr().err
    assert "svc runtime: web failed on GET /x:" in err and "KeyError: 'secret'" in err


# WebSockets of the app


def test_the_apps_own_websocket_routes_work_with_the_prefix():
    async def scenario():
        session = Session(serve("asgi", make_app()), "/ws/chat", headers=PREFIX)
        await session.accepted()
        session.send("hello")
        reply = await session.reply()
        await session.close()
        return reply

    assert run(scenario()) == "/default/shop/web/ws/chat: hello"


# Lifespan


def test_lifespan_startup_runs_once_before_the_first_request_when_the_server_does_not_run_it():
    log: list[str] = []

    async def scenario():
        web = serve("asgi", make_app(log))
        first = await http_call(web, path="/a")
        second = await http_call(web, path="/b")
        return first, second

    first, second = run(scenario())
    assert log == ["lifespan.startup"]
    assert first.json()["state"]["db"] == "connected" and second.json()["state"]["db"] == "connected"


def test_the_servers_lifespan_messages_run_the_apps_startup_and_shutdown():
    log: list[str] = []

    async def scenario():
        web = serve("asgi", make_app(log))
        inbox = asyncio.Queue()
        sent: list[str] = []

        async def send(message):
            sent.append(message["type"])

        lifespan = asyncio.ensure_future(web({"type": "lifespan", "state": {}}, inbox.get, send))
        await inbox.put({"type": "lifespan.startup"})
        await asyncio.sleep(0.01)
        answer = (await http_call(web)).json()
        await inbox.put({"type": "lifespan.shutdown"})
        await asyncio.wait_for(lifespan, 2)
        return sent, answer

    sent, answer = run(scenario())
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert log == ["lifespan.startup", "lifespan.shutdown"]
    assert answer["state"]["db"] == "connected"


def test_startup_and_shutdown_can_be_called_directly():
    log: list[str] = []

    async def scenario():
        web = serve("asgi", make_app(log))
        await web.startup()
        await web.startup()
        await http_call(web)
        await web.shutdown()
        await web.shutdown()

    run(scenario())
    assert log == ["lifespan.startup", "lifespan.shutdown"]


def test_a_failed_startup_is_reported_and_answers_500(capfd):
    async def scenario():
        web = serve("asgi", make_app(fail_startup=True))
        sent = []

        async def send(message):
            sent.append(message)

        inbox = asyncio.Queue()
        await inbox.put({"type": "lifespan.startup"})
        await web({"type": "lifespan", "state": {}}, inbox.get, send)
        return sent, await http_call(web), await http_call(web)

    sent, first, second = run(scenario())
    assert sent == [{"type": "lifespan.startup.failed", "message": "no database"}]
    assert first.status == second.status == 500
    assert first.json()["error"] == {"code": "handler_error", "message": "web failed to start; see the workload logs"}
    assert capfd.readouterr().err.count("the ASGI app's startup failed:\nno database") == 1


def test_an_app_without_lifespan_support_is_served_anyway(capfd):
    async def http_only(scope, receive, send):
        assert scope["type"] == "http", "lifespan is not supported"
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    assert call_asgi(serve("asgi", http_only), "GET", "/").status == 204
    assert (
        "does not support the ASGI lifespan protocol (AssertionError on the lifespan scope)" in capfd.readouterr().err
    )


# Concurrency and on_start


@pytest.mark.parametrize("limit", [1, 2])
def test_at_most_concurrent_requests_requests_and_sessions_at_once(limit):
    now = peak = 0

    async def counted(scope, receive, send):
        nonlocal now, peak
        if scope["type"] == "lifespan":
            return
        now += 1
        peak = max(peak, now)
        await asyncio.sleep(0.02)
        now -= 1
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        else:
            await send({"type": "websocket.close"})

    async def scenario():
        web = serve("asgi", counted, concurrent_requests=limit)
        sessions = [Session(web, "/ws") for _ in range(3)]
        await asyncio.gather(*(http_call(web) for _ in range(4)), *(s.task for s in sessions))

    run(scenario())
    assert peak == limit


def test_the_on_start_value_is_in_the_scope_state():
    def connect() -> str:
        return "pool-1"

    answer = call_asgi(serve("asgi", make_app(), on_start=connect), "GET", "/").json()
    assert answer["state"]["on_start_value"] == "pool-1"


# Frameworks, when installed


def test_a_starlette_app_routes_and_builds_urls_under_the_prefix():
    pytest.importorskip(
        "starlette",
        reason="Starlette is not installed in this test Python; the plain ASGI apps above cover the same rules",
    )
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def item(request):
        return JSONResponse(
            {
                "id": request.path_params["id"],
                "self": str(request.url_for("item", id=1)),
                "warm": request.state.on_start_value,
            }
        )

    web = Starlette(routes=[Route("/items/{id}", item, name="item")])
    reply = call_asgi(serve("asgi", web, on_start=lambda: "yes"), "GET", "/items/3", headers=PREFIX + [("Host", "x")])
    assert reply.status == 200, reply.body
    assert reply.json() == {"id": "3", "self": "http://x/default/shop/web/items/1", "warm": "yes"}


def test_a_fastapi_app_runs_its_startup_and_routes_under_the_prefix():
    pytest.importorskip(
        "fastapi", reason="FastAPI is not installed in this test Python; the plain ASGI apps above cover the same rules"
    )
    from fastapi import FastAPI

    started = []
    api = FastAPI()
    api.router.on_startup.append(lambda: started.append(True))

    @api.get("/items/{item_id}")
    def read(item_id: int) -> dict:
        return {"item_id": item_id}

    reply = call_asgi(serve("asgi", api), "GET", "/items/5", headers=PREFIX)
    assert (reply.status, reply.json(), started) == (200, {"item_id": 5}, [True])
