"""Which project a workload belongs to, its manifest and its bundle, found as the CLI finds them.

The container imports the app's *entry module* from the *project root*, so
``.remote()`` must describe and bundle the code exactly as ``svc deploy`` would:

- a script run as ``__main__`` (``python app.py``): its folder is the root and its file
  name the entry, as for a ``.py`` target of the CLI;
- ``python -m pkg.app``: the entry is ``pkg.app``, found like an imported module;
- an imported module: as the CLI does for a module target, the entry is the module's
  name and the root the current folder, when the module is importable from there;
  otherwise the folder it was imported from (its file, less the package path), so
  that an app imported through ``sys.path`` still finds its own project.

The manifest is the one ``python -m svc.manifest <target>`` prints: for ``__main__``
it is made by running exactly that in a subprocess (the container never runs the
script as ``__main__``), for an imported module by the same function in this process.
The bundle is rebuilt only when a file of the project changed since the last call, which a
``stat`` of its paths tells without walking it again (``_unchanged``).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .._app import App
from .._json import is_object
from .._workloads import Workload
from ..bundle import DEFAULT_MAX_BYTES, BundleError, BundleTooLarge, Entry, check_size, collect, write_tar_gz
from ..exceptions import Error, ProjectError
from ._unchanged import FileStates

SDK_PATH = str(Path(__file__).resolve().parents[2])
MANIFEST_TIMEOUT = 120.0


@dataclass(frozen=True)
class Bundle:
    path: Path
    sha256: str
    size: int


@dataclass
class Project:
    """An app's code as the platform sees it: root folder, entry module, manifest."""

    root: str
    entry: str
    app: str
    manifest: dict[str, Any]
    script_entry: str | None = None
    """The entry's name when it runs here as ``__main__`` (pickles map the two), else None."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._fingerprint: str | None = None
        self._bundle: Bundle | None = None
        self._states: FileStates | None = None

    def bundle(self) -> Bundle:
        """The project's bundle, written again only when its files changed.

        The project is walked again only when a ``stat`` of its paths says something may have
        changed since the last walk (``_unchanged``): a warm call reads a few file states.
        """
        with self._lock:
            if self._bundle is not None and self._states is not None and self._states.unchanged():
                return self._bundle
            self._states = None
            warnings: list[str] = []
            try:
                walk_began = time.time_ns()
                entries = collect(self.root, warn=warnings.append)
                check_size(entries, DEFAULT_MAX_BYTES)
                states = FileStates.after_walk(self.root, entries, walk_began)
                fingerprint = _fingerprint(entries)
                if self._bundle is not None and fingerprint == self._fingerprint:
                    self._states = states
                    return self._bundle
                for warning in warnings:
                    print(f"svc: warning: {warning}", file=sys.stderr)
                self._bundle = _write_bundle(entries)
                self._fingerprint = fingerprint
                self._states = states
                return self._bundle
            except BundleTooLarge as error:
                raise ProjectError(str(error), code="bundle_too_large") from None
            except BundleError as error:
                raise ProjectError(f"cannot bundle {self.root}: {error}", code="bundle_failed") from None


def _fingerprint(entries: list[Entry]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(repr((entry.path, entry.kind, entry.mode, entry.size, entry.target, entry.mtime_ns)).encode())
    return digest.hexdigest()


_scratch: str | None = None
_scratch_lock = threading.Lock()


def _scratch_dir() -> str:
    """A folder for this process's bundles, removed when it exits (the project itself is left alone)."""
    global _scratch
    with _scratch_lock:
        if _scratch is None:
            _scratch = tempfile.mkdtemp(prefix="svc-client-")
            atexit.register(shutil.rmtree, _scratch, True)
        return _scratch


