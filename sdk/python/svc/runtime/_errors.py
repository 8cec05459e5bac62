"""The error codes the runtime answers with; the same codes and statuses as core/model/errors.ts.

Every error body is ``{"error": {"code": "...", "message": "..."}}``, over HTTP and
as a realtime WebSocket message alike.
"""

from __future__ import annotations

import json

ERROR_CODES: dict[str, int] = {
    "bad_request": 400,  # a function call's body is not a pickled call
    "invalid_json": 400,  # the request body (or a realtime message) is not valid JSON
    "method_not_allowed": 405,  # a function is called with POST only
    "upgrade_required": 426,  # a realtime workload answers WebSocket upgrades only
    "invalid_arguments": 422,  # the arguments do not match the function's parameters
    "handler_error": 500,  # the workload code raised; the traceback is in the workload logs
    "timeout": 504,  # the call ran past the workload's timeout; its worker is replaced
}


class RequestError(Exception):
    """A request the runtime answers with an error body instead of calling the handler's result."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown runtime error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return ERROR_CODES[self.code]

    def body(self) -> bytes:
        return json.dumps({"error": {"code": self.code, "message": self.message}}).encode("utf-8")
