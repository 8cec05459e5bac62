"""From a request to the keyword arguments of the handler.

A ``Binder`` reads the handler's signature once; per request it turns the JSON
body (POST, PUT, PATCH) or the query string (other methods) into checked keyword
arguments, or raises ``RequestError`` (``invalid_json`` or ``invalid_arguments``).
"""

from __future__ import annotations

import difflib
import inspect
import json
import typing
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import parse_qsl

from .._hints import CONTEXT_PARAMETER, type_hints
from . import _convert
from ._errors import RequestError

EMPTY = inspect.Parameter.empty


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


@dataclass(frozen=True)
class _Parameter:
    name: str
    annotation: Any
    required: bool


class Binder:
    """Binds requests to the parameters of one handler."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        hints = type_hints(fn)
        self.parameters: dict[str, _Parameter] = {}
        self.extra: Any = None  # the **kwargs annotation, or None without **kwargs
        self.wants_context = False
        for parameter in inspect.signature(fn).parameters.values():
            annotation = hints.get(parameter.name, EMPTY)
            if parameter.name == CONTEXT_PARAMETER:
                self.wants_context = True
            elif parameter.kind is parameter.VAR_KEYWORD:
                self.extra = annotation
            elif parameter.kind is not parameter.VAR_POSITIONAL:
                self.parameters[parameter.name] = _Parameter(parameter.name, annotation, parameter.default is EMPTY)

    def from_body(self, body: bytes) -> dict[str, Any]:
        """Keyword arguments from a JSON object body; an empty body means no arguments."""
        if not body.strip():
            return self._bind({}, _convert.from_json)
        try:
            payload = json.loads(body, parse_constant=_reject_constant)
        except (ValueError, UnicodeDecodeError) as error:
            raise RequestError("invalid_json", f"the request body is not valid JSON: {error}") from None
        if not isinstance(payload, dict):
            raise RequestError(
                "invalid_arguments",
                f"the JSON body must be an object whose fields are the arguments, got {_convert.json_type(payload)}",
            )
        return self._bind(payload, _convert.from_json)

    def from_query(self, query_string: bytes) -> dict[str, Any]:
        """Keyword arguments from the query string, converted by the annotations.

        A list, set or tuple parameter takes every occurrence of its key; any other
        parameter given twice is an error.
        """
        try:
            pairs = parse_qsl(query_string.decode("ascii"), keep_blank_values=True, errors="strict")
        except UnicodeError:
            raise RequestError("invalid_arguments", "the query string is not valid UTF-8") from None
        grouped: dict[str, list[str]] = {}
        for key, value in pairs:
            grouped.setdefault(key, []).append(value)
        values: dict[str, Any] = {}
        for key, texts in grouped.items():
            parameter = self.parameters.get(key)
            if parameter is not None and _convert.is_array(parameter.annotation):
                item = _convert.item_annotation(parameter.annotation)
                values[key] = _Converted([_text(text, item, f"{key}[{i}]") for i, text in enumerate(texts)])
            elif len(texts) > 1:
                raise RequestError("invalid_arguments", f"query parameter '{key}' is given {len(texts)} times; give it once")
            else:
                values[key] = texts[0]
        return self._bind(values, _query_value)

    def _bind(self, values: dict[str, Any], convert: Callable[[Any, Any, str], Any]) -> dict[str, Any]:
        for key in values:
            if key not in self.parameters:
                self._check_extra(key)
        missing = [p.name for p in self.parameters.values() if p.required and p.name not in values]
        if missing:
            names = ", ".join(f"'{name}'" for name in missing)
            raise RequestError("invalid_arguments", f"missing required argument{'s' if len(missing) > 1 else ''} {names}")
        arguments: dict[str, Any] = {}
        for key, value in values.items():
            parameter = self.parameters.get(key)
            annotation = parameter.annotation if parameter else self.extra
            try:
                arguments[key] = convert(value, annotation, key)
            except _convert.Mismatch as mismatch:
                raise RequestError("invalid_arguments", str(mismatch)) from None
        return arguments

    def _check_extra(self, key: str) -> None:
        if key == CONTEXT_PARAMETER:
            raise RequestError("invalid_arguments", "'context' is reserved: svc fills it in; do not send it")
        if self.extra is None:
            known = list(self.parameters)
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            takes = f"it takes {', '.join(known)}" if known else "it takes no arguments"
            raise RequestError("invalid_arguments", f"unknown argument '{key}'; {hint}{takes}")


class _Converted(list):
    """Query items already converted one by one (list parameters)."""


def _text(text: str, annotation: Any, path: str) -> Any:
    try:
        return _convert.from_text(text, annotation, path)
    except _convert.Mismatch as mismatch:
        raise RequestError("invalid_arguments", str(mismatch)) from None


def _query_value(value: Any, annotation: Any, path: str) -> Any:
    if isinstance(value, _Converted):
        container = typing.get_origin(annotation) or annotation
        return container(value) if container in (set, frozenset, tuple) else list(value)
    return _convert.from_text(value, annotation, path)
