"""``svc.Autoscaler``: how many containers an endpoint, ASGI app or realtime handler may run."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from . import _checks

_WHERE = "svc.Autoscaler"
_RANGES = {
    "max_containers": _checks.integer(1, 1000),
    "tasks_per_container": _checks.integer(1, 10000),
    "min_containers": _checks.integer(0, 1000),
}


@dataclass(frozen=True)
class Autoscaler:
    """Scaling bounds of a workload. Immutable; validated when created.

    The platform keeps ``ceil(requests in flight and queued / tasks_per_container)``
    containers, clamped to ``min_containers``..``max_containers``.

    Parameters:
        max_containers (int): Upper bound on containers, 1 to 1000. Default: ``1``.
            Example: ``Autoscaler(max_containers=5)``
        tasks_per_container (int): Requests in flight per container at which one more
            container is added, 1 to 10000. Default: ``1``.
            Example: ``Autoscaler(max_containers=4, tasks_per_container=8)``
        min_containers (int): Containers kept running even when idle, 0 to
            ``max_containers``. Default: ``0`` (scale to zero).
            Example: ``Autoscaler(min_containers=1, max_containers=3)``

    Raises:
        svc.InvalidOptionError: a value is not an integer or is out of range.
    """

    max_containers: int = 1
    tasks_per_container: int = 1
    min_containers: int = 0

    def __post_init__(self) -> None:
        _checks.check_fields(_WHERE, self, _RANGES)
        if self.min_containers > self.max_containers:
            _checks.reject(
                _WHERE,
                "min_containers",
                self.min_containers,
                f"is more than max_containers={self.max_containers}: raise max_containers or lower min_containers",
            )

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: ``{"max_containers", "tasks_per_container", "min_containers"}``."""
        return {
            "max_containers": self.max_containers,
            "tasks_per_container": self.tasks_per_container,
            "min_containers": self.min_containers,
        }


def describe_fields() -> dict[str, dict[str, Any]]:
    """Each Autoscaler field's default and rule, as JSON-ready data (for ``svc._options.describe_options``).

    ``min_containers`` is further bounded by ``max_containers``.
    """
    return {
        field.name: {"default": field.default, **_checks.rule_of(_RANGES[field.name])} for field in fields(Autoscaler)
    }
