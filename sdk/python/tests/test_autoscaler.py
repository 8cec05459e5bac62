"""svc.Autoscaler: three bounded integers."""

from __future__ import annotations

import dataclasses

import pytest
import svc


def test_defaults():
    scaler = svc.Autoscaler()
    assert (scaler.max_containers, scaler.tasks_per_container, scaler.min_containers) == (1, 1, 0)
    assert scaler.to_dict() == {"max_containers": 1, "tasks_per_container": 1, "min_containers": 0}


def test_keeps_good_values_and_manifest_key_order():
    scaler = svc.Autoscaler(max_containers=1000, tasks_per_container=10000, min_containers=1000)
    assert list(scaler.to_dict().items()) == [
        ("max_containers", 1000),
        ("tasks_per_container", 10000),
        ("min_containers", 1000),
    ]


@pytest.mark.parametrize(
    "field,value,fix",
    [
        ("max_containers", 0, "from 1 to 1000"),
        ("max_containers", 1001, "from 1 to 1000"),
        ("max_containers", 2.0, "is a float, not an integer"),
        ("max_containers", True, "is a bool, not an integer"),
        ("tasks_per_container", 0, "from 1 to 10000"),
        ("tasks_per_container", 10001, "from 1 to 10000"),
        ("tasks_per_container", "8", "is a str, not an integer"),
        ("min_containers", -1, "from 0 to 1000"),
        ("min_containers", None, "is a NoneType, not an integer"),
    ],
)
def test_rejects_bad_values(field, value, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Autoscaler(**{field: value})
    assert str(caught.value).startswith(f"svc.Autoscaler: {field}={value!r} ")
    assert fix in str(caught.value)
    assert caught.value.option == field


def test_min_containers_may_not_exceed_max_containers():
    with pytest.raises(svc.InvalidOptionError, match="min_containers=3 is more than max_containers=2"):
        svc.Autoscaler(max_containers=2, min_containers=3)
    assert svc.Autoscaler(max_containers=3, min_containers=3).min_containers == 3


def test_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        svc.Autoscaler().max_containers = 5
