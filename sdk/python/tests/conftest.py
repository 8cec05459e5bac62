"""Shared fixtures: a fresh App and modules written on the fly."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import svc


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
