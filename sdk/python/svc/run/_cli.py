"""``python -m svc.run <file.py | module>:<function> [args...]``: one remote call from the command line.

The engine of ``svc run`` (the CLI starts this module with the same arguments and
exits with its status). Imports the module, converts the words to the function's
arguments (``_args``), makes the same call as ``<function>.remote(...)`` and prints
its result on stdout: JSON when it has a JSON form, else its repr. Everything else
goes to stderr, so ``svc run app.py:f 3 > out.json`` keeps just the result: what the
module prints while it is imported, the image build's lines, and every line the
function prints remotely (its stdout too).

Exit codes: 0 the result is on stdout; 1 the function raised (its remote traceback is
on stderr), the module failed to import, or svc failed (the message says why); 2 called
wrongly: no such file, module or function, or arguments that do not fit (the message
names the parameter); 130 interrupted.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import sys
import traceback
from typing import IO, Any

from .. import _json
from .._app import App
from .._loading import EntryError, find_app, import_entry, resolve_target
from .._tracebacks import format_user_traceback
from .._workloads import Workload
from ..exceptions import Error, RemoteCallError, RemoteError, RemoteTraceback
from . import _args

USAGE = """usage: {prog} <file.py | module>:<function> [args...] [--name value ...]

Runs a function of a svc app in a container of the svc server and prints its result.
  <file.py>   a file: its folder is the project root, its stem the module
  <module>    a module importable from the current folder, such as app or pkg.app
  <function>  the function (its Python name or its workload name); may be left out
              when the app has only one function
  args        positional words fill the parameters in order; --name value (or
              --name=value) fills one by name; a bare --flag sets a bool parameter
Values are converted by the parameters' annotations: int, float, bool (true/false,
1/0, yes/no), str; lists, dicts, dataclasses and pydantic models as JSON; null for None.
The result goes to stdout (JSON when it has a JSON form, else its repr); logs to stderr.
`{prog} <target> --help` shows the function's parameters and docstring.
Exit codes: 0 success, 1 the function raised or svc failed, 2 wrong usage or arguments.
"""


def _prog() -> str:
    return os.environ.get("SVC_RUN_PROG") or "python -m svc.run"


def _say(message: str) -> None:
    print(f"{_prog()}: {message}", file=sys.stderr, flush=True)


class _Usage(Exception):
    """Called wrongly: exit 2 with this message."""


def _detach_stdout() -> IO[str]:
    """Keeps the real stdout for the result; everything else printed here goes to stderr.

    fd 1 itself is pointed at stderr, so output that bypasses sys.stdout (a C extension,
    a subprocess started at import) cannot mix with the result either.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        return sys.stdout
    sys.stdout = sys.stderr
    return os.fdopen(saved, "w", encoding="utf-8")


def _find_function(app: App, name: str | None, target: str) -> Workload:
    functions = [w for w in app.workloads if w.kind == "function" and w.cls is None]
    listed = ", ".join(w.name for w in functions) or "(none)"
    if name is None:
        if len(functions) == 1:
            return functions[0]
        raise _Usage(f"name the function to run: {target}:<function>; the functions of {app.name}: {listed}")
    for workload in app.workloads:
        python_name = getattr(workload.target, "__name__", None)
        if name in (workload.name, python_name):
            if workload.cls is not None and workload.kind == "function":
                qualname = workload.target.__qualname__
                method = workload.cls.methods[0] if workload.cls.methods else "method"
                raise _Usage(
                    f"{name} is an @app.cls class, not a function: svc run calls functions; call its methods from "
                    f"Python, {qualname}().{method}.remote(...); the functions of {app.name}: {listed}"
                )
            if workload.kind != "function":
                raise _Usage(
                    f"{name} is {'an' if workload.kind[0] in 'aeiou' else 'a'} {workload.kind}, not a "
                    f"function: svc run calls functions (@app.function); the functions of {app.name}: {listed}"
                )
            return workload
    raise _Usage(f"the app {app.name} has no function {name!r}; its functions: {listed}")


