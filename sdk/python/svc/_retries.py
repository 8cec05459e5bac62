"""``svc.Retries``: how often, and after what pauses, ``.remote()`` runs a failed call of a function again."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from . import _checks

_WHERE = "svc.Retries"
_RANGES = {
    "max_retries": _checks.integer(0, 10),
    "backoff_coefficient": _checks.number(1.0, 10.0, "a growth factor", "1.0 (a constant pause) or 2.0"),
    "initial_delay": _checks.number(0.0, 60.0, "a number of seconds", "0.5 or 1.0"),
    "max_delay": _checks.number(1.0, 60.0, "a number of seconds", "10.0 or 60.0"),
}


@dataclass(frozen=True)
class Retries:
    """Retries of a function's failed calls. Immutable; validated when created.

    A call fails when the function raises, its container dies, or it runs past its
    ``timeout``. The server then waits ``initial_delay * backoff_coefficient ** (n - 1)``
    seconds (at most ``max_delay``) before retry ``n``, and says so in the run's logs.

    Parameters:
        max_retries (int): Retries after the first attempt, 0 to 10. Example: ``Retries(max_retries=3)``
        backoff_coefficient (float): How much longer each pause is than the one before, 1.0 to 10.0.
            Default: ``2.0``.
        initial_delay (float): Seconds before the first retry, 0 to 60. Default: ``1.0``.
        max_delay (float): Longest pause in seconds, 1 to 60. Default: ``60.0``.

    ``retries=3`` on ``@app.function`` means ``Retries(max_retries=3)``.

    Raises:
        svc.InvalidOptionError: a value is of the wrong type or out of range.
    """

    max_retries: int
    backoff_coefficient: float = 2.0
    initial_delay: float = 1.0
    max_delay: float = 60.0

    def __post_init__(self) -> None:
        _checks.check_fields(_WHERE, self, _RANGES)

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first)."""
        return min(self.initial_delay * self.backoff_coefficient ** (retry - 1), self.max_delay)

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: ``{"max_retries", "backoff_coefficient", "initial_delay", "max_delay"}``."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


def describe_fields() -> dict[str, dict[str, Any]]:
    """Each field's default (None: required) and rule, as JSON-ready data (``svc._options.describe_options``)."""
    return {
        field.name: {
            "default": None if field.name == "max_retries" else field.default,
            **_checks.rule_of(_RANGES[field.name]),
        }
        for field in fields(Retries)
    }


def check_retries(value: Any) -> Retries | None:
    """The ``retries=`` option: None, a count (``Retries(max_retries=count)``) or a Retries."""
    if value is None or isinstance(value, Retries):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise _checks.Problem(
            f"is a {_checks.type_name(value)}, not a number of retries: pass an int from 0 to 10, "
            "or svc.Retries(max_retries=3, initial_delay=1.0)"
        )
    if not 0 <= value <= 10:
        raise _checks.Problem("is out of range: pass a whole number of retries from 0 to 10")
    return Retries(max_retries=value)
