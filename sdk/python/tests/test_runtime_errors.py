"""The runtime's error codes are the TypeScript error table's codes, with the same statuses."""

from __future__ import annotations

import json
import re

import pytest
from helpers import REPO_ROOT
from svc.runtime import ERROR_CODES
from svc.runtime._errors import RequestError

ERRORS_TS = REPO_ROOT / "core" / "model" / "errors.ts"


def typescript_codes() -> dict[str, int]:
    return {
        code: int(status) for code, status in re.findall(r"^\s*(\w+): \{ status: (\d+),", ERRORS_TS.read_text(), re.M)
    }


def test_the_runtime_uses_exactly_its_codes():
    assert ERROR_CODES == {
        "bad_request": 400,
        "invalid_json": 400,
        "method_not_allowed": 405,
        "upgrade_required": 426,
        "invalid_arguments": 422,
        "handler_error": 500,
        "timeout": 504,
    }


def test_every_runtime_code_is_in_core_errors_ts_with_the_same_status():
    table = typescript_codes()
    assert table, f"could not read the error table in {ERRORS_TS}"
    for code, status in ERROR_CODES.items():
        assert table.get(code) == status, f"{code}: runtime {status}, core/model/errors.ts {table.get(code)}"


def test_error_bodies_have_exactly_code_and_message():
    error = RequestError("invalid_arguments", "missing required argument 'name'")
    assert error.status == 422
    assert json.loads(error.body()) == {
        "error": {"code": "invalid_arguments", "message": "missing required argument 'name'"}
    }


def test_an_unknown_code_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown runtime error code"):
        RequestError("teapot", "no")
