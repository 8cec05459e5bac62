"""Which files of a project stay out of its bundle: ``.svcignore`` plus defaults.

``.svcignore`` (at the project root) uses the gitignore syntax:

- blank lines and lines starting with ``#`` are ignored (``\\#`` starts a pattern with ``#``);
- ``!`` re-includes what an earlier pattern excluded (``\\!`` for a literal ``!``), but
  nothing inside an excluded folder comes back: excluded folders are not read at all;
- a trailing ``/`` matches folders only;
- a pattern with a ``/`` at its start or in its middle is anchored at the project root;
  without one it matches at any depth;
- ``*`` matches anything but ``/``, ``?`` one character but ``/``, ``[a-z]`` a class;
  ``**/x`` matches ``x`` in every folder, ``x/**`` everything inside ``x``, ``a/**/b``
  zero or more folders between.

The defaults come first, so ``.svcignore`` may re-include one of them (``!env/``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Patterns every bundle excludes before ``.svcignore`` is read.
DEFAULT_PATTERNS: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".venv/",
    "venv/",
    "node_modules/",
    ".svc/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".DS_Store",
)

IGNORE_FILE = ".svcignore"
VENV_MARK = "pyvenv.cfg"
"""The file that makes a folder a virtual environment, left out whatever its name (``is_venv``)."""


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file, compiled."""

    text: str
    negate: bool
    dir_only: bool
    regex: re.Pattern[str]

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.regex.fullmatch(path) is not None


# Cached: ``.remote()`` checks the project for changes on every call, with the same patterns each time.
@functools.lru_cache(maxsize=1024)
def parse_pattern(line: str) -> Pattern | None:
    """Compiles one ignore-file line; None for blank lines and comments."""
    text = line.rstrip("\n").rstrip("\r")
    text = _strip_trailing_spaces(text)
    if not text or text.startswith("#"):
        return None
    negate = False
    if text.startswith("!"):
        negate, text = True, text[1:]
    elif text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dir_only = text.endswith("/") and not text.endswith("\\/")
    text = text.rstrip("/") if dir_only else text
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    body = _translate(text)
    regex = re.compile(body if anchored else f"(?:.*/)?{body}", re.DOTALL)
    return Pattern(line.strip(), negate, dir_only, regex)


def _strip_trailing_spaces(text: str) -> str:
    """Trailing spaces are dropped unless the last one is escaped with a backslash."""
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


def _translate(pattern: str) -> str:
    """The regex of a gitignore glob (without anchoring)."""
    out: list[str] = []
    segments = pattern.split("/")
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == last:
                # `x/**`: everything inside x (the separator before it is already written).
                out.append(".+" if index > 0 else ".*")
            else:
                # `**/` at the start or `/**/` in the middle: zero or more folders.
                out.append("(?:.*/)?")
            continue
        out.append(_translate_segment(segment))
        if index != last:
            out.append("/")
    return "".join(out)


def _translate_segment(segment: str) -> str:
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1  # other runs of asterisks are plain asterisks
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(segment[i]))
        elif char == "[":
            end = _class_end(segment, i)
            if end < 0:
                out.append(re.escape(char))
            else:
                inner = segment[i + 1 : end]
                negated = inner[:1] in ("!", "^")
                if negated:
                    inner = inner[1:]
                out.append(f"[^/{_class_body(inner)}]" if negated else f"[{_class_body(inner)}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _class_body(inner: str) -> str:
    """A glob class body as a regex class body: ranges kept, everything else literal."""
    out: list[str] = []
    i = 0
    while i < len(inner):
        char = inner[i]
        if char == "\\" and i + 1 < len(inner):
            i += 1
            out.append(re.escape(inner[i]))
        else:
            out.append("-" if char == "-" else re.escape(char))
        i += 1
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """Index of the `]` closing the class opened at `start`, or -1."""
    i = start + 1
    if i < len(segment) and segment[i] in ("!", "^"):
        i += 1
    if i < len(segment) and segment[i] == "]":
        i += 1
    while i < len(segment):
        if segment[i] == "]":
            return i
        i += 1
    return -1


class IgnoreRules:
    """The defaults, then the patterns of ``.svcignore``; the last matching pattern wins."""

    def __init__(self, patterns: Iterable[str] = (), *, defaults: Iterable[str] = DEFAULT_PATTERNS):
        self.defaults = [p for p in map(parse_pattern, defaults) if p is not None]
        self.patterns = [p for p in map(parse_pattern, patterns) if p is not None]

    @classmethod
    def from_text(cls, text: str) -> IgnoreRules:
        return cls(text.splitlines())

    def ignored(self, path: str, is_dir: bool, *, is_venv: bool = False) -> bool:
        """Whether the project-relative POSIX ``path`` stays out of the bundle.

        ``is_venv`` marks a folder holding ``pyvenv.cfg`` (a virtual environment, whatever
        its name): excluded like a default, so ``.svcignore`` can still re-include it.
        """
        verdict = False
        for pattern in self.defaults:
            if pattern.matches(path, is_dir):
                verdict = not pattern.negate
        if is_venv:
            verdict = True
        for pattern in self.patterns:
            if pattern.matches(path, is_dir):
                verdict = not pattern.negate
        return verdict
