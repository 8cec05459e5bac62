"""Command-line words to the arguments of a function, converted by its annotations.

``svc run app.py:resize photo.png 640 --keep-ratio false``: positional words fill the
parameters in order, ``--name value`` and ``--name=value`` fill them by name (``-`` in a
name stands for ``_``), a bare ``--flag`` of a bool parameter means true. Each word is
converted as the runtime converts a query-string value (``svc.runtime._convert.from_text``):
int, float, bool (true/false, 1/0, yes/no), str, Optional, Literal and Enum from the
text; list, dict, dataclasses and pydantic models from JSON. ``null`` gives None where the
annotation allows it. Every problem is an ``ArgumentError`` naming the parameter.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._hints import CONTEXT_PARAMETER, type_hints
from .._schema import UNIONS

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
NULLS = ("null", "None")


class ArgumentError(Exception):
    """The words do not fit the function's parameters; the message says which and why."""


@dataclass
class Parsed:
    args: list[Any] = field(default_factory=list[Any])
    kwargs: dict[str, Any] = field(default_factory=dict[str, Any])


def parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters a caller fills (``context`` is svc's own), annotations resolved."""
    hints = type_hints(fn)
    return [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(fn).parameters.values()
        if p.name != CONTEXT_PARAMETER
    ]


def _allows_none(annotation: Any) -> bool:
    return annotation is None or (typing.get_origin(annotation) in UNIONS and type(None) in typing.get_args(annotation))


def expected(annotation: Any) -> str:
    from ..runtime._convert import expected as runtime_expected

    return runtime_expected(annotation)


def convert(text: str, annotation: Any, name: str) -> Any:
    """``text`` as the value ``annotation`` asks for; ArgumentError naming ``name`` when it does not fit."""
    from ..runtime._convert import Mismatch, from_text

    if annotation is P.empty:
        return text
    if text in NULLS and _allows_none(annotation):
        return None
    try:
        return from_text(text, annotation, name)
    except Mismatch as mismatch:
        problems = [problem.replace("query parameter ", "argument ") for problem in mismatch.problems]
        if len(problems) == 1 and problems[0].startswith(f"argument '{name}' must be"):
            raise ArgumentError(f"argument '{name}' must be {expected(annotation)}, got {text!r}") from None
        if all(problem.startswith("argument '") for problem in problems):
            raise ArgumentError("; ".join(problems)) from None
        raise ArgumentError(f"argument '{name}': {'; '.join(problems)}") from None


def _is_bool(annotation: Any) -> bool:
    if annotation is bool:
        return True
    members = [a for a in typing.get_args(annotation) if a is not type(None)]
    return typing.get_origin(annotation) in UNIONS and members == [bool]


def parse(fn: Callable[..., Any], words: list[str]) -> Parsed:
    """The call's ``args`` and ``kwargs`` from the command-line words."""
    params = parameters(fn)
    by_name = {p.name: p for p in params if p.kind is not P.VAR_POSITIONAL and p.kind is not P.VAR_KEYWORD}
    var_positional = next((p for p in params if p.kind is P.VAR_POSITIONAL), None)
    var_keyword = next((p for p in params if p.kind is P.VAR_KEYWORD), None)
    positional_words: list[str] = []
    named_words: dict[str, str] = {}
    index = 0
    only_positional = False
    while index < len(words):
        word = words[index]
        index += 1
        if only_positional or not word.startswith("--") or word == "--":
            if word == "--" and not only_positional:
                only_positional = True
            else:
                positional_words.append(word)
            continue
        option, has_value, value = word[2:].partition("=")
        name = option.replace("-", "_")
        param = by_name.get(name)
        if param is None and var_keyword is None:
            raise ArgumentError(f"{fn.__name__} has no parameter '{name}'; {_takes(params)}")
        if param is not None and param.kind is P.POSITIONAL_ONLY:
            raise ArgumentError(f"argument '{name}' is positional-only: give it by position, not as --{option}")
        if not has_value:
            annotation = param.annotation if param is not None else var_keyword.annotation  # type: ignore[union-attr]
            if _is_bool(annotation) and (index >= len(words) or words[index].startswith("--")):
                value = "true"
            elif index < len(words):
                value = words[index]
                index += 1
            else:
                raise ArgumentError(f"--{option} needs a value")
        if name in named_words:
            raise ArgumentError(f"argument '{name}' is given twice")
        named_words[name] = value
    return _bind(fn, params, positional_words, named_words, var_positional, var_keyword)


def _bind(
    fn: Callable[..., Any],
    params: list[inspect.Parameter],
    positional_words: list[str],
    named_words: dict[str, str],
    var_positional: inspect.Parameter | None,
    var_keyword: inspect.Parameter | None,
) -> Parsed:
    parsed = Parsed()
    slots = [p for p in params if p.kind in POSITIONAL]
    if len(positional_words) > len(slots) and var_positional is None:
        raise ArgumentError(
            f"{fn.__name__} takes {_count(len(slots), 'positional argument')}, got "
            f"{len(positional_words)}; {_takes(params)}"
        )
    for param, word in zip(slots, positional_words, strict=False):
        if param.name in named_words:
            raise ArgumentError(f"argument '{param.name}' is given twice: by position and as --{param.name}")
        parsed.args.append(convert(word, param.annotation, param.name))
    if var_positional is not None:
        parsed.args += [
            convert(word, var_positional.annotation, var_positional.name) for word in positional_words[len(slots) :]
        ]
    given = {p.name for p in slots[: len(positional_words)]} | set(named_words)
    missing = [
        p.name
        for p in params
        if p.kind in (*POSITIONAL, P.KEYWORD_ONLY) and p.default is P.empty and p.name not in given
    ]
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        raise ArgumentError(f"missing required argument{'s' if len(missing) > 1 else ''} {names}; {_takes(params)}")
    for name, word in named_words.items():
        named = next((p for p in params if p.name == name and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)), None)
        annotation = named.annotation if named is not None else var_keyword.annotation  # type: ignore[union-attr]
        parsed.kwargs[name] = convert(word, annotation, name)
    return parsed


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def signature_text(fn: Callable[..., Any]) -> str:
    """``name(a: int, b: str = 'x') -> int`` with the annotations resolved."""
    signature = inspect.signature(fn)
    returns = type_hints(fn).get("return", signature.return_annotation)
    resolved = signature.replace(parameters=parameters(fn), return_annotation=returns)
    return f"{fn.__name__}{resolved}"


def describe(param: inspect.Parameter) -> str:
    """``name: type = default`` as the signature says it."""
    return str(param)


def _takes(params: list[inspect.Parameter]) -> str:
    if not params:
        return "it takes no arguments"
    return "it takes " + ", ".join(describe(p) for p in params)
