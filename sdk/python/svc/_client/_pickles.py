"""Pickling a call and unpickling its answer, across the ``__main__`` boundary.

``python app.py`` runs the app as ``__main__``, while its container imports it as
``app``. So classes and functions of the script travel by the entry module's name
(``__main__.Point`` leaves as ``app.Point``, and ``app.Point`` comes back as the
script's own ``Point``): ``isinstance`` and ``except MyError`` work on both sides.
The reference is built from ``importlib.import_module`` and ``operator.attrgetter``
only, so the container needs nothing but the standard library to read it.

Anything else is pickled with ``cloudpickle`` when it is importable (lambdas,
local classes), else with ``pickle``, protocol 5, as the runtime does.
"""

from __future__ import annotations

import importlib
import inspect
import io
import operator
import pickle
import sys
from typing import TYPE_CHECKING, Any

PROTOCOL = 5

if TYPE_CHECKING:
    _BasePickler = pickle.Pickler  # what the checkers see: cloudpickle's Pickler is one
else:
    try:
        import cloudpickle

        _BasePickler = cloudpickle.Pickler
    except ImportError:  # cloudpickle is optional
        _BasePickler = pickle.Pickler


class _ModuleRef:
    """Pickles as ``importlib.import_module(name)``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> Any:
        return (importlib.import_module, (self.name,))


def _resolve(root: Any, qualname: str) -> Any:
    for part in qualname.split("."):
        root = getattr(root, part)
    return root


def _script_attribute(module: str, qualname: str) -> Any:
    """The ``__main__`` object ``qualname`` when it is the module-level one, else None."""
    if module != "__main__" or "<locals>" in qualname:
        return None
    try:
        return _resolve(sys.modules["__main__"], qualname)
    except AttributeError:
        return None


class _Pickler(_BasePickler):
    def __init__(self, file: io.BytesIO, entry: str | None) -> None:
        super().__init__(file, protocol=PROTOCOL)
        self._entry = entry

    def reducer_override(self, obj: Any) -> Any:
        if self._entry is not None and (isinstance(obj, type) or inspect.isfunction(obj)):
            qualname = getattr(obj, "__qualname__", "")
            if _script_attribute(getattr(obj, "__module__", ""), qualname) is obj:
                return (operator.attrgetter(qualname), (_ModuleRef(self._entry),))
        parent = getattr(super(), "reducer_override", None)
        return parent(obj) if parent is not None else NotImplemented


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, entry: str | None) -> None:
        super().__init__(file)
        self._entry = entry

    def find_class(self, module: str, name: str) -> Any:
        if self._entry is not None and module == self._entry:
            try:
                return _resolve(sys.modules["__main__"], name)
            except AttributeError:
                pass
        return super().find_class(module, name)


def dumps(value: Any, script_entry: str | None = None) -> bytes:
    """``value`` pickled; with ``script_entry``, ``__main__``'s objects go by that module name."""
    buffer = io.BytesIO()
    _Pickler(buffer, script_entry).dump(value)
    return buffer.getvalue()


def loads(data: bytes, script_entry: str | None = None) -> Any:
    """``data`` unpickled; with ``script_entry``, that module's objects are taken from ``__main__``."""
    return _Unpickler(io.BytesIO(data), script_entry).load()


def dump_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], script_entry: str | None = None, method: str | None = None
) -> bytes:
    """The body of ``POST /api/v1/runs/:id/calls``: ``{"args": [...], "kwargs": {...}}`` pickled, with
    ``"method"`` too for a method of an ``@app.cls`` class (the runtime calls it on the worker's instance)."""
    call: dict[str, Any] = {"args": list(args), "kwargs": dict(kwargs)}
    if method is not None:
        call["method"] = method
    return dumps(call, script_entry)
