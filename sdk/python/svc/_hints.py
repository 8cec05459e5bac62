"""Reading annotations: resolved type hints and the kinds of classes svc understands.

Used by the schema writer and by the runtime's argument checks, so both read a
signature the same way.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
import typing
from typing import Any, TypeGuard

CONTEXT_PARAMETER = "context"
"""Parameter name reserved for ``svc.Context``; never part of a workload's arguments."""


def type_hints(obj: Any) -> dict[str, Any]:
    """``typing.get_type_hints(obj)``, annotation by annotation when that fails.

    ``from __future__ import annotations`` turns annotations into strings; a name that
    cannot be resolved (defined later, or only under TYPE_CHECKING) stays a string
    instead of failing the whole signature.
    """
    try:
        return typing.get_type_hints(obj)
    except Exception:
        pass
    hints: dict[str, Any] = {}
    sources = reversed(obj.__mro__) if isinstance(obj, type) else [obj]
    for source in sources:
        module = sys.modules.get(getattr(source, "__module__", ""), None)
        namespace = getattr(source, "__globals__", None) or (vars(module) if module else {})
        for name, annotation in inspect.get_annotations(source).items():
            hints[name] = _resolve(annotation, namespace)
    return hints


def _resolve(annotation: Any, namespace: dict[str, Any]) -> Any:
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, dict(namespace))  # noqa: S307 - the user's own annotation
    except Exception:
        return annotation


def is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def is_pydantic_model(tp: Any) -> bool:
    """A pydantic v2 model class, recognised without importing pydantic."""
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def is_enum(tp: Any) -> TypeGuard[type[enum.Enum]]:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)
