"""Importing the user's module and finding its App: shared by the manifest command and the runtime."""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from ._app import App
from ._cls import stray_marks


def _is_module_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


class EntryError(Exception):
    """The command was pointed at something that is not a svc app (no such file, no App, ...)."""


def resolve_target(target: str) -> tuple[str, str]:
    """``(project root, module name)`` of a file path or a module name.

    A file (``examples/quickstart/app.py``): its folder is the root, its stem the
    module. A module name (``app``, ``pkg.app``): the current folder is the root.
    """
    looks_like_path = target.endswith(".py") or os.sep in target or "/" in target
    if looks_like_path or os.path.isfile(target):
        if not os.path.isfile(target):
            raise EntryError(f"no such file: {target}")
        path = os.path.abspath(target)
        stem = os.path.splitext(os.path.basename(path))[0]
        if not stem.isidentifier():
            raise EntryError(f"{target}: {stem!r} is not a valid Python module name; rename the file")
        return os.path.dirname(path), stem
    if not _is_module_name(target):
        raise EntryError(f"{target!r} is neither a .py file nor a module name such as 'app' or 'pkg.app'")
    return os.getcwd(), target


def import_entry(root: str, module: str) -> ModuleType:
    """Imports ``module`` with ``root`` first on sys.path.

    Raises EntryError when the module itself does not exist under root; any other
    exception (a syntax error, a failing import inside the module, an invalid
    option) propagates unchanged, with its traceback.
    """
    root = os.path.abspath(root)
    if not sys.path or sys.path[0] != root:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and (module == error.name or module.startswith(error.name + ".")):
            raise EntryError(f"no module named {module!r} in {root}") from None
        raise


def find_app(module: ModuleType) -> App:
    """The one ``svc.App`` defined at module level; EntryError when there is none or several."""
    found: dict[int, tuple[str, App]] = {}
    for name, value in vars(module).items():
        if isinstance(value, App) and id(value) not in found:
            found[id(value)] = (name, value)
    if not found:
        raise EntryError(
            f'no svc.App in module {module.__name__!r}: define one at module level, e.g. app = svc.App("my-app")'
        )
    if len(found) > 1:
        names = ", ".join(sorted(name for name, _ in found.values()))
        raise EntryError(f"module {module.__name__!r} defines more than one svc.App ({names}); keep exactly one")
    app = next(iter(found.values()))[1]
    stray = stray_marks(vars(module), {w.target for w in app.workloads if w.cls is not None})
    if stray is not None:
        raise EntryError(stray)
    return app
