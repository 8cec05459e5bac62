"""JSON to the generated dataclasses and back, for the client's answers and arguments.

An answer is decoded strictly first (every field known, unions by exact fit), then leniently
(fields the client does not know are ignored: a newer deployment may add some); one that still
does not fit raises svc.RemoteError unexpected_response, saying to export the client again.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import types
import typing
from typing import Any, Iterable, Mapping

from svc._client._errors import error_for
from svc.exceptions import RemoteError

__all__ = ["OMITTED", "decode", "svc_error", "to_json"]


class _Omitted:
    """The default of a parameter whose default value has no JSON form: left out, so the function's own applies."""

    _instance: _Omitted | None = None

    def __new__(cls) -> _Omitted:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<the function's default>"

    def __bool__(self) -> bool:
        return False


OMITTED: Any = _Omitted()


class _Mismatch(Exception):
    pass


_hints: dict[type, dict[str, Any]] = {}


def _fields(cls: type) -> list[tuple[dataclasses.Field[Any], Any]]:
    hints = _hints.get(cls)
    if hints is None:
        hints = _hints[cls] = typing.get_type_hints(cls)
    return [(field, hints.get(field.name, Any)) for field in dataclasses.fields(cls) if field.init]


def _convert(tp: Any, value: Any, strict: bool, where: str) -> Any:
    if tp is Any or tp is object:
        return value
    if tp is None or tp is type(None):
        if value is None:
            return None
        raise _Mismatch(f"{where} must be null")
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        for exact in (True, False) if not strict else (True,):
            for member in args:
                try:
                    return _convert(member, value, exact, where)
                except _Mismatch:
                    pass
        raise _Mismatch(f"{where} fits none of {_name(tp)}")
    if origin is typing.Literal:
        if any(value == arg and type(value) is type(arg) for arg in args):
            return value
        raise _Mismatch(f"{where} must be one of {', '.join(json.dumps(arg) for arg in args)}")
    if origin in (list, tuple, set, frozenset) or (isinstance(tp, type) and tp in (list, tuple)):
        if not isinstance(value, list):
            raise _Mismatch(f"{where} must be an array")
        values = typing.cast("list[object]", value)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(values):
                raise _Mismatch(f"{where} must hold {len(args)} items")
            return tuple(_convert(arg, item, strict, f"{where}[{i}]") for i, (arg, item) in enumerate(zip(args, values)))
        item_type = args[0] if args else Any
        items = [_convert(item_type, item, strict, f"{where}[{i}]") for i, item in enumerate(values)]
        return tuple(items) if origin is tuple else items
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise _Mismatch(f"{where} must be an object")
        value_type = args[1] if len(args) == 2 else Any
        fields = typing.cast("dict[str, object]", value)  # a JSON object: its keys are strings
        return {key: _convert(value_type, item, strict, f"{where}.{key}") for key, item in fields.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp, value, strict, where)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if not strict and isinstance(value, float) and value.is_integer():
            return int(value)
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif tp is bytes:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                pass
    else:
        return value
    raise _Mismatch(f"{where} must be {_name(tp)}, got {_json_type(value)}")


def _dataclass(cls: type, value: Any, strict: bool, where: str) -> Any:
    if not isinstance(value, dict):
        raise _Mismatch(f"{where} must be an object ({cls.__name__}), got {_json_type(value)}")
    fields = typing.cast("dict[str, object]", value)  # a JSON object: its keys are strings
    known: set[str] = set()
    arguments: dict[str, Any] = {}
    for field, field_type in _fields(cls):
        key: str = field.metadata.get("json", field.name)
        known.add(key)
        if key in fields:
            arguments[field.name] = _convert(field_type, fields[key], strict, f"{where}.{key}")
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise _Mismatch(f"{where} lacks the field {key!r} of {cls.__name__}")
    unknown = [key for key in fields if key not in known]
    if strict and unknown:
        raise _Mismatch(f"{where} has the field {unknown[0]!r}, which {cls.__name__} does not")
    return cls(**arguments)


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp).replace("typing.", "")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def decode(tp: Any, value: Any, where: str, app: str) -> Any:
    """'value' (parsed JSON) as 'tp': generated dataclasses (nested too), lists, dicts, unions of them.

    An object with fields the client does not know still decodes (a newer deployment may
    add fields); one that lacks a required field raises RemoteError 'unexpected_response'.
    """
    try:
        return _convert(tp, value, True, "the answer")
    except _Mismatch:
        pass
    try:
        return _convert(tp, value, False, "the answer")
    except _Mismatch as mismatch:
        raise RemoteError(
            f"{where} does not fit the generated client: {mismatch}", code="unexpected_response",
            hint=f"The deployed app changed since this client was generated: run svc app export {app} again.",
        ) from None


def to_json(value: Any) -> Any:
    """'value' as JSON data; generated dataclasses use their JSON keys. The SDK encodes the rest."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if item is None and field.metadata.get("omit_none"):
                continue
            out[field.metadata.get("json", field.name)] = to_json(item)
        return out
    if isinstance(value, Mapping):
        return {key: to_json(item) for key, item in typing.cast("Mapping[object, object]", value).items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(item) for item in typing.cast("Iterable[object]", value)]
    return value


def svc_error(value: Any) -> RemoteError | None:
    """The typed exception of an svc error message '{"error": {"code", "message"}}', else None."""
    body = typing.cast("dict[str, object]", value) if isinstance(value, dict) else {}  # a JSON object
    found = body.get("error") if len(body) == 1 else None
    error = typing.cast("dict[str, object]", found) if isinstance(found, dict) else {}
    code, message, hint = error.get("code"), error.get("message"), error.get("hint")
    if isinstance(code, str) and isinstance(message, str):
        return error_for(code, message, hint=typing.cast("str | None", hint), details=error.get("details"))
    return None
