"""The public surface is svc.__all__, and every public class presents itself as svc.X."""

from __future__ import annotations

import json
from pathlib import Path

import svc
from helpers import run_python

DEFINITIONS = {
    "App",
    "Autoscaler",
    "Cls",
    "Context",
    "Cors",
    "Cron",
    "Function",
    "FunctionCall",
    "Image",
    "Period",
    "Retries",
    "Secret",
    "Volume",
    "__version__",
    "endpoint",
    "enter",
    "exit",
    "method",
    "parameter",
}
EXCEPTIONS = {
    "Error",
    "InvalidOptionError",
    "RemoteError",
    "UnauthorizedError",
    "NotSignedInError",
    "ForbiddenError",
    "NotFoundError",
    "CallCancelledError",
    "CallExpiredError",
    "InvalidRequestError",
    "ConfigError",
    "ProjectError",
    "TooManyRequestsError",
    "QueueFullError",
    "UnavailableError",
    "WorkerCrashedError",
    "FunctionTimeoutError",
    "StartFailedError",
    "RemoteCallError",
    "ServerUnreachableError",
    "RemoteTraceback",
}
PUBLIC = DEFINITIONS | EXCEPTIONS


def test_all_lists_exactly_the_public_surface():
    assert set(svc.__all__) == PUBLIC
    assert len(svc.__all__) == len(PUBLIC)


def test_every_exported_member_exists_and_classes_belong_to_svc():
    for name in svc.__all__:
        member = getattr(svc, name)
        if isinstance(member, type):
            assert member.__module__ == "svc", name


def test_public_names_are_not_private_modules():
    public = {name for name in dir(svc) if not name.startswith("_")}
    assert public - PUBLIC <= {"bundle", "exceptions", "manifest", "run", "runtime"}  # submodules, once imported


def test_version_is_svc_s_own_from_package_json():
    package = json.loads((Path(__file__).resolve().parents[3] / "package.json").read_text())
    assert svc.__version__ == package["version"]


def test_error_hierarchy():
    assert issubclass(svc.InvalidOptionError, svc.Error)
    assert issubclass(svc.InvalidOptionError, ValueError)
    assert issubclass(svc.Error, Exception)


def test_every_exception_is_exported_from_svc_and_svc_exceptions():
    import svc.exceptions

    assert set(svc.exceptions.__all__) == EXCEPTIONS
    for name in EXCEPTIONS:
        assert getattr(svc, name) is getattr(svc.exceptions, name)


def test_remote_error_hierarchy():
    for name in EXCEPTIONS - {"Error", "InvalidOptionError", "RemoteError", "RemoteTraceback"}:
        assert issubclass(getattr(svc, name), svc.RemoteError), name
    assert issubclass(svc.RemoteError, svc.Error)
    assert issubclass(svc.NotSignedInError, svc.UnauthorizedError)
    assert issubclass(svc.QueueFullError, svc.TooManyRequestsError)
    assert issubclass(svc.ServerUnreachableError, ConnectionError)
    assert not issubclass(svc.RemoteTraceback, svc.Error)  # never raised on its own: a __cause__


def test_the_sdk_manifest_and_asgi_app_import_without_uvicorn():
    # uvicorn lives only in image venvs; a finder that refuses it proves nothing here needs it.
    code = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('uvicorn', 'uvloop', 'httptools', 'websockets'):\n"
        "            raise ImportError('refused: ' + name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import svc, svc.manifest, svc.manifest._cli, svc.runtime, svc.runtime.__main__, svc._client, svc.run\n"
        "print('ok')\n"
    )
    result = run_python("-c", code)
    assert result.stdout == "ok\n", result.stderr
