"""Which server and which token: the lookup of docs/cli.md "Which server, which token".

The CLI (TypeScript) reads the same places in the same order, so ``.remote()``,
``.request()`` and ``svc <command>`` always talk to the same server as the same
caller. Each value is found on its own, first match wins:

1. the environment: ``SVC_SERVER`` and ``SVC_TOKEN``;
2. the credentials file ``svc login`` writes: ``$SVC_CONFIG_DIR/credentials.json``
   (``SVC_CONFIG_DIR`` defaults to ``~/.svc``);
3. a server on this machine: ``http://127.0.0.1:7420`` (or ``$SVC_PORT``) with the owner
   token in ``<$SVC_DATA_DIR or ~/.svc/data>/owner-token``.

A saved token goes only to the server it belongs to: the file's token to the file's
server, the owner token to this machine's; ``SVC_SERVER`` naming another server needs
``SVC_TOKEN``.

Inside a svc container (``SVC_STAGE`` is set by the runtime) only the environment
counts: the machine's files belong to the platform, not to the code it runs.

The TypeScript twin is cli/credentials.ts: the same checks, the same errors (a damaged
credentials file is ``config_invalid`` naming it, never skipped; one open to other
users is tightened to 0600 with a warning).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .._json import is_object
from ..exceptions import ConfigError, NotSignedInError

DEFAULT_PORT = 7420
CREDENTIALS_FILE = "credentials.json"
OWNER_TOKEN_FILE = "owner-token"
CREDENTIALS_VERSION = 1
TOKEN_PATTERN = re.compile(r"svc_[0-9A-Za-z]{40}")
_PRINTABLE = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class Credentials:
    """Where to send requests and the token to send; ``*_from`` say where each was found."""

    server: str
    token: str
    server_from: str
    token_from: str


def _value(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def config_dir(env: Mapping[str, str]) -> Path:
    configured = _value(env, "SVC_CONFIG_DIR")
    relative = configured is not None and not configured.startswith(("/", "~"))
    return _config_dir(configured, os.environ.get("HOME"), os.getcwd() if relative else "")


@functools.lru_cache(maxsize=8)
def _config_dir(configured: str | None, _home: str | None, _cwd: str) -> Path:
    # Cached by all it depends on (HOME is where Path.home() looks first, the current folder what a
    # relative path is resolved against): every .remote() looks for the credentials file.
    return Path(os.path.abspath(Path(configured or Path.home() / ".svc").expanduser()))


def data_dir(env: Mapping[str, str]) -> Path:
    return Path(os.path.abspath(Path(_value(env, "SVC_DATA_DIR") or Path.home() / ".svc" / "data").expanduser()))


def local_server(env: Mapping[str, str]) -> str:
    port = _value(env, "SVC_PORT") or str(DEFAULT_PORT)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(
            f"SVC_PORT must be a port number from 1 to 65535, got {port!r}",
            hint="Set SVC_PORT to the port of your svc server, or unset it for 7420.",
        )
    return f"http://127.0.0.1:{int(port)}"


def _damaged(path: Path, problem: str) -> ConfigError:
    return ConfigError(
        f"the credentials file {path} {problem}.",
        hint=f"Run `svc login` to write it again, or delete it (`svc logout`, or rm {path}).",
        details={"path": str(path)},
    )


@functools.lru_cache(maxsize=32)  # a function of its arguments only (errors are not cached): read on every call
def normalize_server(raw: str, where: str) -> str:
    """An http(s) base URL without a trailing slash; ConfigError naming ``where`` otherwise."""
    value = raw.strip()
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 -- reading .port raises ValueError for a port that is not a number
        valid = True
    except ValueError:
        valid = False
    if (
        not valid
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or parts.username is not None
        or parts.password is not None
    ):
        raise ConfigError(
            f"{where} must be the http(s) base URL of an svc server, such as https://svc.example.com, got {raw!r}",
            hint="Give the scheme, the host and the port if it is not the default, without a query.",
        )
    # The form the CLI gives (WHATWG URL origin): host in lower case, no default port, so both compare alike.
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = parts.port
    default = {"http": 80, "https": 443}[parts.scheme]
    netloc = host if port is None or port == default else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def _tighten(path: Path, descriptor: int) -> None:
    """A credentials file open to other users is made 0600, with a warning (as the CLI does)."""
    mode = os.fstat(descriptor).st_mode & 0o777
    if mode & 0o077:
        try:
            os.fchmod(descriptor, 0o600)
        except OSError:
            return
        print(
            f"svc: warning: {path} was open to other users (mode {mode:04o}); tightened it to 0600. If others "
            "may have read it, run `svc logout` and `svc login` to replace the token.",
            file=sys.stderr,
        )


def read_credentials(path: Path) -> dict[str, str] | None:
    """``{"server", "token"}`` of the credentials file, None when there is none; ConfigError when damaged."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _damaged(path, "is a symbolic link") from None
        if error.errno == errno.EACCES:
            raise _damaged(path, "cannot be read (permission denied)") from None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise _damaged(path, "is not a regular file")
        _tighten(path, descriptor)
        raw = handle.read()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise _damaged(path, f"is not valid JSON ({error})") from None
    if not is_object(data):
        raise _damaged(path, "does not hold a JSON object")
    version = data.get("version")
    if isinstance(version, bool) or version != CREDENTIALS_VERSION:  # True == 1, but is no version
        newer = type(version) is int and version > CREDENTIALS_VERSION  # not a bool, an int subclass
        raise _damaged(
            path,
            f"was written by a newer svc (version {version}; this svc reads version {CREDENTIALS_VERSION})"
            if newer
            else f'has no "version": {CREDENTIALS_VERSION}',
        )
    server = data.get("server")
    if not isinstance(server, str):
        raise _damaged(path, 'has no "server" (a URL)')
    try:
        server = normalize_server(server, f'"server" in {path}')
    except ConfigError:
        raise _damaged(path, f'has a "server" that is not an http(s) URL: {json.dumps(server)}') from None
    token = data.get("token")
    if not isinstance(token, str) or not _PRINTABLE.fullmatch(token):
        raise _damaged(path, 'has no "token" (a token string without spaces)')
    return {"server": server, "token": token}


