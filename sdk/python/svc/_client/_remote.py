"""``<function>.remote(...)``: run the function in a container of the svc server and return its result.

One call: find the project (``_project``), upload its bundle unless the server has it (``GET /api/v1/bundles/:sha256``),
start a run of the function or reuse the one this process started for the same server,
app, function and bundle, send the pickled call and read its NDJSON frames as they
come: each ``log`` frame is printed here at once (stdout lines to ``sys.stdout``, stderr
lines to ``sys.stderr``), then the result is unpickled and returned, or the remote
exception raised. Runs this process started are deleted when it exits.

A remote exception is raised as itself when its pickle loads here, with the remote
traceback as its ``__cause__`` (a ``svc.RemoteTraceback``: Python prints it above the
local traceback); otherwise as ``svc.RemoteCallError`` with type, message and traceback.
An error frame with a ``code`` (``worker_crashed``: the container died) raises that
code's exception.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from .._json import is_object
from .._workloads import Workload
from ..exceptions import (
    Error,
    NotFoundError,
    RemoteCallError,
    RemoteError,
    RemoteTraceback,
    ServerUnreachableError,
    StartFailedError,
)
from ..manifest._build import INLINE_SECRETS
from . import _pickles
from ._credentials import find_credentials
from ._errors import error_for, error_from_answer
from ._http import Api, Stream, open_url
from ._progress import BuildProgress
from ._project import Bundle, Project, project_of

CALL_CONTENT_TYPE = "application/vnd.svc.call+pickle"
END_TIMEOUT = 3.0

Echo = Callable[[str, str], None]


def echo_locally(stream: str, line: str) -> None:
    """Prints a remote line where the function printed it: stdout or stderr of this process."""
    out = sys.stderr if stream == "stderr" else sys.stdout
    out.write(line + "\n")
    out.flush()


@dataclass(frozen=True)
class Run:
    """A run this process started."""

    id: str
    api: Api


_runs: dict[tuple[str, ...], Run] = {}
_uploaded: set[tuple[str, str, str]] = set()
_lock = threading.Lock()
_exit_hook = False


def check_function(workload: Workload, call: str) -> None:
    """``TypeError`` unless ``workload`` is a function: ``call`` (``.remote()``, ``.map()``) runs only those."""
    if workload.kind != "function":
        how = "its .request()" if workload.kind in ("endpoint", "asgi") else "a WebSocket"
        raise TypeError(
            f"{workload.name} is {'an' if workload.kind[0] in 'aeiou' else 'a'} {workload.kind}: {call} runs "
            f"functions (@app.function); call {workload.name} at its URL with {how}."
        )


@dataclass(frozen=True)
class Target:
    """Where a function's calls go: the server, the function (as the manifest names it), its code (this
    process's project and its uploaded bundle, or with neither the deployed version of ``app``), and
    the key of the run this process holds for them (``with_run``)."""

    api: Api
    app: str
    function: str
    project: Project | None = None
    bundle: Bundle | None = None
    method: str | None = None
    """The method of an ``@app.cls`` class each call names; not part of the run's key (one class, one run)."""
    parameters: dict[str, Any] | None = None
    """The values of an ``@app.cls`` class's parameters, as JSON carries them: a run (its own containers) per set."""

    @property
    def key(self) -> tuple[str, ...]:
        api = self.api
        code = self.bundle.sha256 if self.bundle is not None else "deployed"
        parameters = "" if self.parameters is None else json.dumps(self.parameters, sort_keys=True)
        return (api.server, api.credentials.token, self.app, self.function, code, parameters)

    @property
    def script_entry(self) -> str | None:
        """The module ``python app.py`` runs as ``__main__`` (pickles name it so); None for deployed code."""
        return self.project.script_entry if self.project is not None else None

    def code(self) -> dict[str, Any]:
        """The code fields of a run or a spawned call: the manifest and bundle, or the deployed app (and the
        class's parameters, which choose the run)."""
        parameters = {} if self.parameters is None else {"parameters": self.parameters}
        if self.project is None or self.bundle is None:
            return {"app": self.app, **parameters}
        # Secret.from_dict values go beside the manifest, never in it (docs/secrets.md).
        manifest = {name: value for name, value in self.project.manifest.items() if name != INLINE_SECRETS}
        inline = self.project.manifest.get(INLINE_SECRETS)
        return {
            "manifest": manifest,
            "bundle": self.bundle.sha256,
            **({"inlineSecrets": inline} if inline else {}),
            **parameters,
        }


def target_of(workload: Workload, project: Project | None = None) -> Target:
    """Finds the project of ``workload`` and the server, and uploads the bundle unless the server has it."""
    project = project if project is not None else project_of(workload)
    api = Api(find_credentials())
    bundle = project.bundle()
    _upload(api, bundle)
    return Target(api, project.app, workload.name, project, bundle)


