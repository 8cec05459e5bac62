"""What ``.request()`` returns: an HTTP response with the familiar reader methods.

The shape of ``requests.Response`` (``status_code``, ``headers``, ``content``,
``text``, ``json()``, ``ok``, ``raise_for_status()``) so code written for it reads
the same, without the dependency; ``raise_for_status()`` raises svc's typed
exception of the error body's code (``svc.NotFoundError``, ``svc.QueueFullError``...).
"""

from __future__ import annotations

import json as _json
from collections.abc import Iterator, Mapping
from typing import Any

from ._errors import error_from_answer


class Headers(Mapping[str, str]):
    """Response headers; names are matched case-insensitively."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._items: dict[str, tuple[str, str]] = {}
        for name, value in pairs:
            known = self._items.get(name.lower())
            self._items[name.lower()] = (name, value if known is None else f"{known[1]}, {value}")

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return repr({name: value for name, value in self._items.values()})


class Response:
    """The answer of a workload to ``.request()``."""

    def __init__(self, method: str, url: str, status_code: int, headers: list[tuple[str, str]], content: bytes) -> None:
        self.method = method
        self.url = url
        self.status_code = status_code
        self.headers = Headers(headers)
        self.content = content

    @property
    def ok(self) -> bool:
        """True for a status below 400."""
        return self.status_code < 400

    @property
    def encoding(self) -> str:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                return value.strip('"')
        return "utf-8"

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, "replace")

    def json(self) -> Any:
        """The body parsed as JSON (ValueError when it is not JSON)."""
        return _json.loads(self.content)

    def raise_for_status(self) -> Response:
        """Raises the typed svc exception of an error answer (status 400 or more); returns self otherwise."""
        if not self.ok:
            raise error_from_answer(self.status_code, self.content, f"{self.method} {self.url}", api=False)
        return self

    def __repr__(self) -> str:
        return f"<svc.Response [{self.status_code}]>"
