"""The server's error codes as typed exceptions, and error frames as raised exceptions: no server needed."""

from __future__ import annotations

import base64
import json
import pickle
import re

import pytest
import svc
from helpers import REPO_ROOT
from svc._client._errors import CODE_CLASSES, error_for, error_from_answer
from svc._client._remote import raise_remote
from svc.runtime._pickling import dump_exception


def server_codes() -> set[str]:
    source = (REPO_ROOT / "core" / "model" / "errors.ts").read_text()
    table = source.split("export const errorCodes = {", 1)[1].split("} as const", 1)[0]
    return set(re.findall(r"^\s+(\w+): \{\s*status:", table, re.M))


def test_every_server_code_has_a_class():
    codes = server_codes()
    assert "queue_full" in codes and len(codes) > 30
    assert codes == set(CODE_CLASSES), f"add these codes to svc._client._errors: {codes - set(CODE_CLASSES)}"


@pytest.mark.parametrize(
    "code,cls",
    [
        ("not_found", svc.NotFoundError),
        ("unauthorized", svc.UnauthorizedError),
        ("not_signed_in", svc.NotSignedInError),
        ("forbidden", svc.ForbiddenError),
        ("queue_full", svc.QueueFullError),
        ("too_many_runs", svc.TooManyRequestsError),
        ("invalid_arguments", svc.InvalidRequestError),
        ("worker_crashed", svc.WorkerCrashedError),
        ("image_build_failed", svc.StartFailedError),
        ("app_paused", svc.UnavailableError),
        ("manifest_invalid", svc.ProjectError),
        ("handler_error", svc.RemoteCallError),
        ("config_invalid", svc.ConfigError),
        ("a_code_from_a_newer_server", svc.RemoteError),
    ],
)
def test_a_code_picks_its_class(code, cls):
    error = error_for(code, "it went wrong", status=418, hint="do this")
    assert type(error) is cls
    assert (error.code, error.status, error.message, error.hint) == (code, 418, "it went wrong", "do this")
    assert str(error) == "it went wrong\nHint: do this"


def test_an_error_body_gives_code_message_hint_and_details():
    body = json.dumps(
        {
            "error": {
                "code": "queue_full",
                "message": "greet already has 100 requests waiting",
                "hint": "retry later",
                "details": {"max": 100},
            }
        }
    ).encode()
    error = error_from_answer(429, body, "POST /x")
    assert isinstance(error, svc.QueueFullError)
    assert (error.status, error.message, error.hint, error.details) == (
        429,
        "greet already has 100 requests waiting",
        "retry later",
        {"max": 100},
    )


def test_an_answer_that_is_not_svc_s_is_classed_by_status():
    error = error_from_answer(404, b"<html>nope</html>", "GET /api/v1/apps/x")
    assert isinstance(error, svc.NotFoundError) and error.code == "unexpected_response"
    assert error_from_answer(404, b'{"detail": "Not Found"}', "GET /items", api=False).code == "not_found"
    assert "GET /api/v1/apps/x answered HTTP 404: <html>nope</html>" == error.message
    assert type(error_from_answer(418, b"", "GET /")) is svc.InvalidRequestError
    assert type(error_from_answer(500, b"", "GET /")) is svc.RemoteError


def test_remote_errors_pickle_with_their_fields():
    error = svc.NotFoundError("gone", status=404, hint="look elsewhere", details={"field": "x"})
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is svc.NotFoundError
    assert (copy.code, copy.status, copy.message, copy.hint, copy.details) == (
        "not_found",
        404,
        "gone",
        "look elsewhere",
        {"field": "x"},
    )
    call_error = pickle.loads(pickle.dumps(svc.RemoteCallError("ValueError: x", type="ValueError", traceback="tb")))
    assert (call_error.type, call_error.traceback) == ("ValueError", "tb")


def frame_of(
    exc: BaseException, traceback: str = "Traceback (most recent call last):\n  in f\nValueError: bad\n"
) -> dict:
    return {
        "type": "error",
        "pickle": dump_exception(exc),
        "exception": f"{type(exc).__name__}: {exc}",
        "traceback": traceback,
    }


def test_an_error_frame_raises_the_exception_itself_with_the_remote_traceback_as_its_cause():
    with pytest.raises(KeyError) as caught:
        raise_remote(frame_of(KeyError("missing")))
    cause = caught.value.__cause__
    assert isinstance(cause, svc.RemoteTraceback)
    assert cause.traceback.endswith("ValueError: bad\n")
    assert "Remote traceback (in the svc container):" in str(cause)


class NeedsTwo(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a}+{b}")


def test_an_exception_that_does_not_unpickle_raises_remote_call_error():
    frame = {
        "type": "error",
        "pickle": None,
        "exception": "NeedsTwo: 1+2",
        "traceback": "Traceback ...\nNeedsTwo: 1+2\n",
    }
    with pytest.raises(svc.RemoteCallError) as caught:
        raise_remote(frame)
    error = caught.value
    assert (error.type, error.message, error.code) == ("NeedsTwo", "NeedsTwo: 1+2", "handler_error")
    assert "Remote traceback:\nTraceback ...\nNeedsTwo: 1+2" in str(error)
    garbled = {**frame, "pickle": base64.b64encode(b"not a pickle").decode()}
    with pytest.raises(svc.RemoteCallError):
        raise_remote(garbled)


def test_system_exit_in_the_function_does_not_exit_the_caller():
    with pytest.raises(svc.RemoteCallError) as caught:
        raise_remote(frame_of(SystemExit(3)))
    assert caught.value.type == "SystemExit"


def test_an_error_frame_with_a_code_raises_that_code_s_exception():
    frame = {
        "type": "error",
        "code": "worker_crashed",
        "exception": "worker_crashed: the container died",
        "pickle": None,
        "traceback": None,
    }
    with pytest.raises(svc.WorkerCrashedError) as caught:
        raise_remote(frame)
    assert (caught.value.code, caught.value.message) == ("worker_crashed", "the container died")
