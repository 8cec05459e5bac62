"""JSON Schema of workload parameters and return values (docs/manifest.md, "JSON Schema").

Only the shapes listed in the manifest doc are described; any other annotation
becomes ``{"title": "<type name>"}`` so the platform can still show it.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

from . import _json
from ._hints import (
    CONTEXT_PARAMETER,
    is_dataclass_type,
    is_pydantic_model,
    is_typeddict,
    type_hints,
)

Schema = dict[str, Any]
EMPTY = inspect.Parameter.empty

_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_BYTES = (bytes, bytearray)
ARRAYS = (
    list,
    set,
    frozenset,
    tuple,
    abc.Sequence,
    abc.MutableSequence,
    abc.Set,
    abc.MutableSet,
    abc.Collection,
    abc.Iterable,
)
OBJECTS = (dict, abc.Mapping, abc.MutableMapping)
STREAMS = (abc.Iterator, abc.Generator, abc.AsyncIterator, abc.AsyncGenerator)
UNIONS = (typing.Union, types.UnionType)

BYTES_RESPONSE: Schema = {"type": "string", "contentMediaType": "application/octet-stream"}
"""``returns`` of a handler annotated ``-> bytes``: the raw body, not base64 JSON."""


def schema_for(annotation: Any, _seen: frozenset[type] = frozenset()) -> Schema:
    """The JSON Schema of one annotation (a fresh dict the caller may extend)."""
    if annotation is EMPTY or annotation is Any or annotation is object:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if isinstance(annotation, type) and annotation in _PRIMITIVES:
        return {"type": _PRIMITIVES[annotation]}
    if annotation in _BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    if isinstance(annotation, str):  # a forward reference that could not be resolved
        return {"title": annotation}
    if isinstance(annotation, typing.ForwardRef):
        return {"title": annotation.__forward_arg__}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return schema_for(args[0], _seen)
    if origin in UNIONS:
        return {"anyOf": [schema_for(arg, _seen) for arg in args]}
    if origin is typing.Literal:
        return {"enum": [_json.to_json_value(arg) for arg in args]}
    if annotation in STREAMS or origin in STREAMS:
        return {"type": "array", "items": schema_for(args[0], _seen) if args else {}, "x-svc-stream": True}
    if origin is tuple and args and args[-1] is not Ellipsis:
        items = [] if args == ((),) else [schema_for(arg, _seen) for arg in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if annotation in ARRAYS or origin in ARRAYS:
        return {"type": "array", "items": schema_for(args[0], _seen)} if args else {"type": "array"}
    if annotation in OBJECTS or origin in OBJECTS:
        schema: Schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = schema_for(args[1], _seen)
        return schema
    if isinstance(annotation, type):
        return _class_schema(annotation, _seen)
    return {"title": getattr(annotation, "__name__", None) or repr(annotation)}


def _class_schema(cls: type[Any], seen: frozenset[type]) -> Schema:
    if cls in seen:  # a recursive type: name it instead of expanding it forever
        return {"title": cls.__name__}
    seen = seen | {cls}
    if is_pydantic_model(cls):
        schema: Schema = getattr(cls, "model_json_schema")()
        return schema
    if issubclass(cls, enum.Enum):
        return {"title": cls.__name__, "enum": [_json.to_json_value(member.value) for member in cls]}
    if is_dataclass_type(cls):
        hints = type_hints(cls)
        properties: Schema = {}
        required: list[str] = []
        for field in dataclasses.fields(typing.cast(Any, cls)):  # is_dataclass_type said so
            prop = schema_for(hints.get(field.name, EMPTY), seen)
            if field.default is not dataclasses.MISSING:
                _add_default(prop, field.default)
            elif field.default_factory is dataclasses.MISSING and field.init:
                required.append(field.name)
            properties[field.name] = prop
        return {"type": "object", "title": cls.__name__, "properties": properties, "required": required}
    if is_typeddict(cls):
        hints = type_hints(cls)
        properties = {key: schema_for(hint, seen) for key, hint in hints.items()}
        required = [key for key in hints if key in getattr(cls, "__required_keys__")]
        return {"type": "object", "title": cls.__name__, "properties": properties, "required": required}
    return {"title": cls.__name__}


def _add_default(schema: Schema, default: Any) -> None:
    """Adds ``"default"`` when the value has a JSON form; leaves it out otherwise."""
    try:
        schema["default"] = _json.to_json_value(default)
    except (TypeError, ValueError):
        pass


def parameters_schema(fn: Callable[..., Any]) -> Schema:
    """The ``parameters`` object schema: one property per parameter of ``fn``.

    ``context`` is left out (the runtime supplies it), as is ``*args``. ``**kwargs``
    sets ``additionalProperties`` to its annotation's schema (``true`` when it has none).
    """
    hints = type_hints(fn)
    properties: Schema = {}
    required: list[str] = []
    additional: Any = False
    for parameter in inspect.signature(fn).parameters.values():
        annotation = hints.get(parameter.name, EMPTY)
        if parameter.name == CONTEXT_PARAMETER or parameter.kind is parameter.VAR_POSITIONAL:
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            additional = schema_for(annotation) if annotation is not EMPTY else True
            continue
        prop = schema_for(annotation)
        if parameter.default is EMPTY:
            required.append(parameter.name)
        else:
            _add_default(prop, parameter.default)
        properties[parameter.name] = prop
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": additional}


def returns_schema(fn: Callable[..., Any]) -> Schema:
    """The ``returns`` schema of ``fn``: its return annotation, ``{}`` when it has none."""
    annotation = type_hints(fn).get("return", EMPTY)
    if annotation is EMPTY and (inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)):
        return {"type": "array", "items": {}, "x-svc-stream": True}
    if annotation in _BYTES:
        return dict(BYTES_RESPONSE)
    return schema_for(annotation)
