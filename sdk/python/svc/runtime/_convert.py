"""Request values to Python arguments, checked against the parameter annotations.

``from_json`` checks a decoded JSON value (and builds dataclasses, TypedDicts,
pydantic models, enums, tuples and sets from it); ``from_text`` converts one
query-string value. Annotations svc does not know pass values through unchanged.
A mismatch raises ``Mismatch`` naming the argument path and the expected type; the
items of an array and the fields of an object are all checked, so one ``Mismatch``
may carry several problems.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import inspect
import json
import math
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from .._hints import is_dataclass_type, is_enum, is_pydantic_model, is_typeddict, type_hints
from .._schema import ARRAYS, OBJECTS, UNIONS

_PASS_THROUGH = (inspect.Parameter.empty, Any, object)
_JSON_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")
COLLECTIONS: dict[Any, Callable[[Iterable[Any]], Any]] = {set: set, frozenset: frozenset, tuple: tuple}
"""The containers other than list that an array argument becomes, by annotation origin."""


class Mismatch(Exception):
    """Values that do not fit their annotation: one problem or several, each naming its argument.

    ``problems`` holds one sentence per problem; the message joins them with "; ".
    ``shallow_at`` is the path of a plain "must be X, got Y" at that very level; a
    union then reports the one member that failed for a deeper reason (a bad field
    further down) rather than listing every member.
    """

    def __init__(self, problems: str | list[str], shallow_at: str | None = None) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))
        self.shallow_at = shallow_at


Convert = Callable[[Any, Any, str], Any]


def convert_all(
    convert: Convert, items: Iterable[tuple[Any, Any, str]], problems: list[str] | None = None
) -> list[Any]:
    """``convert(value, annotation, path)`` of every item; one Mismatch with every problem if any fail.

    ``problems`` found before (unknown or missing fields) come first in that Mismatch.
    """
    problems = list(problems or [])
    converted: list[Any] = []
    for value, annotation, path in items:
        try:
            converted.append(convert(value, annotation, path))
        except Mismatch as mismatch:
            problems.extend(mismatch.problems)
    if problems:
        raise Mismatch(problems)
    return converted


def _first_fit(
    convert: Convert, value: Any, members: Iterable[Any], path: str, fallback: Callable[[], Mismatch]
) -> Any:
    """A union: the value as the first member it fits."""
    errors: list[Mismatch] = []
    for member in members:
        try:
            return convert(value, member, path)
        except Mismatch as error:
            errors.append(error)
    deeper = [error for error in errors if error.shallow_at != path]
    raise deeper[0] if len(deeper) == 1 else fallback()


def json_type(value: object) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def expected(annotation: Any) -> str:
    """How a message names what an annotation wants: 'an integer', 'a Point object', ..."""
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        type(None): "null",
        bytes: "a base64 string",
        bytearray: "a base64 string",
    }
    if annotation is None or (isinstance(annotation, type) and annotation in names):
        return names[type(None) if annotation is None else annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in UNIONS:
        return " or ".join(expected(arg) for arg in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(json.dumps(arg.value if is_enum(type(arg)) else arg) for arg in args)
    if annotation in ARRAYS or origin in ARRAYS:
        return "an array"
    if is_enum(annotation):
        return "one of " + ", ".join(json.dumps(member.value) for member in annotation)
    if annotation in OBJECTS or origin in OBJECTS:
        return "an object"
    return f"a {getattr(annotation, '__name__', annotation)} object"


def _mismatch(path: str, annotation: Any, value: Any) -> Mismatch:
    shown = f" {json.dumps(value)}" if isinstance(value, (str, int, float)) and len(repr(value)) <= 40 else ""
    return Mismatch(f"argument '{path}' must be {expected(annotation)}, got {json_type(value)}{shown}", path)


def from_json(value: Any, annotation: Any, path: str) -> Any:
    """``value`` (decoded JSON) as the Python value ``annotation`` asks for."""
    if annotation in _PASS_THROUGH or isinstance(annotation, (str, typing.ForwardRef)):
        return value
    if annotation is None or annotation is type(None):
        if value is None:
            return None
        raise _mismatch(path, annotation, value)
    if annotation is bool:
        if type(value) is bool:
            return value
        raise _mismatch(path, annotation, value)
    if annotation is int:
        if type(value) is int or (type(value) is float and value.is_integer()):
            return int(value)
        raise _mismatch(path, annotation, value)
    if annotation is float:
        if type(value) in (int, float):
            return float(value)
        raise _mismatch(path, annotation, value)
    if annotation is str:
        if type(value) is str:
            return value
        raise _mismatch(path, annotation, value)
    if annotation in (bytes, bytearray):
        try:
            return annotation(base64.b64decode(value, validate=True))
        except (TypeError, ValueError, binascii.Error):
            raise _mismatch(path, annotation, value) from None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return from_json(value, args[0], path)
    if origin in UNIONS:
        return _first_fit(from_json, value, args, path, lambda: _mismatch(path, annotation, value))
    if origin is typing.Literal:
        for arg in args:
            plain = arg.value if is_enum(type(arg)) else arg
            if type(plain) is type(value) and plain == value:
                return arg
        raise _mismatch(path, annotation, value)
    if annotation in ARRAYS or origin in ARRAYS:
        return _array(value, annotation, origin, args, path)
    if annotation in OBJECTS or origin in OBJECTS:
        if type(value) is not dict:
            raise _mismatch(path, annotation, value)
        fields = cast("Mapping[Any, Any]", value)
        if len(args) != 2:
            return fields
        items = convert_all(from_json, ((item, args[1], f"{path}.{key}") for key, item in fields.items()))
        return dict(zip(fields, items, strict=False))
    if isinstance(annotation, type):
        return _instance(value, annotation, path)
    return value


def _array(value: Any, annotation: Any, origin: Any, args: tuple[Any, ...], path: str) -> Any:
    if type(value) is not list:
        raise _mismatch(path, annotation, value)
    given = cast("Sequence[Any]", value)
    container = origin or annotation
    if container is tuple and args and args[-1] is not Ellipsis:
        fixed = () if args == ((),) else args
        if len(given) != len(fixed):
            raise Mismatch(f"argument '{path}' must be an array of {len(fixed)} items, got {len(given)}")
        return tuple(
            convert_all(
                from_json,
                ((item, arg, f"{path}[{i}]") for i, (item, arg) in enumerate(zip(given, fixed, strict=False))),
            )
        )
    items = convert_all(from_json, ((item, args[0], f"{path}[{i}]") for i, item in enumerate(given))) if args else given
    make = COLLECTIONS.get(container)
    if make is not None:
        try:
            return make(items)
        except TypeError:  # unhashable items for a set
            raise Mismatch(f"argument '{path}' must be an array of hashable values (strings, numbers)") from None
    return list(items)


def _instance(value: Any, cls: type, path: str) -> Any:
    if is_pydantic_model(cls):
        try:
            return getattr(cls, "model_validate")(value)
        except ValueError as error:  # pydantic.ValidationError is a ValueError
            prefix = f"argument '{path}' is not a valid {cls.__name__}: "
            raise Mismatch([prefix + problem for problem in _pydantic_errors(error)]) from None
    if is_enum(cls):
        try:
            return cls(value)
        except ValueError:
            raise _mismatch(path, cls, value) from None
    if is_dataclass_type(cls):
        return _dataclass(value, cls, path)
    if is_typeddict(cls):
        return _typeddict(value, cls, path)
    return value


def _fields_of(value: Any, cls: type, path: str, hints: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The fields of an object value, each converted by its annotation in ``hints``.

    Unknown fields, missing required fields and fields of the wrong type are all reported together.
    """
    if type(value) is not dict:
        raise _mismatch(path, cls, value)
    given = cast("Mapping[Any, Any]", value)
    known = ", ".join(hints)
    problems = [
        f"argument '{path}' has unknown field '{key}' ({cls.__name__} has {known})" for key in given if key not in hints
    ]
    problems += [
        f"argument '{path}' is missing the field '{key}' of {cls.__name__}" for key in required if key not in given
    ]
    fields = [key for key in given if key in hints]
    items = convert_all(from_json, ((given[key], hints[key], f"{path}.{key}") for key in fields), problems)
    return dict(zip(fields, items, strict=False))


