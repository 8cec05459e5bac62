"""Value checks shared by the option table, Image and Autoscaler.

A check returns the value to keep (normalised) or raises ``Problem`` with the
end of a sentence that starts with ``<option>=<value>``; ``reject`` turns that
into an ``InvalidOptionError`` naming where the option was written.

A check also says what it accepts, as JSON-ready data (``rule_of``): the bounds
are written once, where the check is made, and ``svc._options.describe_options``
reads them from there.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any, Callable, NoReturn, TypeVar

from .exceptions import InvalidOptionError

Check = Callable[[Any], Any]
_CheckT = TypeVar("_CheckT", bound=Check)

# Workload and app names: they end up in URLs, job IDs and service names.
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,62}")
NAME_RULE = "1 to 63 letters, digits, '_' or '-', starting with a letter"


class Problem(Exception):
    """What is wrong with a value: the rest of the sentence after ``option=value``."""


def reject(where: str, option: str, value: Any, problem: Problem | str) -> NoReturn:
    """Raises InvalidOptionError: ``<where>: <option>=<value> <problem>.``"""
    text = str(problem).rstrip(".")
    raise InvalidOptionError(f"{where}: {option}={value!r} {text}.", option=option) from None


def describe(**rule: Any) -> Callable[[_CheckT], _CheckT]:
    """Attaches ``rule`` (what the check accepts: ``type``, bounds) to a check, for ``rule_of``."""

    def attach(check: _CheckT) -> _CheckT:
        setattr(check, "rule", rule)
        return check

    return attach


def rule_of(check: Check) -> dict[str, Any]:
    """What ``check`` accepts as JSON-ready data, e.g. ``{"type": "integer", "min": 1, "max": 64}``."""
    return dict(getattr(check, "rule", {}))


def type_name(value: Any) -> str:
    return type(value).__name__


def integer(low: int, high: int) -> Check:
    """An int (not a bool) from low to high inclusive."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise Problem(f"is a {type_name(value)}, not an integer: pass a whole number from {low} to {high}")
        if not low <= value <= high:
            raise Problem(f"is out of range: pass a whole number from {low} to {high}")
        return int(value)

    return describe(type="integer", min=low, max=high)(check)


def number(low: float, high: float, what: str, examples: str) -> Check:
    """An int or float (not a bool), finite, from low to high inclusive; kept as a float."""

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise Problem(f"is a {type_name(value)}, not a number: pass {what} such as {examples}")
        if not math.isfinite(value) or not low <= value <= high:
            raise Problem(f"is out of range: pass {what} from {low:g} to {high:g}")
        return float(value)

    return describe(type="number", min=low, max=high)(check)


@describe(type="boolean")
def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Problem(f"is a {type_name(value)}, not a bool: pass True or False")
    return value


@describe(type="name", pattern=NAME_PATTERN.pattern)
def name(value: Any) -> str:
    if not isinstance(value, str):
        raise Problem(f"is a {type_name(value)}, not a string: pass a name such as 'greet'")
    if not NAME_PATTERN.fullmatch(value):
        raise Problem(f"is not a valid name: use {NAME_RULE}")
    return value


def instance(cls: type, example: str) -> Check:
    def check(value: Any) -> Any:
        if not isinstance(value, cls):
            raise Problem(f"is a {type_name(value)}, not a svc.{cls.__name__}: pass {example}")
        return value

    return describe(type=cls.__name__)(check)


def optional(check: Check) -> Check:
    def check_optional(value: Any) -> Any:
        return None if value is None else check(value)

    return describe(**rule_of(check), nullable=True)(check_optional)
