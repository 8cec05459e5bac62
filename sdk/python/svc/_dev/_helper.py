"""The warm helper's loop: one JSON request per line on stdin, one JSON answer per line on stdout.

A request::

    {"id": 1, "root": DIR, "target": "app.py" | "pkg.app", "cwd": DIR, "out": FILE,
     "max_bytes": N, "unchanged": DIGEST | null, "timeout": SECONDS, "exclude": [DIR, ...]}

``exclude`` names folders left out of the snapshot and the bundle (svc's data and cache
dirs, when they lie inside the project: what svc writes there is not the user's code).

The answer always carries ``id``, ``digest`` (of the project's bundle entries, see
``_snapshot``) and ``dirs`` (the project's folders the bundle holds: what to watch). With ``"unchanged": true`` the project is the one whose digest the request
named: nothing was written or imported. Otherwise ``bundle`` and ``manifest`` say what
``python -m svc.bundle ROOT --out FILE`` and ``python -m svc.manifest TARGET`` (run in
``cwd``) would have: ``{"code", "stdout", "stderr"}`` and ``{"code", "signal", "stdout",
"stderr", "timed_out"}``. A bundle that fails leaves out the manifest. A request that cannot
be read gets ``{"id", "error"}``.

``python -m svc._dev --parent PID``: the argument only names the svc process it serves (for
``ps``); it is not read.

stdin is also the lifeline: when it closes (svc exited, even by SIGKILL), the helper kills
the child it waits for and exits. SIGTERM and SIGINT do the same.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from .._json import is_object
from ..bundle import BundleError, BundleTooLarge
from . import _describe
from ._snapshot import Snapshots, write_bundle

DEFAULT_TIMEOUT = 120.0


class Stop(Exception):
    """The helper is told to stop (a signal, or its lifeline closed)."""


def _stop(signum: int, frame: Any) -> None:
    raise Stop()


class Lines:
    """Whole lines from a file descriptor, read without Python's buffering (select sees what is pending)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.rest = b""

    def next(self) -> bytes | None:
        while b"\n" not in self.rest:
            self.rest += _describe.pending_lifeline_bytes()
            if b"\n" in self.rest:
                break
            try:
                chunk = os.read(self.fd, 65536)
            except InterruptedError:
                continue
            if not chunk:
                return None
            self.rest += chunk
        line, self.rest = self.rest.split(b"\n", 1)
        return line


def handle(
    request: dict[str, Any], snapshots: Snapshots, wake_fd: int, private_fds: tuple[int, ...] = ()
) -> dict[str, Any]:
    root, target, cwd, out = request["root"], request["target"], request["cwd"], request["out"]
    max_bytes = int(request.get("max_bytes") or 100 * 1024 * 1024)
    timeout = float(request.get("timeout") or DEFAULT_TIMEOUT)
    answer: dict[str, Any] = {"id": request.get("id")}
    try:
        snapshot = snapshots.take(root, tuple(request.get("exclude") or ()))
    except (BundleError, OSError) as error:
        answer["bundle"] = {"code": 1, "stdout": "", "stderr": f"svc bundle: {error}"}
        return answer
    answer["digest"] = snapshot.digest
    answer["dirs"] = [entry.path for entry in snapshot.entries if entry.kind == "dir"]
    if snapshot.digest == request.get("unchanged"):
        answer["unchanged"] = True
        return answer
    answer["unchanged"] = False
    # The child imports while this process writes the bundle.
    child = _describe.start(target, cwd, stdin_fd=0, private_fds=private_fds)
    try:
        answer["bundle"] = _bundle(snapshot, out, max_bytes)
        run = _describe.finish(child, timeout, wake_fd, 0)
    except BaseException:
        child.kill()  # told to stop: what the import started goes too
        _describe.reap_now(child)
        raise
    if run is None:
        raise Stop()
    if answer["bundle"]["code"] == 0:
        answer["manifest"] = run.as_json()
    return answer


def _bundle(snapshot: Any, out: str, max_bytes: int) -> dict[str, Any]:
    warnings = "".join(f"svc bundle: warning: {message}\n" for message in snapshot.warnings)
    try:
        result = write_bundle(snapshot, out, max_bytes)
    except BundleTooLarge as error:
        return {"code": 3, "stdout": "", "stderr": f"{warnings}svc bundle: {error}\n"}
    except BundleError as error:
        return {"code": 1, "stdout": "", "stderr": f"{warnings}svc bundle: {error}\n"}
    except OSError as error:
        return {"code": 1, "stdout": "", "stderr": f"{warnings}svc bundle: cannot write the bundle: {error}\n"}
    return {"code": 0, "stdout": json.dumps(result) + "\n", "stderr": warnings}


def main() -> int:
    # The user's code and its subprocesses get the usual sys.path rules (svc started us with PYTHONSAFEPATH).
    os.environ.pop("PYTHONSAFEPATH", None)
    # Answers get the real stdout; anything else printed here goes to stderr.
    sys.stdout.flush()
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    snapshots = Snapshots()
    lines = Lines(0)
    try:
        answers.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
        answers.flush()
        while True:
            line = lines.next()
            if line is None:
                return 0
            if not line.strip():
                continue
            request: Any = None
            try:
                request = json.loads(line)
                answer = handle(request, snapshots, wake_r, (answers.fileno(), wake_r, wake_w))
            except Stop:
                raise
            except (ValueError, KeyError, TypeError) as error:
                answer = {"id": request.get("id") if is_object(request) else None, "error": f"bad request: {error!r}"}
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
    except (Stop, BrokenPipeError):
        return 0
