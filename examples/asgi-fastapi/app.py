"""A FastAPI app served as one svc workload: every route, HTTP and WebSocket.

`app.asgi(...)` wraps an existing ASGI application (FastAPI here; Starlette or a
plain ASGI callable work the same way) and serves all of its routes under one URL.
FastAPI does the routing, the validation (pydantic) and the OpenAPI docs; svc gives
the app a stable URL, checks the bearer token and runs it in containers.

Try it on your machine first (FastAPI must be installed locally, because
`svc serve` imports this file to read the app):

    python -m svc.manifest app.py        # what the platform will read

Then serve it with `svc serve app.py` (see README.md).
"""

import itertools

import svc
from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import HTTPConnection

app = svc.App("asgi-fastapi")

# The image installs FastAPI (which brings pydantic and starlette) in the
# containers. The platform adds the server (uvicorn) itself.
image = svc.Image(python_version="3.11").add_python_packages(["fastapi"])

api = FastAPI(title="Todos", description="A tiny todo list served by svc.")


# Pydantic models: FastAPI validates request bodies against them (422 with the
# details when a field is missing or has the wrong type) and documents them in
# the OpenAPI schema at /docs and /openapi.json.
class TodoIn(BaseModel):
    title: str = Field(min_length=1, max_length=200, examples=["write the docs"])
    done: bool = False


class Todo(TodoIn):
    id: int
    href: str  # the todo's own path, under the workload's URL


# The store lives in memory, in each worker process: it is a demo. It starts
# empty in every new container and is lost when a container stops (after
# keep_warm_seconds without requests); keep real data in a database.
todos: dict[int, Todo] = {}
ids = itertools.count(1)


def add(item: TodoIn, connection: HTTPConnection) -> Todo:
    """Stores a todo. `connection` is the HTTP request or the WebSocket it came on."""
    todo_id = next(ids)
    # url_for knows the workload's URL prefix (/default/asgi-fastapi/api): svc hands
    # it to the app as the ASGI root_path, so links made by the app work behind svc.
    href = connection.url_for("get_todo", todo_id=todo_id).path
    todo = Todo(id=todo_id, href=href, **item.model_dump())
    todos[todo_id] = todo
    return todo


# A query parameter: /todos?done=true lists the finished ones; without it, all.
@api.get("/todos")
def list_todos(done: bool | None = None) -> list[Todo]:
    """Every todo, oldest first; only the finished (or unfinished) ones with ?done=true (false)."""
    return [todo for todo in todos.values() if done is None or todo.done == done]


# A POST with a JSON body, validated against TodoIn; 201 Created on success.
@api.post("/todos", status_code=201)
def create_todo(item: TodoIn, request: Request) -> Todo:
    """Adds a todo: {"title": "...", "done": false}."""
    return add(item, request)


# A path parameter, converted and checked by its type hint (/todos/abc is a 422).
@api.get("/todos/{todo_id}")
def get_todo(todo_id: int) -> Todo:
    """One todo by id; 404 when there is none."""
    if todo_id not in todos:
        raise HTTPException(status_code=404, detail=f"no todo {todo_id}")
    return todos[todo_id]


# 204 No Content: the generated client's delete_todo() returns None.
@api.delete("/todos/{todo_id}", status_code=204)
def delete_todo(todo_id: int) -> None:
    """Removes a todo; 404 when there is none."""
    if todos.pop(todo_id, None) is None:
        raise HTTPException(status_code=404, detail=f"no todo {todo_id}")


# The app's own WebSocket route: svc bridges it like the HTTP routes, behind the
# same token. Each text message is a todo title; the app answers with the new todo
# as JSON, or with {"error": ...} when the title is not valid.
@api.websocket("/ws")
async def todo_socket(socket: WebSocket) -> None:
    await socket.accept()
    try:
        async for title in socket.iter_text():
            try:
                todo = add(TodoIn(title=title), socket)
            except ValidationError as error:
                await socket.send_json({"error": error.errors()[0]["msg"]})
                continue
            await socket.send_json(todo.model_dump())
    except WebSocketDisconnect:
        pass


# Serve every route of `api` as the workload "api". app.asgi takes the same options
# as an endpoint, with two renamed: concurrent_requests (requests and WebSocket
# sessions at once per worker) and keep_warm_seconds. Bearer-token auth is on.
app.asgi(
    name="api",
    image=image,
    concurrent_requests=16,
    keep_warm_seconds=120,
)(api)
