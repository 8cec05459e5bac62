"""``svc.Function.from_name(app, name)``: a deployed function, called from any Python signed in to
its workspace, with no source of the app at hand (docs/sdk.md, "Deployed functions from anywhere")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._checks import derive_name
from ._remote_calls import RemoteCalls

if TYPE_CHECKING:
    from ._client._remote import Target


class Function(RemoteCalls):
    """A deployed function: ``.remote``, ``.spawn``, ``.map``, ``.starmap`` and ``.for_each`` run its
    deployed version (the server's, with the deploy's secrets), as they run a project's own code.

    Results and exceptions come back as pickles: their classes must be importable here (the
    standard library, packages installed here too), or the call raises ``svc.RemoteCallError`` /
    ``svc.Error`` saying so.
    """

    def __init__(self, app: str, name: str) -> None:
        self.app = app
        self.name = name

    @classmethod
    def from_name(cls, app: str, name: str) -> Function:
        """The function ``name`` of the deployed app ``app``.

        ``name`` is the function's Python name or the workload name the manifest gives it
        (``say_hello`` and ``say-hello`` are the same). Nothing is asked of the server until the
        first call, which fails with ``svc.NotFoundError`` when the workspace has no such deployed
        function.
        """
        return cls(*deployed_name("svc.Function.from_name()", app, name))

    def _label(self) -> str:
        return f"{self.app}.{self.name}"

    def _target(self) -> Target:
        from ._client._remote import deployed_target

        return deployed_target(self.app, self.name)

    def __repr__(self) -> str:
        return f"<svc.Function {self.app}/{self.name} (deployed)>"


def deployed_name(where: str, app: object, name: object) -> tuple[str, str]:
    """``(app, workload name)`` of a deployed workload named in Python (``say_hello`` is ``say-hello``); TypeError
    for an argument that is not a non-empty string (the annotations say str; untyped callers may pass anything)."""
    for what, value in (("app", app), ("name", name)):
        if not isinstance(value, str) or value == "":
            raise TypeError(f"{where}: {what} must be a non-empty string, not {value!r}")
    return str(app), derive_name(str(name))
