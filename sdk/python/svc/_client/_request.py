"""``<endpoint>.request(**args)`` and ``<asgi>.request(method=, path=, ...)``: call a served workload.

The workload's URL comes from the server: the running preview of its app when there
is one (``GET /api/v1/apps/:app/preview``), else its deployment (``GET /api/v1/apps/:app``);
``target="deployed"`` or ``target="preview"`` picks one. The caller's token goes along
(a public workload ignores it). An endpoint's arguments go as the JSON body for POST,
PUT and PATCH, and as query parameters when the endpoint takes only GET-like methods,
written the way the runtime reads them back (docs/sdk.md, "Arguments").
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlencode, urlsplit

from .. import _json
from .._hints import CONTEXT_PARAMETER, type_hints
from .._workloads import Workload
from ..exceptions import NotFoundError
from ._credentials import find_credentials
from ._http import Api, open_url
from ._project import find_owner
from ._response import Response

TARGETS = ("preview", "deployed")
BODY_METHODS = ("POST", "PUT", "PATCH")


def workload_url(api: Api, app: str, workload: str, target: str | None) -> str:
    """The URL of ``workload`` in the preview (preferred) or the deployment of ``app``."""
    if target is not None and target not in TARGETS:
        raise ValueError(f"target={target!r}: use 'preview', 'deployed', or leave it out (the preview when one runs)")
    view, where = None, ""
    if target in (None, "preview"):
        answer = api.request("GET", f"/apps/{app}/preview", ok=(200,) if target == "preview" else (200, 404))
        if answer.status == 200:
            view, where = answer.json(), f"the preview of {app}"
    if view is None:
        answer = api.request("GET", f"/apps/{app}", ok=(200, 404))
        if answer.status == 404:
            raise NotFoundError(
                f"the app {app} is neither previewed nor deployed on {api.server}"
                if target is None
                else f"the app {app} is not deployed on {api.server}",
                status=404,
                hint=f"Deploy it with `svc deploy`{'' if target else ' or preview it with `svc serve`'}.",
            )
        view, where = answer.json(), f"the deployment of {app}"
    for deployment in view.get("deployments", []):
        if deployment.get("workload") == workload:
            urls: dict[str, Any] = deployment.get("urls") or {}
            url = urls.get("path")
            if not url:
                raise NotFoundError(f"{workload} has no URL in {where} (status {deployment.get('status')})", status=404)
            return on_own_server(api.server, str(url))
    raise NotFoundError(
        f"{where} has no workload {workload}: it runs other code than this",
        status=404,
        hint="Deploy (or serve) the current code again.",
    )


def on_own_server(server: str, url: str) -> str:
    """``url`` on ``server``: the token goes only to the server it belongs to, even when the server
    advertises its workloads at another origin (``--host 0.0.0.0`` printed as 127.0.0.1, a public URL)."""
    found, own = urlsplit(url), urlsplit(server)
    if (found.scheme, found.netloc.lower()) == (own.scheme, own.netloc.lower()):
        return url
    return server.rstrip("/") + found.path + (f"?{found.query}" if found.query else "")


def _send(method: str, url: str, body: bytes | None, headers: dict[str, str], timeout: float | None) -> Response:
    with open_url(method, url, body=body, headers=headers, timeout=timeout, where="the workload") as stream:
        content = stream.read() if method != "HEAD" else b""
        return Response(method, url, stream.status, stream.response.getheaders(), content)


def _app_name(workload: Workload) -> str:
    return find_owner(workload)[0].name


# --- endpoints -------------------------------------------------------------------------------


def _arguments(workload: Workload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name, checked against the function's signature (TypeError as for a call)."""
    signature = inspect.signature(workload.target)
    parameters = [p for name, p in signature.parameters.items() if name != CONTEXT_PARAMETER]
    bound = signature.replace(parameters=parameters).bind(*args, **kwargs)
    arguments: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)
        else:
            arguments[name] = value
    return arguments


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    plain = _json.to_json_value(value)
    return plain if isinstance(plain, str) else json.dumps(plain, separators=(",", ":"))


def _is_array(annotation: Any) -> bool:
    from ..runtime._convert import is_array

    return is_array(annotation)


def _query(workload: Workload, arguments: Mapping[str, Any]) -> str:
    """The arguments as a query string: repeated keys for arrays, JSON for objects, None left out."""
    hints = type_hints(workload.target)
    pairs: list[tuple[str, str]] = []
    for name, value in arguments.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)) and _is_array(hints.get(name, Any)):
            pairs += [(name, _query_text(item)) for item in cast("Collection[Any]", value)]
        else:
            pairs.append((name, _query_text(value)))
    return urlencode(pairs)


def endpoint_request(workload: Workload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Response:
    """Calls an endpoint with the function's arguments and returns its response."""
    if workload.kind == "realtime":
        raise TypeError(
            f"{workload.name} is a realtime handler: connect to its ws:// URL over WebSocket; "
            ".request() makes plain HTTP requests."
        )
    if workload.kind == "function":
        raise TypeError(f"{workload.name} is a function, which is not served over HTTP: call it with .remote().")
    target = None
    if "target" in kwargs and "target" not in inspect.signature(workload.target).parameters:
        target = kwargs.pop("target")
    arguments = _arguments(workload, args, kwargs)
    api = Api(find_credentials())
    url = workload_url(api, _app_name(workload), workload.name, target)
    methods = [m.upper() for m in workload.options.get("methods", ["GET", "POST"])]
    method = next((m for m in BODY_METHODS if m in methods), None)
    headers = {**api.auth(), "Accept": "application/json"}
    if method is not None:
        body = _json.dumps(arguments).encode("utf-8")
        return _send(method, url, body, {**headers, "Content-Type": "application/json"}, None)
    method = "GET" if "GET" in methods else methods[0]
    query = _query(workload, arguments)
    return _send(method, f"{url}?{query}" if query else url, None, headers, None)


# --- ASGI apps -------------------------------------------------------------------------------


def asgi_request(
    workload: Workload,
    method: str = "GET",
    path: str = "/",
    *,
    json: Any = None,
    data: Any = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    target: str | None = None,
    timeout: float | None = None,
) -> Response:
    """One HTTP request to a route of an ASGI app."""
    if json is not None and data is not None:
        raise TypeError("pass json= or data=, not both")
    api = Api(find_credentials())
    base = workload_url(api, _app_name(workload), workload.name, target)
    url = base.rstrip("/") + "/" + path.lstrip("/")
    if params:
        url += ("&" if "?" in url else "?") + urlencode(
            [
                (key, _query_text(item))
                for key, value in params.items()
                for item in (cast("Sequence[Any]", value) if isinstance(value, (list, tuple)) else [value])
                if item is not None
            ]
        )
    sent: dict[str, str] = dict(api.auth())
    body: bytes | None = None
    if json is not None:
        body = _json.dumps(json).encode("utf-8")
        sent["Content-Type"] = "application/json"
    elif isinstance(data, Mapping):
        body = urlencode([(str(k), str(v)) for k, v in cast("Mapping[object, object]", data).items()]).encode("ascii")
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    elif isinstance(data, str):
        body = data.encode("utf-8")
    elif data is not None:
        body = bytes(data)
    given = {name.lower() for name in (headers or {})}
    sent = {name: value for name, value in sent.items() if name.lower() not in given}
    sent.update(headers or {})
    return _send(method.upper(), url, body, sent, timeout)
