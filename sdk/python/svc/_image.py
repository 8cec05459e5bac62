"""``svc.Image``: the Python environment a workload runs in."""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Iterable, Mapping
from types import FrameType
from typing import Any, cast

from . import _checks, _image_files
from .exceptions import InvalidOptionError

# The platform's bounds (core/model/workload/rules.ts: requirementsFileRule.maxFiles, MAX_IMAGE_ENV).
MAX_REQUIREMENTS_FILES = 32
MAX_ENV_VARIABLES = 100

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
    """The Python environment of a workload: a Python version, pip packages and environment variables.

    Images are immutable: every method returns a new Image, so one base image can be
    shared and extended safely. Two images with the same version, packages,
    requirements files and variables are equal and get the same id in the manifest.

    Parameters:
        python_version (str | None): Python ``major.minor`` to run, 3.10 or newer.
            Default: ``None``, the version of the Python that runs
            ``python -m svc.manifest``.
            Example: ``svc.Image(python_version="3.11")``

    Example::

        image = (
            svc.Image(python_version="3.11")
            .add_python_packages(["numpy>=1.26"])
            .pip_install_from_requirements("requirements.txt")
            .env({"HF_HOME": "/tmp/hf"})
        )

    Raises:
        svc.InvalidOptionError: the version is not a ``"3.X"`` string.
    """

    __slots__ = ("_python_version", "_python_packages", "_requirements_files", "_env")
    # Declared for type checkers; set once through object.__setattr__ (the class is immutable).
    _python_version: str | None
    _python_packages: tuple[str, ...]
    _requirements_files: tuple[tuple[str, str], ...]
    _env: tuple[tuple[str, str], ...]

    def __init__(self, python_version: str | None = None) -> None:
        try:
            version = _checks.optional(_check_version)(python_version)
        except _checks.Problem as problem:
            _checks.reject("svc.Image", "python_version", python_version, problem)
        object.__setattr__(self, "_python_version", version)
        object.__setattr__(self, "_python_packages", ())
        object.__setattr__(self, "_requirements_files", ())
        object.__setattr__(self, "_env", ())

    @property
    def python_version(self) -> str | None:
        """The ``major.minor`` version asked for, or None for the manifest writer's version."""
        return self._python_version

    @property
    def python_packages(self) -> tuple[str, ...]:
        """pip requirement strings, in the order added, without duplicates."""
        return self._python_packages

    @property
    def requirements_files(self) -> tuple[tuple[str, str], ...]:
        """``(name, text)`` of each requirements file read by ``pip_install_from_requirements``, in the order added."""
        return self._requirements_files

    @property
    def environment(self) -> dict[str, str]:
        """The variables set by ``env``, sorted by name (a copy)."""
        return dict(self._env)

    def add_python_packages(self, packages: Iterable[str]) -> Image:
        """Returns a new Image that also installs ``packages`` (pip requirement strings).

        Parameters:
            packages (list[str]): requirements as pip takes them: ``"numpy>=1.26"``,
                ``"uvicorn[standard]"``, ``'tomli; python_version < "3.11"'``,
                ``"pkg @ https://example.com/pkg-1.0-py3-none-any.whl"``. Each must be a
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
        return self._with_packages(where, "packages", packages)

    def pip_install_from_requirements(self, path: str | os.PathLike[str]) -> Image:
        """Returns a new Image that also installs the requirements file at ``path``.

        The file is read now, when the manifest is written (not in the containers, where the
        image is built already), and its text travels in the manifest: the build installs it with pip (``-r``), so everything pip reads in a
        requirements file works (versions, markers, hashes, ``--index-url``), except a line
        that names another file (``-r``, ``-c``): the build server does not have it.

        Parameters:
            path (str | os.PathLike): the requirements file. A relative path is read from the
                folder of the Python file that calls this method (not the current directory);
                in a REPL or ``python -c``, from the current directory.
                Example: ``svc.Image().pip_install_from_requirements("requirements.txt")``

        Raises:
            svc.InvalidOptionError: the file is missing, a folder, unreadable, over 256 KiB,
                not UTF-8, or has a ``-r``/``-c`` line.
        """
        where = "svc.Image.pip_install_from_requirements"
        if not _image_files.reading():
            return self
        file = _image_files.resolve(where, path, _image_files.caller_file(_caller_frame()))
        text = _image_files.read_text(where, path, file, "'requirements.txt'")
        _image_files.check_no_includes(where, path, file.name, text)
        entry = (file.name, text)
        if entry in self._requirements_files:
            return self
        if len(self._requirements_files) >= MAX_REQUIREMENTS_FILES:
            _checks.reject(
                where,
                "path",
                path,
                f"would be file {MAX_REQUIREMENTS_FILES + 1}; an image installs at most {MAX_REQUIREMENTS_FILES}",
            )
        return self._copy(_requirements_files=(*self._requirements_files, entry))

    def pip_install_from_pyproject(
        self, path: str | os.PathLike[str], optional_dependencies: Iterable[str] = ()
    ) -> Image:
        """Returns a new Image that also installs the dependencies a ``pyproject.toml`` declares.

        The file is read now, when the manifest is written: its ``[project].dependencies``
        and the ``[project.optional-dependencies]`` groups named are added as with
        ``add_python_packages`` (the project itself is not installed).

        Parameters:
            path (str | os.PathLike): the ``pyproject.toml``; a relative path is read from
                the folder of the Python file that calls this method, as in
                ``pip_install_from_requirements``.
            optional_dependencies (list[str]): names of optional-dependency groups to add too.
                Example: ``svc.Image().pip_install_from_pyproject("pyproject.toml", ["server"])``

        Raises:
            svc.InvalidOptionError: the file is missing or not valid TOML, has no ``[project]``
                table, or has no group of a name given; a dependency is not a requirement string.
        """
        where = "svc.Image.pip_install_from_pyproject"
        if not _is_list(optional_dependencies):
            _checks.reject(
                where,
                "optional_dependencies",
                optional_dependencies,
                f"is a {_checks.type_name(optional_dependencies)}, not a list: pass a list such as ['server']",
            )
        if not _image_files.reading():
            return self
        groups: list[object] = list(optional_dependencies)
        for group in groups:
            if not isinstance(group, str):
                _checks.reject(where, "optional_dependencies", group, "is not a string: pass group names")
        file = _image_files.resolve(where, path, _image_files.caller_file(_caller_frame()))
        text = _image_files.read_text(where, path, file, "'pyproject.toml'")
        document = _image_files.load_toml(where, path, text)
        names = [str(group) for group in groups]
        return self._with_packages(
            where, "dependencies", _image_files.pyproject_dependencies(where, path, document, names)
        )

    def env(self, variables: Mapping[str, str]) -> Image:
        """Returns a new Image whose containers also get the environment ``variables``.

        Later calls add to earlier ones; a name set again takes the later value. A
        workload's secrets win over these, and svc's own variables over both. Values are
        visible in the manifest: keep secret ones in ``svc.Secret``.

        Parameters:
            variables (dict[str, str]): names (a letter or ``_`` first, then letters, digits
                and ``_``; not ``SVC_*`` nor a variable svc sets itself, such as ``PYTHONPATH``)
                to string values.
                Example: ``svc.Image().env({"HF_HOME": "/tmp/hf", "OMP_NUM_THREADS": "1"})``

        Raises:
            svc.InvalidOptionError: ``variables`` is not a dict of names to strings.
        """
        where = "svc.Image.env"
        given = cast(object, variables)
        if not isinstance(given, Mapping):
            _checks.reject(
                where,
                "variables",
                variables,
                f'is a {_checks.type_name(variables)}, not a dict: pass a dict such as {{"HF_HOME": "/tmp/hf"}}',
            )
        merged = dict(self._env)
        for key, value in cast("Mapping[object, object]", given).items():
            name = _check_env_key(where, key)
            merged[name] = _check_env_value(where, name, value)
        if len(merged) > MAX_ENV_VARIABLES:
            raise InvalidOptionError(
                f"{where}: the image would set {len(merged)} variables; an image sets at most {MAX_ENV_VARIABLES}",
                option="variables",
            )
        return self._copy(_env=tuple(sorted(merged.items())))

    def _with_packages(self, where: str, option: str, packages: Iterable[Any]) -> Image:
        added = list(self._python_packages)
        for item in packages:
            try:
                requirement = _check_requirement(item)
            except _checks.Problem as problem:
                _checks.reject(where, option, item, problem)
            if requirement not in added:
                added.append(requirement)
        return self._copy(_python_packages=tuple(added))

    def _copy(self, **changes: Any) -> Image:
        image = Image(self._python_version)
        for slot in self.__slots__[1:]:
            object.__setattr__(image, slot, changes.get(slot, getattr(self, slot)))
        return image

    def _key(self) -> tuple[Any, ...]:
        return (self._python_version, self._python_packages, self._requirements_files, self._env)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("svc.Image is immutable: its methods return a new Image")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Image):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        text = f"Image(python_version={self._python_version!r})"
        if self._python_packages:
            text += f".add_python_packages({list(self._python_packages)!r})"
        for name, _ in self._requirements_files:
            text += f".pip_install_from_requirements({name!r})"
        if self._env:
            text += f".env({dict(self._env)!r})"
        return text


def _check_env_key(where: str, key: object) -> str:
    if not isinstance(key, str) or not _checks.ENV_KEY.fullmatch(key):
        _checks.reject(where, "variables", key, f"is not {_checks.ENV_KEY_RULE}: use a name such as 'HF_HOME'")
    if key.startswith(_checks.RESERVED_ENV_PREFIX) or key in _checks.RESERVED_ENV_KEYS:
        reserved = ", ".join(_checks.RESERVED_ENV_KEYS)
        _checks.reject(
            where,
            "variables",
            key,
            f"is a variable svc sets in every container itself ({_checks.RESERVED_ENV_PREFIX}*, {reserved}): "
            "choose another name",
        )
    return key


def _check_env_value(where: str, key: str, value: object) -> str:
    if not isinstance(value, str):
        _checks.reject(
            where,
            f"variables[{key!r}]",
            value,
            f"is a {_checks.type_name(value)}, not a string: pass the value as a string, such as '1'",
        )
    if "\0" in value or len(value.encode()) > _checks.MAX_ENV_VALUE_BYTES:
        # Not repeated in the message: it may be long.
        raise InvalidOptionError(
            f"{where}: the value of {key} holds a NUL character or is over {_checks.MAX_ENV_VALUE_BYTES} bytes; "
            "keep large data in a file",
            option="variables",
        )
    return value


def _caller_frame() -> FrameType | None:
    """The frame of the code that called the Image method that calls this."""
    here = inspect.currentframe()
    method = here.f_back if here is not None else None
    return method.f_back if method is not None else None


def _is_list(value: object) -> bool:
    """Whether ``value`` (what a caller without a type checker may pass) is a list-like, not one string."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))
