"""The gateway bench's app: a raw ASGI callable answering ``{"ok":true}``, the least an app can do.

The same callable is served three ways in one run: by a bare uvicorn (directly and behind nginx,
haproxy and the Go peers), by the svc runtime behind nginx, and deployed on svc (``app.asgi``,
one worker, 256 concurrent requests) behind the gateway. What differs between the figures is
then only what sits in front of it.

``/chunked`` answers the same body without a Content-Length: the server sends it chunked, which is
how every streamed answer (SSE, a StreamingResponse, most raw ASGI apps) reaches the gateway.
"""

import svc

BODY = b'{"ok":true}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
# Without a Content-Length the server sends the body chunked, as any streamed answer (SSE, uvicorn's StreamingResponse).
CHUNKED_HEADERS = [(b"content-type", b"application/json")]


async def hello(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    headers = CHUNKED_HEADERS if scope["path"].endswith("/chunked") else HEADERS
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


app = svc.App("bench-asgi")
app.asgi(name="hello", workers=1, concurrent_requests=256, keep_warm_seconds=3600, openapi=None)(hello)
