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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from .._hints import CONTEXT_PARAMETER, type_hints
from .._json import is_object
from . import _convert
from ._errors import RequestError

EMPTY = inspect.Parameter.empty


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def problems_message(problems: list[str]) -> str:
    """One problem as it is; several counted and joined with '; '."""
    return problems[0] if len(problems) == 1 else f"{len(problems)} problems: {'; '.join(problems)}"


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
            payload = json.loads(body, parse_constant=reject_constant)
        except (ValueError, UnicodeDecodeError) as error:
            raise RequestError("invalid_json", f"the request body is not valid JSON: {error}") from None
        if not is_object(payload):
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
            many = parameter is not None and _convert.is_array(parameter.annotation)
            values[key] = _Repeated(texts, many) if many or len(texts) > 1 else texts[0]
        return self._bind(values, _query_value)

    def _bind(self, values: dict[str, Any], convert: _convert.Convert) -> dict[str, Any]:
        """The checked arguments, or one RequestError listing every problem: missing, unknown, wrong type."""
        problems = [
            f"missing required argument '{p.name}'"
            for p in self.parameters.values()
            if p.required and p.name not in values
        ]
        unknown = {key: self._extra_problem(key) for key in values if key not in self.parameters}
        problems += [problem for problem in unknown.values() if problem is not None]
        keys = [key for key in values if unknown.get(key) is None]
        try:
            converted = _convert.convert_all(
                convert, ((values[key], self._annotation(key), key) for key in keys), problems
            )
        except _convert.Mismatch as mismatch:
            raise RequestError("invalid_arguments", problems_message(mismatch.problems)) from None
        return dict(zip(keys, converted, strict=False))

    def _annotation(self, key: str) -> Any:
        parameter = self.parameters.get(key)
        return parameter.annotation if parameter is not None else self.extra

    def _extra_problem(self, key: str) -> str | None:
        """What is wrong with an argument that is not a parameter; None when ``**kwargs`` takes it."""
        if key == CONTEXT_PARAMETER:
            return "argument 'context' is reserved: svc fills it in, do not send it"
        if self.extra is None:
            known = list(self.parameters)
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            takes = f"it takes {', '.join(known)}" if known else "it takes no arguments"
            return f"unknown argument '{key}' ({hint}{takes})"
        return None


@dataclass(frozen=True)
class _Repeated:
    """A query key given more than once, or given for a list, set or tuple parameter."""

    texts: list[str]
    many: bool  # the parameter takes several values


def _query_value(value: Any, annotation: Any, path: str) -> Any:
    if not isinstance(value, _Repeated):
        return _convert.from_text(value, annotation, path)
    if not value.many:
        raise _convert.Mismatch(f"query parameter '{path}' is given {len(value.texts)} times: give it once")
    item = _convert.item_annotation(annotation)
    items = _convert.convert_all(
        _convert.from_text, ((text, item, f"{path}[{i}]") for i, text in enumerate(value.texts))
    )
    container = typing.get_origin(annotation) or annotation
    make = _convert.COLLECTIONS.get(container)
    return make(items) if make is not None else items
