"""``svc.Image``: the Python environment a workload runs in."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

from . import _checks

_VERSION = re.compile(r"3\.(\d{1,2})")
_MIN_MINOR = 10


def current_python_version() -> str:
    """``major.minor`` of the running interpreter: the default of ``Image.python_version``."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _check_version(value: Any) -> str:
    if isinstance(value, float):
        raise _checks.Problem(f'is a float: pass a string such as "{value}" (as a float, 3.10 would read as 3.1)')
    if not isinstance(value, str):
        raise _checks.Problem(f'is a {_checks.type_name(value)}, not a string: pass a version such as "3.11"')
    match = _VERSION.fullmatch(value)
    if match is None:
        raise _checks.Problem('is not a major.minor Python version: pass a version such as "3.11"')
    if int(match.group(1)) < _MIN_MINOR:
        raise _checks.Problem(f'is too old: svc runs on Python 3.{_MIN_MINOR} or newer, such as "3.11"')
    return value


def _check_requirement(value: Any) -> str:
    if not isinstance(value, str):
        raise _checks.Problem(
            f"is a {_checks.type_name(value)}, not a string: pass pip requirements such as 'numpy>=1.26'"
        )
    requirement = value.strip()
    if not requirement:
        raise _checks.Problem("is empty: pass pip requirements such as 'numpy>=1.26'")
    if "\n" in requirement or "\r" in requirement:
        raise _checks.Problem("spans several lines: pass each requirement as its own list item")
    if requirement.startswith("-"):
        raise _checks.Problem("is a pip option, not a requirement: pass requirements such as 'numpy>=1.26'")
    return requirement


class Image:
    """The Python environment of a workload: a Python version plus pip packages.

    Images are immutable: ``add_python_packages`` returns a new Image, so one base
    image can be shared and extended safely. Two images with the same version and
    packages are equal and get the same id in the manifest.

    Parameters:
        python_version (str | None): Python ``major.minor`` to run, 3.10 or newer.
            Default: ``None``, the version of the Python that runs
            ``python -m svc.manifest``.
            Example: ``svc.Image(python_version="3.11")``

    Example::

        image = svc.Image(python_version="3.11").add_python_packages(["numpy>=1.26"])

    Raises:
        svc.InvalidOptionError: the version is not a ``"3.X"`` string.
    """

    __slots__ = ("_python_version", "_python_packages")
    # Declared for type checkers; set once through object.__setattr__ (the class is immutable).
    _python_version: str | None
    _python_packages: tuple[str, ...]

    def __init__(self, python_version: str | None = None) -> None:
        try:
            version = _checks.optional(_check_version)(python_version)
        except _checks.Problem as problem:
            _checks.reject("svc.Image", "python_version", python_version, problem)
        object.__setattr__(self, "_python_version", version)
        object.__setattr__(self, "_python_packages", ())

    @property
    def python_version(self) -> str | None:
        """The ``major.minor`` version asked for, or None for the manifest writer's version."""
        return self._python_version

    @property
    def python_packages(self) -> tuple[str, ...]:
        """pip requirement strings, in the order added, without duplicates."""
        return self._python_packages

    def add_python_packages(self, packages: Iterable[str]) -> Image:
        """Returns a new Image that also installs ``packages`` (pip requirement strings).

        Parameters:
            packages (list[str]): requirements such as ``"numpy>=1.26"``; each must be a
                non-empty one-line string and not a pip option. Packages already in the
                image are kept once, in their first position.
                Example: ``image.add_python_packages(["numpy>=1.26", "pillow"])``

        Raises:
            svc.InvalidOptionError: ``packages`` is not a list of requirement strings.
        """
        where = "svc.Image.add_python_packages"
        if not _is_list(packages):
            _checks.reject(
                where,
                "packages",
                packages,
                f"is a {_checks.type_name(packages)}, not a list: pass a list such as ['numpy>=1.26']",
            )
        added = list(self._python_packages)
        for item in packages:
            try:
                requirement = _check_requirement(item)
            except _checks.Problem as problem:
                _checks.reject(where, "packages", item, problem)
            if requirement not in added:
                added.append(requirement)
        image = Image(self._python_version)
        object.__setattr__(image, "_python_packages", tuple(added))
        return image

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("svc.Image is immutable: add_python_packages returns a new Image")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Image):
            return NotImplemented
        return (self._python_version, self._python_packages) == (other._python_version, other._python_packages)

    def __hash__(self) -> int:
        return hash((self._python_version, self._python_packages))

    def __repr__(self) -> str:
        text = f"Image(python_version={self._python_version!r})"
        if self._python_packages:
            text += f".add_python_packages({list(self._python_packages)!r})"
        return text


def _is_list(value: object) -> bool:
    """Whether ``value`` (what a caller without a type checker may pass) is a list-like, not one string."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))
