"""JSON Schema of parameters and return values, one annotation kind at a time (docs/manifest.md)."""

from __future__ import annotations

import enum
import sys
import typing
from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, TypedDict, Union

import pytest
from svc._schema import parameters_schema, returns_schema, schema_for


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    x: int
    y: float = 0.0
    tags: list[str] = field(default_factory=list)


@dataclass
class Node:
    value: int
    children: list[Node]


class Movie(TypedDict, total=False):
    title: str
    year: int


class Rated(Movie):
    rating: float  # a subclass's own keys follow its own totality (total=True by default)


class Opaque:
    pass


@pytest.mark.parametrize(
    "annotation,schema",
    [
        (Any, {}),
        (object, {}),
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (bytes, {"type": "string", "contentEncoding": "base64"}),
        (list, {"type": "array"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (set[str], {"type": "array", "items": {"type": "string"}}),
        (frozenset[int], {"type": "array", "items": {"type": "integer"}}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
        ),
        (dict, {"type": "object"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (
            Mapping[str, list[bool]],
            {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "boolean"}}},
        ),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (Union[int, str, None], {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}),
        (Literal["a", "b"], {"enum": ["a", "b"]}),
        (Literal[1, True, None], {"enum": [1, True, None]}),
        (typing.Annotated[int, "meta"], {"type": "integer"}),
        (Iterator[int], {"type": "array", "items": {"type": "integer"}, "x-svc-stream": True}),
        (Generator[str, None, None], {"type": "array", "items": {"type": "string"}, "x-svc-stream": True}),
        (AsyncIterator[Point], {"type": "array", "items": schema_for(Point), "x-svc-stream": True}),
        (Color, {"title": "Color", "enum": ["red", "blue"]}),
        (Opaque, {"title": "Opaque"}),
        ("NotDefinedAnywhere", {"title": "NotDefinedAnywhere"}),
    ],
)
def test_schema_for(annotation, schema):
    assert schema_for(annotation) == schema


def test_dataclass():
    assert schema_for(Point) == {
        "type": "object",
        "title": "Point",
        "properties": {
            "x": {"type": "integer"},
            "y": {"type": "number", "default": 0.0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }


def test_a_recursive_dataclass_names_itself_instead_of_recursing():
    schema = schema_for(Node)
    assert schema["properties"]["children"] == {"type": "array", "items": {"title": "Node"}}


def test_typeddict_required_keys_follow_totality():
    assert schema_for(Movie) == {
        "type": "object",
        "title": "Movie",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": [],
    }
    assert schema_for(Rated)["required"] == ["rating"]


def test_pydantic_model_uses_model_json_schema():
    pydantic = pytest.importorskip("pydantic", reason="pydantic is optional; its schema is only used when installed")

    class User(pydantic.BaseModel):
        name: str
        age: int = 0

    assert schema_for(User) == User.model_json_schema()
    assert schema_for(User)["title"] == "User"


def test_parameters_with_defaults_context_and_no_kwargs():
    def greet(
        name: str, times: int = 2, tags: tuple[str, ...] = ("a",), when: object = object(), context: Any = None
    ) -> str: ...

    assert parameters_schema(greet) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "times": {"type": "integer", "default": 2},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
            "when": {},  # the default has no JSON form: left out
        },
        "required": ["name"],
        "additionalProperties": False,
    }


def test_enum_and_dataclass_defaults_are_written_in_their_json_form():
    def f(color: Color = Color.RED, at: Point = Point(1)) -> None: ...

    properties = parameters_schema(f)["properties"]
    assert properties["color"]["default"] == "red"
    assert properties["at"]["default"] == {"x": 1, "y": 0.0, "tags": []}


def test_kwargs_open_the_object():
    def loose(a, **rest): ...

    def typed(**rest: int): ...

    assert parameters_schema(loose) == {
        "type": "object",
        "properties": {"a": {}},
        "required": ["a"],
        "additionalProperties": True,
    }
    assert parameters_schema(typed)["additionalProperties"] == {"type": "integer"}


def test_star_args_are_left_out():
    def f(*values: int): ...

    assert parameters_schema(f) == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


def test_returns():
    def none(): ...

    def explicit_none() -> None: ...

    def point() -> Point: ...

    def raw() -> bytes: ...

    def gen():
        yield 1

    async def agen():
        yield 1

    assert returns_schema(none) == {}
    assert returns_schema(explicit_none) == {"type": "null"}
    assert returns_schema(point)["title"] == "Point"
    assert returns_schema(raw) == {"type": "string", "contentMediaType": "application/octet-stream"}
    assert returns_schema(gen) == {"type": "array", "items": {}, "x-svc-stream": True}
    assert returns_schema(agen) == {"type": "array", "items": {}, "x-svc-stream": True}


def test_string_annotations_resolve_and_unknown_names_fall_back_to_a_title(tmp_path):
    source = (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "from typing import TYPE_CHECKING, Optional\n"
        "if TYPE_CHECKING:\n"
        "    from elsewhere import Hidden\n"
        "@dataclass\n"
        "class Later:\n"
        "    n: Optional[int]\n"
        "def f(a: int, b: Later, c: Hidden, d: list[str] | None = None) -> Later: ...\n"
    )
    path = tmp_path / "future_mod.py"
    path.write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        import future_mod
    finally:
        sys.path.remove(str(tmp_path))
    schema = parameters_schema(future_mod.f)["properties"]
    assert schema["a"] == {"type": "integer"}
    assert schema["b"]["properties"] == {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
    assert schema["c"] == {"title": "Hidden"}
    assert schema["d"] == {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None}
    assert returns_schema(future_mod.f)["title"] == "Later"
