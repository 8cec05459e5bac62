"""Which server and which token the client uses (docs/cli.md, "Which server, which token"): no server needed.

The TypeScript twin (cli/credentials.ts) makes the same choices; these tests pin the Python side.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import svc
from svc._client import find_credentials
from svc.exceptions import NotSignedInError

SAVED = "svc_" + "s" * 40
LOCAL = "svc_" + "l" * 40


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A config dir and a data dir, both empty."""
    config, data = tmp_path / "config", tmp_path / "data"
    config.mkdir()
    data.mkdir()
    return {"config": config, "data": data}


def env_of(places: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"SVC_CONFIG_DIR": str(places["config"]), "SVC_DATA_DIR": str(places["data"]), **extra}


def save_login(places: dict[str, Path], **fields: object) -> Path:
    path = places["config"] / "credentials.json"
    record = {
        "version": 1,
        "server": "http://saved:1",
        "token": SAVED,
        "workspace": "default",
        "savedAt": "2030-01-01T00:00:00Z",
        **fields,
    }
    path.write_text(json.dumps(record))
    path.chmod(0o600)
    return path


def save_owner_token(places: dict[str, Path], token: str = LOCAL) -> Path:
    path = places["data"] / "owner-token"
    path.write_text(token + "\n")
    return path


def test_the_environment_comes_first(places):
    save_login(places)
    save_owner_token(places)
    found = find_credentials(env_of(places, SVC_SERVER="http://env:2/", SVC_TOKEN="svc_env"))
    assert (found.server, found.token) == ("http://env:2", "svc_env")
    assert (found.server_from, found.token_from) == ("SVC_SERVER", "SVC_TOKEN")


def test_the_credentials_file_comes_before_the_local_owner_token(places):
    path = save_login(places)
    save_owner_token(places)
    found = find_credentials(env_of(places))
    assert (found.server, found.token) == ("http://saved:1", SAVED)
    assert (found.server_from, found.token_from) == (str(path), str(path))


def test_each_value_is_found_on_its_own(places):
    save_login(places)
    save_owner_token(places)
    only_token = find_credentials(env_of(places, SVC_TOKEN="svc_env"))
    assert (only_token.server, only_token.token) == ("http://saved:1", "svc_env")
    # SVC_SERVER naming the saved server: its token goes with it.
    only_server = find_credentials(env_of(places, SVC_SERVER="http://saved:1/"))
    assert (only_server.server, only_server.token) == ("http://saved:1", SAVED)


def test_a_saved_token_never_goes_to_another_server(places):
    save_login(places)
    save_owner_token(places)
    with pytest.raises(
        NotSignedInError, match=r"no token for https://env.example.com/svc.*is for http://saved:1"
    ) as caught:
        find_credentials(env_of(places, SVC_SERVER="https://env.example.com/svc/"))
    assert "svc login --server https://env.example.com/svc" in caught.value.hint


def test_without_login_the_local_server_and_its_owner_token(places):
    path = save_owner_token(places)
    found = find_credentials(env_of(places))
    assert (found.server, found.token, found.token_from) == ("http://127.0.0.1:7420", LOCAL, str(path))
    assert find_credentials(env_of(places, SVC_PORT="8123")).server == "http://127.0.0.1:8123"
    # The owner token goes to this machine's server only, named by SVC_SERVER or not.
    assert find_credentials(env_of(places, SVC_SERVER="http://127.0.0.1:7420")).token == LOCAL
    with pytest.raises(NotSignedInError):
        find_credentials(env_of(places, SVC_SERVER="http://env:2"))


def test_the_default_folders_are_under_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".svc" / "data").mkdir(parents=True)
    (tmp_path / ".svc" / "data" / "owner-token").write_text(LOCAL)
    assert find_credentials({}).token == LOCAL
    (tmp_path / ".svc" / "credentials.json").write_text(
        json.dumps({"version": 1, "server": "http://h:1", "token": SAVED})
    )
    (tmp_path / ".svc" / "credentials.json").chmod(0o600)
    assert (find_credentials({}).server, find_credentials({}).token) == ("http://h:1", SAVED)


