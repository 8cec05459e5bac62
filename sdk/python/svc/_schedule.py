"""``svc.Cron`` and ``svc.Period``: when a deployed function runs by itself (``schedule=``).

The SDK checks what it reasonably can (five fields, the characters and numbers
each field may hold, a known time zone); the platform parses the expression
fully with a cron library when the app is deployed and names the field it refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union, cast

from . import _checks

# Field name, lowest and highest number; names of months and days are allowed where cron allows them.
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_NAMES = {
    "month": ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
    "day of week": ("sun", "mon", "tue", "wed", "thu", "fri", "sat"),
}
_TOKEN = re.compile(r"\*|[0-9]+|[a-z]+|[,/-]")
_PERIOD_MAX_SECONDS = 366 * 86400


def _field_problem(index: int, text: str) -> str | None:
    field, low, high = _FIELDS[index]
    where = f"field {index + 1} ({field}) {text!r}"
    tokens = _TOKEN.findall(text.lower())
    if "".join(tokens) != text.lower():
        return f"{where} holds characters cron does not know: use digits, *, ',', '-' and '/'"
    previous = ""
    for token in tokens:
        if token.isdigit():
            # After '/', a step: any positive number.
            if previous == "/":
                if int(token) == 0:
                    return f"{where} has a step of 0: use /1 or more"
            elif not low <= int(token) <= high:
                return f"{where} has {token}, out of range: use {low} to {high}"
        elif token.isalpha() and token not in _NAMES.get(field, ()):
            names = _NAMES.get(field)
            allowed = f"names such as {names[0]!r}" if names else "no names"
            return f"{where} has {token!r}, which is not a {field} name: this field takes numbers and {allowed}"
        previous = token
    return None


def _timezone_problem(timezone: str) -> str | None:
    import zoneinfo

    if not zoneinfo.available_timezones():
        return None  # no time zone database here: the platform checks it
    try:
        zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return "is not an IANA time zone name: use one such as 'UTC' or 'Europe/Paris'"
    return None


@dataclass(frozen=True)
class Cron:
    """Run a deployed function on a cron schedule, e.g. ``schedule=svc.Cron("0 3 * * *")``.

    Parameters:
        expression (str): Five fields: minute, hour, day of month, month, day of week
            (numbers, ``*``, lists ``1,15``, ranges ``1-5``, steps ``*/10``, and
            month and day names ``jan``, ``mon``). Example: ``"*/15 9-17 * * mon-fri"``
        timezone (str): The IANA time zone the expression is read in. Default: ``"UTC"``.
        overlap (bool): Start a run on a tick even while the previous one still runs.
            Default: ``False``: such a tick is skipped (and recorded as skipped).

    Raises:
        svc.InvalidOptionError: the expression or the time zone is not valid.
    """

    expression: str
    timezone: str = "UTC"
    overlap: bool = False

    def __post_init__(self) -> None:
        where = "svc.Cron"
        # Typed str, but a caller without a type checker may pass anything: checked as what it is.
        expression = cast(object, self.expression)
        if not isinstance(expression, str):
            _checks.reject(
                where,
                "expression",
                expression,
                f"is a {_checks.type_name(expression)}, not a string: pass five fields such as '0 3 * * *'",
            )
        fields = expression.split()
        if len(fields) != 5:
            _checks.reject(
                where,
                "expression",
                self.expression,
                f"has {len(fields)} fields, not 5 (minute, hour, day of month, month, day of week): write it like '0 3 * * *'",
            )
        for index, text in enumerate(fields):
            problem = _field_problem(index, text)
            if problem is not None:
                _checks.reject(where, "expression", self.expression, problem)
        timezone = cast(object, self.timezone)
        if not isinstance(timezone, str) or not timezone:
            _checks.reject(
                where, "timezone", self.timezone, "is not a time zone name: pass one such as 'UTC' or 'Europe/Paris'"
            )
        problem = _timezone_problem(self.timezone)
        if problem is not None:
            _checks.reject(where, "timezone", self.timezone, problem)
        try:
            _checks.boolean(self.overlap)
        except _checks.Problem as failure:
            _checks.reject(where, "overlap", self.overlap, failure)
        object.__setattr__(self, "expression", " ".join(fields))

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: ``{"cron", "timezone", "overlap"}``."""
        return {"cron": self.expression, "timezone": self.timezone, "overlap": self.overlap}


@dataclass(frozen=True)
class Period:
    """Run a deployed function every so often, e.g. ``schedule=svc.Period(minutes=5)``.

    Runs start on the multiples of the period since the Unix epoch (every 5 minutes: at
    :00, :05, …). On Nomad, which runs schedules as cron jobs, the period must be one a
    cron expression writes: a divisor of a minute, an hour or a day (a deploy refuses others there).

    Parameters:
        days, hours, minutes, seconds (int): Added up; whole seconds, from 1 second to 366 days.
        overlap (bool): Start a run on a tick even while the previous one still runs.
            Default: ``False``: such a tick is skipped (and recorded as skipped).

    Raises:
        svc.InvalidOptionError: a part is not a whole number, or the total is out of range.
    """

    days: int = 0
    hours: int = 0
    minutes: int = 0
    seconds: int = 0
    overlap: bool = False

    def __post_init__(self) -> None:
        where = "svc.Period"
        for part in ("days", "hours", "minutes", "seconds"):
            try:
                _checks.integer(0, _PERIOD_MAX_SECONDS)(getattr(self, part))
            except _checks.Problem as problem:
                _checks.reject(where, part, getattr(self, part), problem)
        total = self.total_seconds
        if not 1 <= total <= _PERIOD_MAX_SECONDS:
            _checks.reject(where, "seconds", total, f"makes a period of {total} seconds: use 1 second to 366 days")
        try:
            _checks.boolean(self.overlap)
        except _checks.Problem as failure:
            _checks.reject(where, "overlap", self.overlap, failure)

    @property
    def total_seconds(self) -> int:
        return ((self.days * 24 + self.hours) * 60 + self.minutes) * 60 + self.seconds

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: ``{"every": <seconds>, "overlap"}``."""
        return {"every": self.total_seconds, "overlap": self.overlap}


Schedule = Union[Cron, Period]


@_checks.describe(type="schedule")
def check_schedule(value: Any) -> Schedule:
    """The ``schedule=`` option: a svc.Cron or a svc.Period."""
    if not isinstance(value, (Cron, Period)):
        raise _checks.Problem(
            f"is a {_checks.type_name(value)}, not a svc.Cron or svc.Period: pass svc.Cron('0 3 * * *') or svc.Period(minutes=5)"
        )
    return value
