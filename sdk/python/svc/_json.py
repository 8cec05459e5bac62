"""JSON encoding of Python values, shared by the runtime (responses) and the manifest (defaults).

Dataclasses become objects (``dataclasses.asdict``), pydantic models use
``model_dump(mode="json")``, enums their value, bytes base64, sets and tuples
arrays, dates ISO 8601 strings; NaN and infinities are refused, as JSON has none.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import uuid
from typing import Any, TypeGuard, cast


def _default(value: object) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and callable(getattr(type(value), "model_json_schema", None)):
        return model_dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    data = binary(value)
    if data is not None:
        return base64.b64encode(data).decode("ascii")
    if isinstance(value, (set, frozenset)):
        return list(cast("set[object] | frozenset[object]", value))
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, decimal.Decimal, pathlib.PurePath)):
        return str(value)
    raise TypeError(
        f"a {type(value).__name__} cannot be sent as JSON: return a dataclass, a pydantic model, "
        "a dict, list, str, int, float, bool, None or bytes"
    )


def dumps(value: Any) -> str:
    """Compact JSON text of ``value``; TypeError or ValueError when it has no JSON form."""
    return json.dumps(value, default=_default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def to_json_value(value: Any) -> Any:
    """``value`` as plain JSON data (dict, list, str, ...); TypeError or ValueError when impossible."""
    return json.loads(dumps(value))


def is_object(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether ``value``, parsed from JSON, is an object: a dict, whose keys JSON makes strings."""
    return isinstance(value, dict)


def binary(value: object) -> bytes | None:
    """``value`` as bytes when it is binary data (bytes, bytearray, memoryview), else None."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(cast("bytes | bytearray | memoryview[int]", value))
    return None
