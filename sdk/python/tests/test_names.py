"""Names of apps and workloads: svc's one rule (a lowercase DNS label), checked at the
decorator line, and the workload name made from a function's name when name= is not given."""

from __future__ import annotations

import json

import pytest
import svc
from svc._checks import NAME_RULE, derive_name, name_problem
from svc.manifest import build_manifest

# Explicit names: accepted as they are, or refused with what is wrong and a suggestion.


@pytest.mark.parametrize("value", ["greet", "say-hello", "a", "9lives", "v2", "a-b-c", "x" * 63])
def test_an_explicit_name_that_follows_the_rule_is_kept(app, value):
    assert app.function(name=value)(lambda: None).workload.name == value
    assert svc.App(value).name == value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "say_hello",
            'name=\'say_hello\' has the character "_" at position 4; only a-z, 0-9 and "-" are allowed; try "say-hello"',
        ),
        ("Greet", 'name=\'Greet\' has the upper-case letter "G"; names are lower case; try "greet"'),
        ("SayHello", 'has the upper-case letter "S"; names are lower case; try "sayhello"'),
        ("-greet", 'must not start with "-"; try "greet"'),
        ("greet-", 'must not end with "-"; try "greet"'),
        ("say--hello", 'must not contain "--": svc uses it in URLs to mark previews and workspaces; try "say-hello"'),
        ("", "must not be empty"),
        ("x" * 64, "is 64 characters long; at most 63 are allowed"),
        ("a.b", 'has the character "." at position 2; only a-z, 0-9 and "-" are allowed (a name is'),
        ("grüße", 'has the character "ü" at position 3'),
    ],
)
@pytest.mark.parametrize("decorator", ["function", "endpoint", "realtime", "asgi"])
def test_an_explicit_workload_name_that_breaks_the_rule_is_refused_at_the_decorator(app, decorator, value, message):
    with pytest.raises(svc.InvalidOptionError) as caught:
        getattr(app, decorator)(name=value)
    assert message in str(caught.value)
    assert str(caught.value).startswith(("@app.", "app.asgi"))
    assert NAME_RULE in str(caught.value)
    assert caught.value.option == "name"
    assert app.workloads == ()


def test_no_suggestion_when_the_fix_is_not_obvious():
    assert name_problem("a.b") == 'has the character "." at position 2; only a-z, 0-9 and "-" are allowed'
    assert name_problem("_") == 'has the character "_" at position 1; only a-z, 0-9 and "-" are allowed'
    assert name_problem("greet") is None


@pytest.mark.parametrize(
    ("value", "suggestion"),
    [
        ("Quickstart", "quickstart"),
        ("quick_start", "quick-start"),
        ("-quick", "quick"),
        ("My_App", "my-app"),
    ],
)
def test_an_app_name_follows_the_rule_and_is_never_derived(value, suggestion):
    with pytest.raises(svc.InvalidOptionError, match=r"^svc\.App: name=") as caught:
        svc.App(value)
    assert f'try "{suggestion}"' in str(caught.value)
    assert caught.value.option == "name"


# Default names: made from the function's __name__.


@pytest.mark.parametrize(
    ("python_name", "workload_name"),
    [
        ("greet", "greet"),
        ("say_hello", "say-hello"),
        ("_private_fn", "private-fn"),
        ("__dunder__", "dunder"),
        ("Greet", "greet"),
        ("SayHello", "sayhello"),
        ("say__hello", "say-hello"),
        ("v2_api_", "v2-api"),
        ("x" * 63, "x" * 63),
    ],
)
def test_derive_name(python_name, workload_name):
    assert derive_name(python_name) == workload_name


@pytest.mark.parametrize("decorator", ["function", "endpoint", "realtime"])
def test_a_function_name_becomes_a_valid_workload_name(app, decorator):
    def say_hello(message: str = "") -> str:
        return message

    handle = getattr(app, decorator)(say_hello)
    assert handle.workload.name == "say-hello"
    assert handle.workload.derived_from == "say_hello"
    assert handle.__name__ == "say_hello"  # the function itself keeps its name


def test_an_explicit_name_records_no_python_name(app):
    assert app.function(name="hi")(lambda: None).workload.derived_from is None


def test_the_manifest_keeps_the_python_name_as_handler(app):
    @app.endpoint
    def say_hello() -> str:
        return "hi"

    class Greeter:
        @staticmethod
        def Greet() -> str:
            return "hi"

    app.function(Greeter.Greet)
    manifest = build_manifest(app, "app")
    assert [(w["name"], w["handler"]) for w in manifest["workloads"]] == [
        ("say-hello", "test_the_manifest_keeps_the_python_name_as_handler.<locals>.say_hello"),
        ("greet", "test_the_manifest_keeps_the_python_name_as_handler.<locals>.Greeter.Greet"),
    ]
    json.dumps(manifest)


@pytest.mark.parametrize(
    ("python_name", "problem"),
    [
        ("_", "it makes nothing"),
        ("__", "it makes nothing"),
        ("<lambda>", "it makes '<lambda>', which has the character \"<\" at position 1"),
        ("grüße", "it makes 'grüße', which has the character \"ü\" at position 3"),
        ("f" * 64, f"it makes '{'f' * 64}', which is 64 characters long; at most 63 are allowed"),
    ],
)
def test_a_function_name_that_makes_no_valid_name_asks_for_name(app, python_name, problem):
    def target() -> None: ...

    target.__name__ = python_name
    with pytest.raises(svc.InvalidOptionError) as caught:
        app.function(target)
    text = str(caught.value)
    assert text.startswith(f"@app.function: cannot name the workload after {python_name!r}: {problem}")
    assert text.endswith('pass name=, e.g. @app.function(name="my-workload")')
    assert caught.value.option == "name"
    assert app.function(name="fine")(target).workload.name == "fine"


def test_two_functions_that_make_the_same_name_collide_naming_both(app):
    @app.function
    def say_hello() -> None: ...

    with pytest.raises(svc.InvalidOptionError) as caught:

        @app.endpoint
        def Say_Hello() -> None: ...

    text = str(caught.value)
    assert "already has a workload named 'say-hello'" in text
    assert "(a function, named after the Python function 'say_hello')" in text
    assert "this endpoint (named after the Python function 'Say_Hello') gets the same name" in text
    assert "pass name=" in text
    assert caught.value.option == "name"
    assert [w.name for w in app.workloads] == ["say-hello"]


def test_a_derived_name_colliding_with_an_explicit_one_names_both(app):
    app.function(name="say-hello")(lambda: None)

    def say_hello() -> None: ...

    with pytest.raises(svc.InvalidOptionError) as caught:
        app.function(say_hello)
    text = str(caught.value)
    assert "(a function, named with name='say-hello')" in text
    assert "named after the Python function 'say_hello'" in text
