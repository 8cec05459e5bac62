"""docs/sdk.md and docs/manifest.md stay true to the code."""

from __future__ import annotations

import re

import pytest
import svc
from helpers import REPO_ROOT
from svc._options import OPTIONS
from svc.runtime import ERROR_CODES

SDK_MD = (REPO_ROOT / "docs" / "sdk.md").read_text()
MANIFEST_MD = (REPO_ROOT / "docs" / "manifest.md").read_text()


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_sdk_md_has_a_row_for_every_option(option):
    assert re.search(rf"^\| `{option}` \|", SDK_MD, re.M), f"docs/sdk.md has no table row for {option}"


@pytest.mark.parametrize("code,status", sorted(ERROR_CODES.items()))
def test_sdk_md_documents_every_runtime_error_code(code, status):
    assert f"| {status} | `{code}` |" in SDK_MD


@pytest.mark.parametrize("name", sorted(set(svc.__all__) - {"__version__"}))
def test_sdk_md_documents_every_public_name(name):
    assert f"svc.{name}" in SDK_MD


def example_errors() -> list[str]:
    block = SDK_MD.split("Errors say what to write instead. For example:\n\n```\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


@pytest.mark.parametrize("line", example_errors())
def test_the_example_error_messages_are_what_the_code_says(line):
    app = svc.App("docs")
    decorator, rest = line.split(": ", 1)
    option, value = re.match(r"(\w+)=(.+?) (?:is|contains) ", rest).groups()
    kind = decorator.rsplit(".", 1)[1]
    with pytest.raises(svc.InvalidOptionError) as caught:
        getattr(app, kind)(**{option: eval(value)})  # noqa: S307 - the doc's own literal
    expected = line.split("...")[0]
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize("option", sorted(set(OPTIONS) - {"name", "image"}))
def test_manifest_md_has_a_row_for_every_manifest_option(option):
    assert re.search(rf"^\| `{option}` \|", MANIFEST_MD, re.M)