def _write_bundle(entries: list[Any]) -> Bundle:
    descriptor, name = tempfile.mkstemp(prefix="bundle-", suffix=".tar.gz", dir=_scratch_dir())
    with os.fdopen(descriptor, "wb") as handle:
        write_tar_gz(entries, handle)
    digest = hashlib.sha256()
    with open(name, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return Bundle(Path(name), digest.hexdigest(), os.path.getsize(name))


# --- finding the app and the module of a workload --------------------------------------------


def _apps_in(module: ModuleType) -> list[App]:
    return [value for value in list(vars(module).values()) if isinstance(value, App)]


def _owns(app: App, workload: Workload) -> bool:
    return any(w is workload for w in app.workloads)


def _declaring(modules: list[ModuleType], workload: Workload) -> tuple[App, ModuleType] | None:
    for module in modules:
        for app in _apps_in(module):
            if _owns(app, workload):
                return app, module
    return None


def find_owner(workload: Workload) -> tuple[App, ModuleType]:
    """The App that declared ``workload`` and the module defining that App."""
    likely: list[ModuleType] = []
    target_module = getattr(workload.target, "__module__", None)
    for name in (target_module, "__main__"):
        module = sys.modules.get(name) if isinstance(name, str) else None
        if module is not None:
            likely.append(module)
    # Every loaded module only when neither likely one declares it: this runs on every .remote().
    found = _declaring(likely, workload)
    if found is None:
        loaded: list[object] = list(sys.modules.values())  # typed as modules, but anything can be put there
        found = _declaring([m for m in loaded if isinstance(m, ModuleType) and m not in likely], workload)
    if found is not None:
        return found
    raise Error(
        f"{workload.name}.remote(): cannot find the svc.App that declares {workload.name} at the top level of a "
        "module, so there is no project to upload. Declare the App at module level (app = svc.App(...)) in a "
        f"file and run or import it, or call `svc run <module>:{workload.name} <args...>`; use .local() to run "
        "it in this process."
    )


def _importable_from(folder: str, entry: str, file: str) -> bool:
    base = os.path.join(folder, *entry.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate) and os.path.samefile(candidate, file):
            return True
    return False


def _module_root(entry: str, file: str | None) -> str:
    """The CLI's rule for a module target (the current folder), else where the module was imported from."""
    cwd = os.getcwd()
    if file is None:
        return cwd
    return _module_root_from(entry, file, cwd)


@functools.lru_cache(maxsize=64)
def _module_root_from(entry: str, file: str, cwd: str) -> str:
    # Kept per module file and current folder (every .remote() asks): what it reads of the file system,
    # where an imported module's file is, changes only if that file is moved while it runs.
    file = os.path.abspath(file)
    if _importable_from(cwd, entry, file):
        return cwd
    root = os.path.dirname(file)
    depth = len(entry.split(".")) - 1 + (os.path.basename(file) == "__init__.py")
    for _ in range(depth):
        root = os.path.dirname(root)
    if _importable_from(root, entry, file):
        return root
    raise Error(f"cannot tell the project root of module {entry!r} ({file}): run from the folder it is imported from")


def _is_initializing(module: ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


_projects: dict[tuple[str, str], Project] = {}
_projects_lock = threading.Lock()


def project_of(workload: Workload) -> Project:
    """The project of a declared workload (cached: the code imported here does not change)."""
    app, module = find_owner(workload)
    if _is_initializing(module):
        raise Error(
            f"{workload.name}.remote() was called while {module.__name__} is being imported, which would run it "
            'again in its own container: put the call under `if __name__ == "__main__":` or in a function.'
        )
    file = getattr(module, "__file__", None)
    if module.__name__ == "__main__":
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.name:  # python -m pkg.app
            entry = spec.name
            root, target = _module_root(entry, file), entry
        elif file is None:
            raise Error(
                f"{workload.name}.remote(): the app is defined in an interactive session, which svc cannot "
                "upload: define it in a file and run or import that file."
            )
        else:
            path = os.path.abspath(file)
            root, entry, target = os.path.dirname(path), Path(path).stem, path
            if not entry.isidentifier():
                raise Error(f"{path}: {entry!r} is not a valid Python module name; rename the file")
        return _cached(
            root, entry, lambda: Project(root, entry, app.name, manifest_subprocess(target, root), script_entry=entry)
        )
    entry = module.__name__
    root = _module_root(entry, file)
    return _cached(root, entry, lambda: Project(root, entry, app.name, manifest_in_process(app, entry)))


def explicit_project(root: str, entry: str, app: App) -> Project:
    """The project of an app whose root and entry the caller knows (``svc.run`` imported it itself)."""
    return _cached(
        os.path.abspath(root),
        entry,
        lambda: Project(os.path.abspath(root), entry, app.name, manifest_in_process(app, entry)),
    )


def _cached(root: str, entry: str, make: Any) -> Project:
    with _projects_lock:
        project = _projects.get((root, entry))
        if project is None:
            project = _projects[(root, entry)] = make()
        return project


def manifest_in_process(app: App, entry: str) -> dict[str, Any]:
    """What ``python -m svc.manifest <entry>`` prints, made from the already imported app."""
    from ..manifest import build_manifest

    # The JSON round trip gives exactly the document the command prints (tuples become lists, ...).
    manifest: dict[str, Any] = json.loads(json.dumps(build_manifest(app, entry)))
    return manifest


def manifest_subprocess(target: str, root: str) -> dict[str, Any]:
    """``python -m svc.manifest <target>`` run in ``root`` with this interpreter and this SDK."""
    inherited = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": SDK_PATH + (os.pathsep + inherited if inherited else ""),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    command = [sys.executable, "-m", "svc.manifest", target]
    try:
        done = subprocess.run(
            command,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=MANIFEST_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ProjectError(
            f"importing {target} to describe the app did not finish within {MANIFEST_TIMEOUT:.0f} s",
            code="manifest_failed",
            hint="Something the module runs at import waits (input, a network call).",
        ) from None
    stderr = done.stderr.strip()
    if done.returncode == 0:
        try:
            manifest = json.loads(done.stdout)
        except ValueError:
            manifest = None
        if not is_object(manifest):
            raise ProjectError(f"python -m svc.manifest {target} printed no manifest", code="manifest_failed")
        if stderr:  # the module's own output while it was imported
            print(stderr, file=sys.stderr)
        return manifest
    message = stderr.splitlines()[-1] if done.returncode == 2 and stderr else stderr
    raise ProjectError(
        f"Python could not describe the app of {target}:\n{message}",
        code="manifest_failed",
        hint=f"To reproduce: cd {root} && {sys.executable} -m svc.manifest {target}",
        details={"exitCode": done.returncode},
    )
