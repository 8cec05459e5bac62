"""``svc.Secret``: environment variables a workload's workers get, without their values in the code.

``Secret.from_name("db")`` names a secret of the workspace (``svc secret create db
DATABASE_URL=…``); ``Secret.from_dict({...})`` carries values from the deploying
process's own environment, sent to the server beside the manifest (never in it) and
kept there sealed, like a named secret. Neither shows its values in ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from . import _checks
from .exceptions import InvalidOptionError

KEY_RULE = _checks.ENV_KEY_RULE
_KEY = _checks.ENV_KEY
# Set by svc in every worker: the platform refuses them too (core/services/secrets/rules.ts).
_RESERVED = _checks.RESERVED_ENV_KEYS
MAX_VALUE_BYTES = _checks.MAX_ENV_VALUE_BYTES


class Secret:
    """Environment variables for a workload's workers: ``secrets=[svc.Secret.from_name("db")]``.

    Make one with ``Secret.from_name`` or ``Secret.from_dict``; see docs/secrets.md.
    """

    __slots__ = ("_name", "_values")

    def __init__(self, *, _name: str | None = None, _values: Mapping[str, str] | None = None) -> None:
        if (_name is None) == (_values is None):
            raise TypeError("make a Secret with svc.Secret.from_name(name) or svc.Secret.from_dict(values)")
        self._name = _name
        self._values = dict(_values) if _values is not None else None

    @classmethod
    def from_name(cls, name: str) -> Secret:
        """A secret of the workspace, by name: its keys reach the workers as environment variables.

        The deploy (or ``.remote()``) is refused with ``secret_not_found`` when the workspace
        has no secret of this name. ``.local()`` does not fetch it: the server never hands
        values back; the variables are whatever this process's environment holds.

        Example: ``svc.Secret.from_name("db")``
        """
        try:
            checked = _checks.name(name)
        except _checks.Problem as problem:
            _checks.reject("svc.Secret.from_name", "name", name, problem)
        return cls(_name=checked)

    @classmethod
    def from_dict(cls, values: Mapping[str, str | None]) -> Secret:
        """Values from this process (``os.environ``) for the workers' environment.

        Keys are environment variable names; a ``None`` value is left out, so
        ``{"TOKEN": os.environ.get("TOKEN")}`` works where the variable may be unset.
        The values travel beside the manifest and are stored sealed for the app; ``.local()``
        sets them in ``os.environ`` for the call.

        Example: ``svc.Secret.from_dict({"API_KEY": os.environ["API_KEY"]})``
        """
        where = "svc.Secret.from_dict"
        # Typed, but a caller without a type checker may pass anything: checked as what it is.
        given = cast(object, values)
        if not isinstance(given, Mapping):
            raise InvalidOptionError(
                f"{where}: values is a {_checks.type_name(values)}, not a dict of KEY: value", option="values"
            )
        kept: dict[str, str] = {}
        for key, value in cast("Mapping[object, object]", given).items():
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise InvalidOptionError(f"{where}: the key {key!r} is not {KEY_RULE}", option="values")
            if key.startswith(_checks.RESERVED_ENV_PREFIX) or key in _RESERVED:
                raise InvalidOptionError(
                    f"{where}: the key {key} is one svc sets in every worker itself; choose another name",
                    option="values",
                )
            if value is None:
                continue
            # The message names the key, never the value.
            if not isinstance(value, str):
                raise InvalidOptionError(
                    f"{where}: the value of {key} is a {_checks.type_name(value)}, not a string", option="values"
                )
            if len(value.encode()) > MAX_VALUE_BYTES or "\0" in value:
                raise InvalidOptionError(
                    f"{where}: the value of {key} is over {MAX_VALUE_BYTES} bytes or holds a NUL character",
                    option="values",
                )
            kept[key] = value
        return cls(_values=kept)

    @property
    def name(self) -> str | None:
        """The workspace secret's name; None for ``from_dict``."""
        return self._name

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of a ``from_dict`` secret (a named one's are on the server: ``svc secret list``)."""
        return tuple(self._values or ())

    def local_values(self) -> Mapping[str, str]:
        """What ``.local()`` sets in ``os.environ``: a ``from_dict`` secret's values; nothing for a named one."""
        return dict(self._values or {})

    def __repr__(self) -> str:
        if self._name is not None:
            return f"svc.Secret.from_name({self._name!r})"
        return f"svc.Secret.from_dict(<{len(self.keys)} keys: {', '.join(self.keys)}>)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Secret) and self._name == other._name and self._values == other._values

    def __hash__(self) -> int:
        return hash((self._name, tuple(sorted((self._values or {}).items()))))


def check_secrets(where: str, value: Any) -> tuple[Secret, ...]:
    """The ``secrets=`` option: a list of ``svc.Secret``, each named secret once."""
    example = 'pass a list such as [svc.Secret.from_name("db")]'
    if isinstance(value, (str, Secret)):
        shown = f"svc.Secret.from_name({value!r})" if isinstance(value, str) else repr(value)
        raise InvalidOptionError(
            f"{where}: secrets= takes a list, not one {'name' if isinstance(value, str) else 'Secret'}: write [{shown}]",
            option="secrets",
        )
    if not isinstance(value, (list, tuple)):
        raise InvalidOptionError(
            f"{where}: secrets= is a {_checks.type_name(value)}, not a list: {example}", option="secrets"
        )
    names: set[str] = set()
    items = cast("list[object] | tuple[object, ...]", value)
    for item in items:
        if isinstance(item, str):
            raise InvalidOptionError(
                f"{where}: secrets= holds the string {item!r}: write svc.Secret.from_name({item!r})", option="secrets"
            )
        if not isinstance(item, Secret):
            raise InvalidOptionError(
                f"{where}: secrets= holds a {_checks.type_name(item)}: {example}", option="secrets"
            )
        if item.name is not None:
            if item.name in names:
                raise InvalidOptionError(
                    f"{where}: secrets= names the secret {item.name!r} twice: list it once", option="secrets"
                )
            names.add(item.name)
    return tuple(cast("list[Secret] | tuple[Secret, ...]", items))
