"""``python -m svc.run <file>:<function> [args...]`` (the engine of `svc run`): words to arguments,
the result on stdout, logs on stderr, exit codes. Calls go to a real `svc server`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "client_server"))
import client_harness  # noqa: E402

APP = str(client_harness.PROJECT / "client_app.py")


def svc_run(*words: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(client_harness.SDK_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "svc.run", *words],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_positional_and_named_words_make_the_call_and_only_the_result_is_on_stdout(server):
    result = svc_run(f"{APP}:shout", "hi", "--times=3")
    assert result.returncode == 0, result.stderr
    assert result.stdout == '"HIHIHI"\n'
    # Remote stdout lines go to stderr too: stdout holds the result alone.
    assert result.stderr == "line 0\nline 1\nline 2\na line on stderr\n"


def test_json_words_build_dataclasses_and_lists_and_a_result_with_a_json_form_is_printed_as_json(server):
    result = svc_run(f"{APP}:move", '{"x": 1, "y": 2}', "--by", "2", "--tags", '["a", "b"]', "--loud")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"x": 3, "y": 4}
    assert result.stderr == "moving Point(x=1, y=2) by 2 (['a', 'b'])\n"


def test_a_module_target_and_a_result_without_a_json_form_printed_as_its_repr(server):
    result = svc_run("client_app:opaque", "1", "--imaginary=-2.5", cwd=client_harness.PROJECT)
    assert (result.returncode, result.stdout) == (0, "(1-2.5j)\n"), result.stderr


def test_a_remote_exception_prints_its_remote_traceback_and_exits_1(server):
    result = svc_run(f"{APP}:refuse", "no way")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("refusing\nTraceback (most recent call last):\n")
    assert "raise Refused(reason)" in result.stderr
    assert result.stderr.rstrip().endswith("client_app.Refused: no way")


@pytest.mark.parametrize(
    "words,message",
    [
        (["shout", "hi", "many"], "argument 'times' must be an integer, got 'many'"),
        (["shout", "hi", "--times", "1.5"], "argument 'times' must be an integer, got '1.5'"),
        (["move", '{"x": 1}'], "argument 'point' is missing the field 'y' of Point"),
        (["move", '{"x": 1, "y": 2}', "--loud", "maybe"], "argument 'loud' must be a boolean, got 'maybe'"),
        (["move", "[1, 2]", "--tags", "a,b"], "argument 'point'"),
        (["shout"], "missing required argument 'text'"),
        (["shout", "hi", "--volume", "11"], "shout has no parameter 'volume'; it takes text: str, times: int = 1"),
        (["shout", "a", "1", "extra"], "shout takes 2 positional arguments, got 3"),
        (["shout", "hi", "--text", "again"], "argument 'text' is given twice"),
        (["shout", "hi", "--times"], "--times needs a value"),
    ],
)
def test_words_that_do_not_fit_exit_2_naming_the_parameter(words, message):
    function, *rest = words
    result = svc_run(f"{APP}:{function}", *rest)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert message in result.stderr, result.stderr
    assert result.stderr.startswith("python -m svc.run: ")


@pytest.mark.parametrize(
    "target,message",
    [
        (f"{APP}:nope", "the app client-test has no function 'nope'; its functions: shout, refuse"),
        (f"{APP}:add", "add is an endpoint, not a function"),
        (
            str(FIXTURES / "class_project" / "class_app.py") + ":Counter",
            "Counter is an @app.cls class, not a function: svc run calls functions; call its methods from Python, "
            "Counter().add.remote(...); the functions of class-test: (none)",
        ),
        (APP, "name the function to run"),
        ("no_such_file.py:f", "no such file: no_such_file.py"),
    ],
)
def test_a_target_that_is_not_a_function_exits_2(target, message):
    result = svc_run(target)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr


def test_help_after_the_target_shows_the_signature_and_the_docstring():
    result = svc_run(f"{APP}:shout", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        f"usage: python -m svc.run {APP}:shout <text> [times]\n\nshout(text: str, times: int = 1) -> str\n"
    )
    assert "Prints three lines and a line on stderr" in result.stdout
    assert "  times (an integer): position 2 or --times; default 1" in result.stdout


def test_without_arguments_it_prints_its_usage_and_exits_2():
    result = svc_run()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: python -m svc.run <file.py | module>:<function>")
