"""Exceptions raised by svc.

Hierarchy::

    Error                    base class of every exception svc raises on purpose
     └── InvalidOptionError  (also a ValueError) a definition cannot be used:
                             an option of App, Image, Autoscaler or a workload
                             decorator, or the decorated function itself

Both are raised while your module is imported (at decoration time), so
``python -m svc.manifest`` and ``svc deploy`` report them before anything runs.

Why one class for wrong types and wrong values: the fix is the same in both
cases (edit the value written in the decorator), the line between the two is
blurry (``memory="512MB"`` is a string, as required, in a form svc rejects),
and callers then need one ``except`` clause. It subclasses ``ValueError`` so
that generic ``except ValueError`` handlers keep working. ``option`` names the
option at fault when there is one.
"""

from __future__ import annotations

__all__ = ["Error", "InvalidOptionError"]


class Error(Exception):
    """Base class of the exceptions svc raises."""


class InvalidOptionError(Error, ValueError):
    """An option, or the decorated object, cannot be used as written.

    The message names the decorator or class, the option, the value given
    and how to fix it.
    """

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option