def _dataclass(value: Any, cls: type, path: str) -> Any:
    fields = [field for field in dataclasses.fields(cls) if field.init]
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    hints = type_hints(cls)
    kwargs = _fields_of(value, cls, path, {f.name: hints.get(f.name, Any) for f in fields}, required)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:  # a __post_init__ that validates
        raise Mismatch(f"argument '{path}' is not a valid {cls.__name__}: {error}") from None


def _typeddict(value: Any, cls: type, path: str) -> dict[str, Any]:
    hints = type_hints(cls)
    return _fields_of(value, cls, path, hints, [key for key in hints if key in getattr(cls, "__required_keys__")])


def _pydantic_errors(error: Exception) -> list[str]:
    """One ``<field path>: <message>`` per error pydantic found."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return [str(error)]
    found = cast("list[dict[str, Any]]", errors())  # pydantic's ErrorDetails: loc, msg, ...
    return [f"{'.'.join(str(part) for part in e.get('loc', ())) or 'value'}: {e.get('msg')}" for e in found]


def _text_mismatch(path: str, annotation: Any, text: str) -> Mismatch:
    return Mismatch(f"query parameter '{path}' must be {expected(annotation)}, got {text!r}", path)


def from_text(text: str, annotation: Any, path: str) -> Any:
    """One query-string value as the Python value ``annotation`` asks for.

    str, int, float and bool (true/false, 1/0, yes/no) are converted from the text;
    Optional[T] and unions try each member; Literal and Enum match by value; any
    other annotation reads the text as JSON.
    """
    if annotation in _PASS_THROUGH or annotation is str or isinstance(annotation, (str, typing.ForwardRef)):
        return text
    if annotation is int and _INTEGER.fullmatch(text):
        return int(text)
    if annotation is float:
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    if annotation is bool and text.lower() in _TRUE + _FALSE:
        return text.lower() in _TRUE
    if annotation in (int, float, bool):
        raise _text_mismatch(path, annotation, text)
    if annotation in (bytes, bytearray):
        return from_json(text, annotation, path)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return from_text(text, args[0], path)
    if origin in UNIONS:
        members = [arg for arg in args if arg is not type(None)]
        return _first_fit(from_text, text, members, path, lambda: _text_mismatch(path, annotation, text))
    if origin is typing.Literal or is_enum(annotation):
        choices = args if origin is typing.Literal else tuple(cast("type[enum.Enum]", annotation))
        for choice in choices:
            if str(choice.value if is_enum(type(choice)) else choice) == text:
                return choice
        raise _text_mismatch(path, annotation, text)
    try:
        value = json.loads(text)
    except ValueError:
        raise Mismatch(
            f"query parameter '{path}' must be {expected(annotation)} written as JSON, got {text!r}"
        ) from None
    return from_json(value, annotation, path)


def is_array(annotation: Any) -> bool:
    """True for list, set and ``tuple[T, ...]``: a repeated query key gives one item per occurrence."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is tuple and args and args[-1] is not Ellipsis:
        return False  # a fixed-length tuple is written as one JSON array
    return annotation in ARRAYS or typing.get_origin(annotation) in ARRAYS


def item_annotation(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    return args[0] if args else Any
