"""Value checks shared by the option table, Image and Autoscaler.

A check returns the value to keep (normalised) or raises ``Problem`` with the
end of a sentence that starts with ``<option>=<value>``; ``reject`` turns that
into an ``InvalidOptionError`` naming where the option was written.

A check also says what it accepts, as JSON-ready data (``rule_of``): the bounds
are written once, where the check is made, and ``svc._options.describe_options``
reads them from there.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

from .exceptions import InvalidOptionError

Check = Callable[[Any], Any]
_CheckT = TypeVar("_CheckT", bound=Check)

# App and workload names: svc's one naming rule, a lowercase DNS label, because
# names end up in host names, URL paths, job IDs and service names. The platform
# has the same rule (core/model/names.ts: nameProblem, suggestName,
# NAME_RULE); test/core/model/workload/sdk-parity.test.ts checks that both agree.
NAME_MAX_LENGTH = 63
NAME_RULE = (
    'a lowercase DNS label: 1 to 63 characters from a-z, 0-9 and "-", not starting or ending with "-", without "--"'
)

# Environment variable names, for secrets and Image.env: the platform has the same rule
# (core/model/env-names.ts), and refuses the same names svc sets in every worker itself.
ENV_KEY_RULE = "an environment variable name: a letter or '_' first, then letters, digits and '_'"
ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED_ENV_PREFIX = "SVC_"
RESERVED_ENV_KEYS = ("PYTHONPATH", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME", "VIRTUAL_ENV", "PATH")
MAX_ENV_VALUE_BYTES = 32 * 1024


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


def check_fields(where: str, instance: Any, checks: Mapping[str, Check]) -> None:
    """Checks each field of a frozen dataclass (``Autoscaler``, ``Retries``) and keeps its normalised
    value, or raises InvalidOptionError naming the class and the field."""
    for option, check in checks.items():
        value = getattr(instance, option)
        try:
            object.__setattr__(instance, option, check(value))
        except Problem as problem:
            reject(where, option, value, problem)


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
        whole = int(value)
        if not low <= whole <= high:
            raise Problem(f"is out of range: pass a whole number from {low} to {high}")
        return whole

    return describe(type="integer", min=low, max=high)(check)


def number(low: float, high: float, what: str, examples: str) -> Check:
    """An int or float (not a bool), finite, from low to high inclusive; kept as a float."""

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise Problem(f"is a {type_name(value)}, not a number: pass {what} such as {examples}")
        real = float(value)
        if not math.isfinite(real) or not low <= real <= high:
            raise Problem(f"is out of range: pass {what} from {low:g} to {high:g}")
        return real

    return describe(type="number", min=low, max=high)(check)


@describe(type="boolean")
def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Problem(f"is a {type_name(value)}, not a bool: pass True or False")
    return value


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def derive_name(text: str) -> str:
    """The name ``text`` most likely means: lower case, every '_' turned into '-', runs
    of '-' collapsed to one, '-' stripped from both ends (``say_hello`` → ``say-hello``,
    ``_private_fn`` → ``private-fn``, ``Greet`` → ``greet``).

    A workload declared without ``name=`` is named this way after its function; the
    result may still break the rule (other characters, too long, empty): check it with
    ``name_problem``. The platform's ``suggestName`` is the same function.
    """
    return re.sub(r"-{2,}", "-", text.lower().replace("_", "-")).strip("-")


def _rule_problem(value: str) -> str | None:
    if not value:
        return "must not be empty"
    if len(value) > NAME_MAX_LENGTH:
        return f"is {len(value)} characters long; at most {NAME_MAX_LENGTH} are allowed"
    bad = re.search(r"[^a-z0-9-]", value)
    if bad is not None:
        char = bad.group()
        if "A" <= char <= "Z":
            return f"has the upper-case letter {_quote(char)}; names are lower case"
        return f'has the character {_quote(char)} at position {bad.start() + 1}; only a-z, 0-9 and "-" are allowed'
    if value.startswith("-"):
        return 'must not start with "-"'
    if value.endswith("-"):
        return 'must not end with "-"'
    if "--" in value:
        return 'must not contain "--": svc uses it in URLs to mark previews and workspaces'
    return None


def name_problem(value: str) -> str | None:
    """Why ``value`` breaks the name rule, or None when it follows it; the reason ends with
    a suggestion (``…; try "say-hello"``) when ``derive_name`` makes a valid name of it."""
    problem = _rule_problem(value)
    if problem is None:
        return None
    suggestion = derive_name(value)
    if suggestion != value and _rule_problem(suggestion) is None:
        return f"{problem}; try {_quote(suggestion)}"
    return problem


@describe(type="name", max_length=NAME_MAX_LENGTH, rule=NAME_RULE)
def name(value: Any) -> str:
    """An app or workload name: a lowercase DNS label (``NAME_RULE``)."""
    if not isinstance(value, str):
        raise Problem(f"is a {type_name(value)}, not a string: pass a name such as 'greet'")
    problem = name_problem(value)
    if problem is not None:
        raise Problem(f"{problem} (a name is {NAME_RULE})")
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