def test_empty_variables_count_as_unset(places):
    save_owner_token(places)
    found = find_credentials(env_of(places, SVC_SERVER="", SVC_TOKEN="  "))
    assert (found.server, found.token) == ("http://127.0.0.1:7420", LOCAL)


def test_no_token_anywhere_is_not_signed_in(places):
    with pytest.raises(svc.NotSignedInError) as caught:
        find_credentials(env_of(places, SVC_SERVER="http://env:2"))
    error = caught.value
    assert (error.code, error.status) == ("not_signed_in", 401)
    assert isinstance(error, svc.UnauthorizedError)
    assert "credentials.json" in error.message and "owner-token" in error.message
    assert "svc login" in error.hint


@pytest.mark.parametrize(
    "content,problem",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        (json.dumps({"version": 2, "server": "http://s:1", "token": SAVED}), "newer svc"),
        (json.dumps({"server": "http://s:1", "token": SAVED}), '"version": 1'),
        (json.dumps({"version": 1, "server": "ftp://s", "token": SAVED}), "not an http(s) URL"),
        (json.dumps({"version": 1, "server": "http://s:1"}), 'has no "token"'),
    ],
)
def test_a_damaged_credentials_file_is_a_config_error_never_skipped(places, content, problem):
    save_owner_token(places)
    (places["config"] / "credentials.json").write_text(content)
    with pytest.raises(svc.ConfigError) as caught:
        find_credentials(env_of(places))
    assert caught.value.code == "config_invalid"
    assert "credentials.json" in caught.value.message and problem in caught.value.message


def test_a_credentials_file_open_to_others_is_tightened(places, capsys):
    path = save_login(places)
    path.chmod(0o644)
    assert find_credentials(env_of(places)).token == SAVED
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert "tightened it to 0600" in capsys.readouterr().err


@pytest.mark.parametrize(
    "variables,name", [({"SVC_PORT": "http"}, "SVC_PORT"), ({"SVC_SERVER": "svc.example.com"}, "SVC_SERVER")]
)
def test_bad_variables_are_config_errors(places, variables, name):
    save_owner_token(places)
    with pytest.raises(svc.ConfigError, match=name):
        find_credentials(env_of(places, **variables))


def test_an_owner_token_that_is_no_token_is_a_config_error(places):
    save_owner_token(places, "garbage")
    with pytest.raises(svc.ConfigError, match="owner-token does not hold a valid svc token"):
        find_credentials(env_of(places))


def test_inside_a_container_only_the_environment_counts(places):
    save_login(places)
    save_owner_token(places)
    with pytest.raises(svc.NotSignedInError) as caught:
        find_credentials(env_of(places, SVC_STAGE="deployed", SVC_SERVER="http://env:2"))
    assert "SVC_TOKEN is not set" in caught.value.message and "svc container" in caught.value.message
    found = find_credentials(env_of(places, SVC_STAGE="run-0123", SVC_SERVER="http://env:2", SVC_TOKEN="svc_env"))
    assert (found.server, found.token) == ("http://env:2", "svc_env")


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("HTTP://Svc.Example.com:80/", "http://svc.example.com"),
        ("https://svc.example.com:443/base/", "https://svc.example.com/base"),
        ("http://[::1]:7420", "http://[::1]:7420"),
    ],
)
def test_a_server_url_is_spelled_as_the_cli_spells_it(raw, normal):
    from svc._client._credentials import normalize_server

    assert normalize_server(raw, "SVC_SERVER") == normal


def test_the_credentials_folder_follows_home_and_the_current_folder(tmp_path, monkeypatch):
    # The folder is worked out once per HOME, current folder and SVC_CONFIG_DIR: each change is seen.
    for name in ("first", "second"):
        home = tmp_path / name / "home"
        (home / ".svc").mkdir(parents=True)
        (home / ".svc" / "credentials.json").write_text(
            json.dumps({"version": 1, "server": f"http://{name}:1", "token": SAVED})
        )
        (home / ".svc" / "credentials.json").chmod(0o600)
        monkeypatch.setenv("HOME", str(home))
        assert find_credentials({}).server == f"http://{name}:1"
    for name in ("first", "second"):
        monkeypatch.chdir(tmp_path / name)
        assert find_credentials({"SVC_CONFIG_DIR": "home/.svc"}).server == f"http://{name}:1"