def deployed_target(app: str, function: str) -> Target:
    """The deployed version of ``app``'s ``function`` (``svc.Function.from_name``): no project, no upload."""
    return Target(Api(find_credentials()), app, function)


T = TypeVar("T")


def with_run(target: Target, use: Callable[[Run, bool], T]) -> T:
    """``use(run, created)`` with the run this process holds for ``target`` (or a new one); when
    ``use`` finds that run gone (``RunGone``), once more with a new run."""
    for attempt in range(2):
        if attempt == 1 and target.bundle is not None:
            # The server may have lost what it had (a restart on another data dir): check again.
            _uploaded.discard((target.api.server, target.api.credentials.token, target.bundle.sha256))
            _upload(target.api, target.bundle)
        run, created = _run_for(target)
        try:
            return use(run, created)
        except RunGone as gone:
            # A run this process reused ended meanwhile (idle timeout, a restart of the server): start anew, once.
            # Only the server's own 404 means that: a NotFoundError the function raised is its result.
            with _lock:
                if _runs.get(target.key) is run:
                    del _runs[target.key]
            if created or attempt == 1:
                raise gone.error from None
        except StartFailedError:
            forget_run(target, run)  # a failed run stays failed: the next call starts a new one
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def call_remote(
    workload: Workload,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    project: Project | None = None,
    echo: Echo = echo_locally,
    show_build: Callable[[str], None] | None = None,
) -> Any:
    """Runs ``workload`` (a function) remotely with these arguments; its result or its exception."""
    check_function(workload, ".remote()")
    target = target_of(workload, project)
    return call_target(target, args, kwargs, echo=echo, show_build=show_build)


def call_target(
    target: Target,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    echo: Echo = echo_locally,
    show_build: Callable[[str], None] | None = None,
) -> Any:
    """One call of ``target``'s function through the run this process holds for it."""
    body = _pickles.dump_call(args, kwargs, target.script_entry, target.method)

    def call(run: Run, created: bool) -> Any:
        progress = build_progress(run, target.function, show_build) if created else None
        try:
            return _call(run, body, target.script_entry, echo, progress)
        finally:
            if progress is not None:
                progress.stop()

    return with_run(target, call)


def build_progress(run: Run, function: str, show: Callable[[str], None] | None = None) -> BuildProgress:
    """The build's lines while a new run starts, shown by ``show`` (stderr by default)."""
    api = run.api
    return BuildProgress(api, run.id, function) if show is None else BuildProgress(api, run.id, function, show)


def _upload(api: Api, bundle: Bundle) -> None:
    """Uploads the bundle unless this process already did or the server has it."""
    key = (api.server, api.credentials.token, bundle.sha256)
    if key in _uploaded:
        return
    # GET rather than HEAD: an error (a refused token, say) then comes with its message.
    held = api.request("GET", f"/bundles/{bundle.sha256}", ok=(200, 404))
    if held.status == 404:
        with open(bundle.path, "rb") as handle:  # streamed from the file, not read into memory
            api.request(
                "POST",
                "/bundles",
                body=handle,
                timeout=None,
                headers={
                    "Content-Type": "application/gzip",
                    "Content-Length": str(bundle.size),
                    "X-Bundle-Sha256": bundle.sha256,
                },
            )
    _uploaded.add(key)


def _run_for(target: Target) -> tuple[Run, bool]:
    """The run this process holds for ``target``, or a new one (then ``True``)."""
    global _exit_hook
    with _lock:
        run = _runs.get(target.key)
        if run is not None:
            return run, False
        answer = target.api.request("POST", "/runs", json_body={**target.code(), "function": target.function})
        run = Run(answer.json()["run"]["id"], target.api)
        _runs[target.key] = run
        if not _exit_hook:
            atexit.register(end_runs)
            _exit_hook = True
        return run, True


def forget_run(target: Target, run: Run) -> None:
    """Ends ``run`` and lets go of it (its start failed): the next call starts a new one."""
    with _lock:
        if _runs.get(target.key) is run:
            del _runs[target.key]
    _end(run)


def _end(run: Run) -> None:
    try:
        open_url(
            "DELETE", run.api.url(f"/runs/{run.id}"), headers=run.api.auth(), timeout=END_TIMEOUT, where=run.api.where
        ).close()
    except Exception:  # the server is gone, or the run is: either way nothing is left to end
        pass