def _read_owner_token(path: Path) -> str | None:
    """The owner token of a server on this machine, None when there is none (or it is not readable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None
    token = text.strip()
    if not TOKEN_PATTERN.fullmatch(token):
        raise ConfigError(
            f"{path} does not hold a valid svc token",
            hint=f"Delete {path} and restart svc server to create a new owner token, or set SVC_TOKEN.",
            details={"path": str(path)},
        )
    return token


def find_credentials(env: Mapping[str, str] | None = None) -> Credentials:
    """The server and token to use, each from the first place that has one.

    Raises NotSignedInError when no place has a token, ConfigError when a place
    that exists cannot be used (a damaged credentials file, a bad SVC_SERVER).
    """
    env = os.environ if env is None else env
    server, token = _value(env, "SVC_SERVER"), _value(env, "SVC_TOKEN")
    if server is not None:
        server = normalize_server(server, "SVC_SERVER")
    if _value(env, "SVC_STAGE") is not None:
        return _in_container(server, token)
    credentials_path = config_dir(env) / CREDENTIALS_FILE
    saved = read_credentials(credentials_path)
    server_from = "SVC_SERVER" if server is not None else str(credentials_path) if saved else "a server on this machine"
    server = server or (saved["server"] if saved else local_server(env))
    if token is not None:
        return Credentials(server, token, server_from, "SVC_TOKEN")
    # A saved token goes only to the server it belongs to: SVC_SERVER naming another one must not receive it.
    if saved is not None and saved["server"] == server:
        return Credentials(server, saved["token"], server_from, str(credentials_path))
    owner_path = data_dir(env) / OWNER_TOKEN_FILE
    owner_token = _read_owner_token(owner_path) if server == local_server(env) else None
    if owner_token is not None:
        return Credentials(server, owner_token, server_from, str(owner_path))
    if saved is not None:
        raise NotSignedInError(
            f"svc has no token for {server}: SVC_TOKEN is not set, and the token in {credentials_path} is for {saved['server']}.",
            hint=f"Run `svc login --server {server}`, or set SVC_TOKEN to a token of that server.",
            status=401,
            details={"credentialsFile": str(credentials_path), "ownerToken": str(owner_path)},
        )
    raise NotSignedInError(
        f"svc found no token: SVC_TOKEN is not set, there is no {credentials_path}, and no svc server owner token "
        f"in {owner_path}.",
        hint="Run `svc login` (or `svc login --server <URL>`), or set SVC_SERVER and SVC_TOKEN "
        "(a token from `svc token create`).",
        status=401,
        details={"credentialsFile": str(credentials_path), "ownerToken": str(owner_path)},
    )


def _in_container(server: str | None, token: str | None) -> Credentials:
    if server is None or token is None:
        missing = " and ".join(name for name, value in (("SVC_SERVER", server), ("SVC_TOKEN", token)) if value is None)
        raise NotSignedInError(
            f"this code runs in a svc container, where calls to svc need SVC_SERVER and SVC_TOKEN; {missing} "
            f"{'is' if ' and ' not in missing else 'are'} not set.",
            hint="Give the workload the environment variables SVC_SERVER (the server's URL) and SVC_TOKEN "
            "(a token from `svc token create`), or call the function directly instead of .remote().",
            status=401,
        )
    return Credentials(server=server, token=token, server_from="SVC_SERVER", token_from="SVC_TOKEN")