def _help(workload: Workload, target: str) -> str:
    fn = workload.target
    params = _args.parameters(fn)
    words = [f"<{p.name}>" if p.default is p.empty else f"[{p.name}]" for p in params if p.kind in _args.POSITIONAL]
    lines = [f"usage: {_prog()} {target} {' '.join(words)}".rstrip(), "", _args.signature_text(fn)]
    doc = inspect.getdoc(fn)
    if doc:
        lines += ["", doc]
    if params:
        lines += ["", "arguments:"]
        for position, p in enumerate(params, 1):
            option = f"--{p.name.replace('_', '-')}"
            if p.kind is p.VAR_POSITIONAL:
                how = "the remaining positional words"
            elif p.kind is p.VAR_KEYWORD:
                how = "any other --name value"
            elif p.kind is p.KEYWORD_ONLY:
                how = f"{option} only"
            else:
                how = f"position {position} or {option}"
            required = (
                "required"
                if p.default is p.empty and p.kind in (*_args.POSITIONAL, p.KEYWORD_ONLY)
                else ("" if p.default is p.empty else f"default {p.default!r}")
            )
            kind = "" if p.annotation is p.empty else f" ({_args.expected(p.annotation)})"
            lines.append(f"  {p.name}{kind}: {how}" + (f"; {required}" if required else ""))
    return "\n".join(lines) + "\n"


def _print_result(out: IO[str], result: Any) -> None:
    try:
        text = json.dumps(_json.to_json_value(result), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(result)
    out.write(text + "\n")
    out.flush()


def _print_remote_exception(error: BaseException) -> None:
    cause = error.__cause__
    if isinstance(cause, RemoteTraceback):
        sys.stderr.write(cause.traceback.rstrip("\n") + "\n")
    elif isinstance(error, RemoteCallError) and error.traceback:
        sys.stderr.write(error.traceback.rstrip("\n") + "\n")
    else:
        sys.stderr.write("".join(traceback.format_exception_only(type(error), error)))
    sys.stderr.flush()


def _echo(_stream: str, line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(USAGE.format(prog=_prog()))
        return 0 if argv else 2
    target, words = argv[0], argv[1:]
    out = _detach_stdout()
    # SIGTERM (a timeout, a cancelled CI job) ends the command like Ctrl-C: the exit hooks delete its run on the server.
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(target, words, out)
    except _Usage as usage:
        _say(str(usage))
        return 2
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except _Terminated:
        _say("terminated")
        return 143


class _Terminated(BaseException):
    """Raised by the SIGTERM handler, so that the call unwinds and the exit hooks run."""


def _terminated(_signum: int, _frame: object) -> None:
    raise _Terminated()


def _run(target: str, words: list[str], out: IO[str]) -> int:
    file_or_module, colon, function = target.rpartition(":")
    if not colon:
        file_or_module, function = target, ""
    if not file_or_module:
        raise _Usage(f"{target!r} names no file or module: write <file.py | module>:<function>")
    module_name = file_or_module
    try:
        root, module_name = resolve_target(file_or_module)
        module = import_entry(root, module_name)
        app = find_app(module)
    except EntryError as error:
        raise _Usage(str(error)) from None
    except SystemExit as exit_:
        _say(f"importing {module_name!r} called sys.exit({exit_.code!r})")
        return 1
    except Exception as error:
        sys.stderr.write(format_user_traceback(error))
        _say(f"could not import {module_name!r} (traceback above)")
        return 1
    workload = _find_function(app, function or None, file_or_module)
    options = words[: words.index("--")] if "--" in words else words
    if any(word in ("-h", "--help") for word in options):
        out.write(_help(workload, target))
        out.flush()
        return 0
    try:
        call = _args.parse(workload.target, words)
    except _args.ArgumentError as error:
        raise _Usage(f"{error} (see `{_prog()} {target} --help`)") from None

    from .._client import call_remote
    from .._client._project import explicit_project

    try:
        result = call_remote(
            workload, tuple(call.args), call.kwargs, project=explicit_project(root, module_name, app), echo=_echo
        )
    except RemoteCallError as error:
        _print_remote_exception(error)
        return 1
    except (RemoteError, Error) as error:
        if isinstance(error.__cause__, RemoteTraceback):  # a remote svc exception, re-raised as itself
            _print_remote_exception(error)
        else:
            _say(str(error).replace("\nHint: ", "\n  "))
        return 1
    except Exception as error:
        if not isinstance(error.__cause__, RemoteTraceback):
            raise  # not the function's exception: svc's own failure, with its traceback
        _print_remote_exception(error)
        return 1
    _print_result(out, result)
    return 0
