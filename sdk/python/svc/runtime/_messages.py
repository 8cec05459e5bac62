"""Realtime messages: an incoming WebSocket message as the handler's argument, and the
handler's results as outgoing messages.

The message parameter's annotation decides what it takes:

- none, ``Any``, ``str``, ``bytes`` (or a union of those): the message as it came,
  a text frame as ``str``, a binary frame as ``bytes``; a frame of a kind the
  annotation leaves out is refused;
- anything else (``dict``, ``list``, a dataclass, a TypedDict, a pydantic model,
  ``int``, ...): the frame's text is decoded as JSON and checked like an endpoint
  argument.

Outgoing, ``str`` is a text frame, ``bytes`` a binary frame, anything else its
JSON text. A result that holds several values (a generator, list, tuple, set;
not a str, bytes, dict, dataclass or model) is sent as one message per item.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import _json
from .._hints import CONTEXT_PARAMETER, type_hints
from . import _convert
from ._binding import problems_message, reject_constant
from ._errors import RequestError

_RAW = {str: "text", bytes: "binary", bytearray: "binary"}
_ANYTHING = (inspect.Parameter.empty, Any, object)
_SINGLE = (str, bytes, bytearray, memoryview, Mapping)


def _frames_for(annotation: Any) -> frozenset[str] | None:
    """The frame kinds a raw annotation takes (``text``, ``binary``); None for a JSON annotation."""
    if annotation in _ANYTHING:
        return frozenset(_RAW.values())
    members = (
        typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else (annotation,)
    )
    members = tuple(member for member in members if member is not type(None))
    if members and all(isinstance(member, type) and member in _RAW for member in members):
        return frozenset(_RAW[member] for member in members)
    return None


class MessageParameter:
    """The handler's message parameter: turns each incoming frame into its argument."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        parameter = next(
            p
            for p in inspect.signature(fn).parameters.values()
            if p.name != CONTEXT_PARAMETER and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        )
        self.name = parameter.name
        self.annotation = type_hints(fn).get(parameter.name, inspect.Parameter.empty)
        self._frames = _frames_for(self.annotation)

    def decode(self, message: dict[str, Any]) -> Any:
        """The argument for one ``websocket.receive`` message; RequestError for a bad message."""
        text, data = message.get("text"), message.get("bytes")
        if self._frames is not None:
            kind = "text" if text is not None else "binary"
            if kind not in self._frames:
                wanted = "text (str)" if kind == "binary" else "binary (bytes)"
                raise RequestError("invalid_arguments", f"'{self.name}' takes {wanted} messages, got a {kind} message")
            return text if text is not None else bytes(data or b"")
        return self._from_json(text if text is not None else data or b"")

    def _from_json(self, raw: str | bytes) -> Any:
        try:
            value = json.loads(raw, parse_constant=reject_constant)
        except (ValueError, UnicodeDecodeError) as error:
            raise RequestError("invalid_json", f"the message is not valid JSON: {error}") from None
        try:
            return _convert.from_json(value, self.annotation, self.name)
        except _convert.Mismatch as mismatch:
            raise RequestError("invalid_arguments", problems_message(mismatch.problems)) from None


def is_many(result: object) -> bool:
    """True for a result sent as one message per item: any iterable but a str, bytes,
    mapping, dataclass or pydantic model (a model iterates over its fields)."""
    if isinstance(result, _SINGLE) or dataclasses.is_dataclass(result):
        return False
    if callable(getattr(type(result), "model_json_schema", None)):
        return False
    return isinstance(result, Iterable) or hasattr(result, "__aiter__")


def outgoing(value: Any) -> dict[str, Any]:
    """The ``websocket.send`` message for one value; TypeError or ValueError without a JSON form."""
    if isinstance(value, str):
        return {"type": "websocket.send", "text": value}
    data = _json.binary(value)
    if data is not None:
        return {"type": "websocket.send", "bytes": data}
    return {"type": "websocket.send", "text": _json.dumps(value)}


def error_message(error: RequestError) -> dict[str, Any]:
    """An error as a text message: ``{"error": {"code": ..., "message": ...}}``."""
    return {"type": "websocket.send", "text": error.body().decode("utf-8")}
