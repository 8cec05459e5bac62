"""The project files an Image reads when the manifest is written: requirements files and pyproject.toml.

A path is relative to the file of the module that calls the Image method, not to the
current directory, so that ``python -m svc.manifest`` run from anywhere reads the same
file. In svc's runtime (a container) nothing is read: see ``stop_reading``. Only what a file holds travels in the manifest: the server never sees the project's
folder, so a requirements file that names another file (``-r``, ``-c``) is refused here.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from . import _checks

MAX_FILE_BYTES = 256 * 1024
"""A requirements file or pyproject.toml above this size is refused (the platform's manifest check
allows as many characters)."""

# `-r other.txt`, `-rother.txt`, `--requirement=other.txt`, `-c …`, `--constraint …`: pip would open
# another file, which the build server does not have. The platform checks the same (manifest/checks.ts).
_INCLUDE = re.compile(r"(-[rc]|--requirement\b|--constraint\b)")


_reading = True


def stop_reading() -> None:
    """Called by the runtime before it imports the user's module: in a container the image is built
    already, and a file outside the project folder (``../requirements.txt``) is not in its bundle,
    so ``pip_install_from_requirements`` and ``pip_install_from_pyproject`` read nothing there."""
    global _reading
    _reading = False


def reading() -> bool:
    """Whether Image methods read project files: everywhere but in svc's runtime."""
    return _reading


def caller_file(frame: FrameType | None) -> str | None:
    """The ``__file__`` of the module whose code runs in ``frame``; None in a REPL, ``python -c`` or a notebook."""
    if frame is None:
        return None
    file = frame.f_globals.get("__file__")
    return file if isinstance(file, str) else None


def resolve(where: str, path: Any, caller: str | None) -> Path:
    """``path`` made absolute: relative to the folder of ``caller`` (the calling module's file), else to the current directory."""
    if not isinstance(path, (str, os.PathLike)):
        _checks.reject(
            where, "path", path, f"is a {_checks.type_name(path)}, not a path: pass a string such as 'requirements.txt'"
        )
    text = os.fsdecode(os.fspath(path))  # pyright: ignore[reportUnknownArgumentType]
    if not text.strip():
        _checks.reject(where, "path", path, "is empty: pass a file such as 'requirements.txt'")
    given = Path(text)
    base = Path(caller).resolve().parent if caller is not None else Path.cwd()
    return base / given


def read_text(where: str, path: Any, file: Path, example: str) -> str:
    """The UTF-8 text of ``file`` (a leading byte-order mark dropped), or InvalidOptionError saying what is
    wrong and how to fix it; ``example`` is a file name such as ``'requirements.txt'``."""

    def refuse(problem: str) -> NoReturn:
        _checks.reject(where, "path", path, f"({file}) {problem}")

    if not file.exists():
        refuse(
            "does not exist: a relative path is read from the folder of the file that calls "
            f"{where.rsplit('.', 1)[-1]}; pass the file's path relative to it, such as {example}, or an absolute path"
        )
    if file.is_dir():
        refuse(f"is a folder: pass the file in it, such as {example}")
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            refuse(f"is {size} bytes; at most {MAX_FILE_BYTES} (256 KiB) are read: split it, or list fewer packages")
        data = file.read_bytes()
    except OSError as error:
        refuse(f"cannot be read ({error.strerror or error}): check its permissions")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        refuse(f"is not UTF-8 text (byte {error.start}): save it as UTF-8")
    return text.removeprefix("\ufeff")


def check_no_includes(where: str, path: Any, name: str, text: str) -> None:
    """Refuses a requirements file with a line that makes pip open another file (``-r``, ``-c``)."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if _INCLUDE.match(stripped) is None:
            continue
        if stripped.startswith(("-c", "--constraint")):
            fix = "svc sends only this file's text to the build: pin those versions in this file instead"
        else:
            fix = (
                "svc sends only this file's text to the build: remove the line and call "
                "pip_install_from_requirements on that file too"
            )
        _checks.reject(where, "path", path, f"({name}) line {number} {stripped!r} names another file; {fix}")


def load_toml(where: str, path: Any, text: str) -> dict[str, Any]:
    """``text`` parsed as TOML with tomllib (Python 3.11+) or tomli (3.10)."""
    if sys.version_info >= (3, 11):
        import tomllib

        parser: Any = tomllib
    else:  # pragma: no cover - only on Python 3.10
        try:
            parser = importlib.import_module("tomli")
        except ImportError:
            _checks.reject(
                where,
                "path",
                path,
                "cannot be read on Python 3.10 without tomli: pip install tomli, or run the manifest with Python 3.11+",
            )
    try:
        document: dict[str, Any] = parser.loads(text)
    except parser.TOMLDecodeError as error:
        _checks.reject(where, "path", path, f"is not valid TOML ({error}): fix the file")
    return document


def pyproject_dependencies(where: str, path: Any, document: dict[str, Any], groups: list[str]) -> list[Any]:
    """``[project].dependencies`` then each named ``[project.optional-dependencies]`` group, as written."""
    project = document.get("project")
    if not isinstance(project, dict):
        _checks.reject(where, "path", path, "has no [project] table: declare dependencies = [...] under [project]")
    table: dict[str, Any] = project  # pyright: ignore[reportUnknownVariableType]
    if "dependencies" in (table.get("dynamic") or []):
        _checks.reject(
            where,
            "path",
            path,
            "declares its dependencies dynamic, which only its build backend can read: "
            "list them in [project].dependencies, or use pip_install_from_requirements",
        )
    found = [*_string_list(where, path, table.get("dependencies", []), "[project].dependencies")]
    optional = table.get("optional-dependencies", {})
    if not isinstance(optional, dict):
        _checks.reject(where, "path", path, "has a [project.optional-dependencies] that is not a table")
    known: dict[str, Any] = optional  # pyright: ignore[reportUnknownVariableType]
    for group in groups:
        if group not in known:
            names = ", ".join(sorted(known)) or "(none)"
            _checks.reject(
                where,
                "optional_dependencies",
                group,
                f"is not a group of [project.optional-dependencies]; known: {names}",
            )
        found += _string_list(where, path, known[group], f"[project.optional-dependencies].{group}")
    return found


def _string_list(where: str, path: Any, value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        _checks.reject(where, "path", path, f"has a {what} that is a {_checks.type_name(value)}, not a list of strings")
    return list(value)  # pyright: ignore[reportUnknownArgumentType]