def end_runs() -> None:
    """Deletes every run this process started (at exit; errors ignored)."""
    with _lock:
        runs = list(_runs.values())
        _runs.clear()
    threads = [threading.Thread(target=_end, args=(run,), daemon=True) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(END_TIMEOUT + 1)


def _call(run: Run, body: bytes, script_entry: str | None, echo: Echo, progress: BuildProgress | None) -> Any:
    api = run.api
    stream = api.open(
        "POST",
        f"/runs/{run.id}/calls",
        body=body,
        timeout=None,
        reuse=True,
        headers={"Content-Type": CALL_CONTENT_TYPE, "Accept": "application/x-ndjson"},
    )
    with stream:
        if stream.status != 200:
            error = error_from_answer(stream.status, stream.read(), f"the call of run {run.id}")
            if progress is not None:
                progress.stop()
                if isinstance(error, StartFailedError):
                    progress.show_rest()
            if isinstance(error, NotFoundError):
                raise RunGone(error)
            raise error
        broken = f"the connection to {api.where} broke during the call of run {run.id}, before its result"
        for frame in read_frames(
            stream, progress, lambda: ServerUnreachableError(broken, hint="Is the server still running?")
        ):
            kind = frame.get("type")
            if kind == "log":
                echo(str(frame.get("stream", "stdout")), str(frame.get("line", "")))
            elif kind in ("result", "error"):
                stream.finish()  # the last frame: the next call may send on this connection
                if kind == "result":
                    return unpickled_result(frame, script_entry)
                raise_remote(frame, script_entry)
        raise AssertionError("unreachable")  # pragma: no cover  (read_frames ends only by raising)


def read_frames(
    stream: Stream, progress: BuildProgress | None, broken: Callable[[], BaseException]
) -> Iterator[dict[str, Any]]:
    """The NDJSON frames of an answer as they come, blank lines skipped; the first stops the build's
    progress (the run is ready by then). A connection that ends raises ``broken()``: every answer
    ends with a last frame, so its reader stops before."""
    first = True
    while True:
        raw = stream.readline()
        if not raw:
            raise broken()
        if not raw.strip():
            continue
        if first and progress is not None:
            progress.stop()
        first = False
        yield parse_frame(raw)


class RunGone(Exception):
    """The server answered the call itself with 404: the run is gone (never what the function raised)."""

    def __init__(self, error: NotFoundError) -> None:
        super().__init__(str(error))
        self.error = error


def parse_frame(raw: bytes) -> dict[str, Any]:
    try:
        frame = json.loads(raw)
    except ValueError:
        raise RemoteError(f"the server sent a frame that is not JSON: {raw[:200]!r}") from None
    if not is_object(frame):
        raise RemoteError(f"the server sent a frame that is not an object: {raw[:200]!r}")
    return frame


def unpickled_result(frame: dict[str, Any], script_entry: str | None) -> Any:
    try:
        data = base64.b64decode(frame.get("pickle") or "", validate=True)
        return _pickles.loads(data, script_entry)
    except (binascii.Error, ValueError) as error:
        raise RemoteError(f"the call's result frame holds no valid pickle: {error}") from None
    except Exception as error:
        raise Error(
            f"the remote result cannot be unpickled here: {type(error).__name__}: {error}. Return values whose "
            "classes this process can import (the standard library, your project, packages installed here too)."
        ) from error


def raise_remote(frame: dict[str, Any], script_entry: str | None = None) -> None:
    """Raises the exception an ``error`` frame describes."""
    raise remote_exception(frame, script_entry)


def remote_exception(frame: dict[str, Any], script_entry: str | None = None) -> Exception:
    """The exception an ``error`` frame describes, with the remote traceback as its ``__cause__``:
    the function's own when it can be re-raised here, else ``svc.RemoteCallError``; a frame svc added
    (with a ``code``) gives that code's exception."""
    description = str(frame.get("exception") or "Exception")
    code = frame.get("code")
    if isinstance(code, str) and code:
        prefix = f"{code}: "
        message = description[len(prefix) :] if description.startswith(prefix) else description
        return error_for(code, message)
    remote_traceback = frame.get("traceback") if isinstance(frame.get("traceback"), str) else None
    exception = _unpickled_exception(frame.get("pickle"), script_entry)
    if exception is not None:
        if remote_traceback:
            # As `raise exception from RemoteTraceback(...)` would set them, for an exception returned rather than raised.
            exception.__cause__ = RemoteTraceback(remote_traceback)
            exception.__suppress_context__ = True
        return exception
    type_name, _, message = description.partition(": ")
    return RemoteCallError(description, type=type_name if message else None, traceback=remote_traceback)


def _unpickled_exception(encoded: Any, script_entry: str | None) -> Exception | None:
    """The remote exception, when it comes pickled, loads here and is an ordinary Exception.

    SystemExit and KeyboardInterrupt are not re-raised: the remote function exited, not this process.
    """
    if not isinstance(encoded, str) or not encoded:
        return None
    try:
        exception = _pickles.loads(base64.b64decode(encoded), script_entry)
    except Exception:
        return None
    return exception if isinstance(exception, Exception) else None
