"""python -m svc.manifest: exit codes, stdout discipline, file and module targets."""

from __future__ import annotations

import json

from helpers import run_python

GOOD = """
import svc
app = svc.App("demo")

@app.function
def square(x: int) -> int:
    return x * x
"""


def manifest(*args, cwd=None):
    return run_python("-m", "svc.manifest", *args, cwd=cwd)


def test_a_file_prints_the_manifest_and_exits_0(write_module, tmp_path):
    path = write_module(GOOD, name="tool")
    result = manifest(str(path), cwd="/")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["entry"] == "tool" and document["app"] == {"name": "demo"}
    assert document["workloads"][0]["name"] == "square"
    assert result.stdout.endswith("}\n") and result.stdout == json.dumps(document, indent=2) + "\n"


def test_a_module_name_is_imported_from_the_current_folder(write_module, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "app.py").write_text(GOOD)
    result = manifest("pkg.app", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["entry"] == "pkg.app"


def test_prints_at_import_go_to_stderr_and_leave_stdout_pure(write_module):
    path = write_module(
        "import os, subprocess, sys\n"
        "print('hello from print')\n"
        "sys.stdout.write('hello from sys.stdout\\n')\n"
        "os.write(1, b'hello from fd 1\\n')\n"
        "subprocess.run([sys.executable, '-c', 'print(\"hello from a child\")'])\n" + GOOD
    )
    result = manifest(str(path))
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)
    for line in ("hello from print", "hello from sys.stdout", "hello from fd 1", "hello from a child"):
        assert line in result.stderr
        assert line not in result.stdout


def test_a_syntax_error_exits_1_with_the_traceback(write_module):
    path = write_module("import svc\napp = svc.App('x')\ndef broken(:\n    pass\n")
    result = manifest(str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "SyntaxError" in result.stderr and 'app.py", line 3' in result.stderr


def test_an_exception_at_import_exits_1_with_the_traceback(write_module):
    path = write_module("import svc\napp = svc.App('x')\nraise RuntimeError('boom at import')\n")
    result = manifest(str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: boom at import" in result.stderr
    first_frame = next(line for line in result.stderr.splitlines() if line.strip().startswith("File "))
    assert str(path) in first_frame  # svc's and importlib's frames are trimmed from the top


def test_an_invalid_option_exits_1_naming_it(write_module):
    path = write_module("import svc\napp = svc.App('x')\n@app.endpoint(memory='512MB')\ndef f(): ...\n")
    result = manifest(str(path))
    assert result.returncode == 1
    assert "svc.InvalidOptionError: @app.endpoint: memory='512MB'" in result.stderr


def test_a_missing_dependency_exits_1(write_module):
    path = write_module("import not_installed_anywhere\n" + GOOD)
    result = manifest(str(path))
    assert result.returncode == 1
    assert "No module named 'not_installed_anywhere'" in result.stderr


def test_sys_exit_at_import_exits_1(write_module):
    path = write_module("import sys\nsys.exit(3)\n")
    result = manifest(str(path))
    assert result.returncode == 1
    assert "called sys.exit(3)" in result.stderr


def test_no_app_exits_2_with_one_line(write_module):
    path = write_module("x = 1\n")
    result = manifest(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("svc manifest: no svc.App in module 'app'")
    assert result.stderr.count("\n") == 1


def test_two_apps_exit_2_naming_them(write_module):
    path = write_module("import svc\nfirst = svc.App('a')\nsecond = svc.App('b')\nalias = first\n")
    result = manifest(str(path))
    assert result.returncode == 2
    assert "more than one svc.App (first, second)" in result.stderr


def test_one_app_under_two_names_is_one_app(write_module):
    path = write_module(GOOD + "alias = app\n")
    assert manifest(str(path)).returncode == 0


def test_usage_errors_exit_2(tmp_path):
    assert manifest().returncode == 2
    assert manifest("a.py", "b.py").returncode == 2
    missing = manifest(str(tmp_path / "missing.py"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown = manifest("no_such_module_here", cwd=tmp_path)
    assert unknown.returncode == 2 and "no module named 'no_such_module_here'" in unknown.stderr
    bad_name = manifest("not a module", cwd=tmp_path)
    assert bad_name.returncode == 2


def test_help_exits_0():
    result = manifest("--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: python -m svc.manifest")
