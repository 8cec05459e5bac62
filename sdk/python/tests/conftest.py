"""Shared fixtures: a fresh App, modules written on the fly, and the real `svc server` the client
tests share (one per session) with the project they call (tests/fixtures/client_project)."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest
import svc

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "client_server"))
import client_harness  # noqa: E402


@pytest.fixture(scope="session")
def server(request):
    """The shared `svc server` (started on first use, stopped at the end of the session)."""
    request.addfinalizer(client_harness.stop_shared_server)
    return client_harness.shared_server()


@pytest.fixture(scope="module")
def client_app():
    """The client project's module, imported as the tests' own code would import it."""
    sys.path.insert(0, str(client_harness.PROJECT))
    yield importlib.import_module("client_app")
    sys.path.remove(str(client_harness.PROJECT))


@pytest.fixture
def app() -> svc.App:
    return svc.App("test")


@pytest.fixture
def write_module(tmp_path: Path):
    """Writes ``source`` (dedented) to ``tmp_path/<name>.py`` and returns its path."""

    def write(source: str, name: str = "app") -> Path:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return path

    return write
