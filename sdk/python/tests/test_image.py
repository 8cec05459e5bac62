"""svc.Image: immutable, chainable, validated."""

from __future__ import annotations

import pytest
import svc


def test_defaults_to_the_writers_python_and_no_packages():
    image = svc.Image()
    assert image.python_version is None
    assert image.python_packages == ()


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12", "3.13", "3.14"])
def test_accepts_major_minor_versions_from_3_10(version):
    assert svc.Image(python_version=version).python_version == version


@pytest.mark.parametrize(
    "version,fix",
    [
        (3.11, 'pass a string such as "3.11"'),
        (3, "is a int, not a string"),
        ("3.9", "svc runs on Python 3.10 or newer"),
        ("3.11.4", "not a major.minor Python version"),
        ("python3.11", "not a major.minor Python version"),
        ("2.7", "not a major.minor Python version"),
        ("", "not a major.minor Python version"),
    ],
)
def test_rejects_other_versions_with_a_fix(version, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Image(python_version=version)
    assert str(caught.value).startswith(f"svc.Image: python_version={version!r} ")
    assert fix in str(caught.value)


def test_add_python_packages_returns_a_new_image_and_leaves_the_old_one():
    base = svc.Image(python_version="3.11")
    extended = base.add_python_packages(["numpy>=1.26", "pillow"])
    assert extended is not base
    assert base.python_packages == ()
    assert extended.python_packages == ("numpy>=1.26", "pillow")
    assert extended.python_version == "3.11"


def test_add_python_packages_chains_keeps_order_and_drops_duplicates():
    image = svc.Image().add_python_packages(["b", "a"]).add_python_packages(["a", "c", "b", "d"])
    assert image.python_packages == ("b", "a", "c", "d")


def test_requirements_are_stripped():
    assert svc.Image().add_python_packages(["  numpy  "]).python_packages == ("numpy",)


def test_accepts_a_tuple_or_any_iterable():
    assert svc.Image().add_python_packages(("x", "y")).python_packages == ("x", "y")
    assert svc.Image().add_python_packages(p for p in ["z"]).python_packages == ("z",)


@pytest.mark.parametrize(
    "packages,fix",
    [
        ("numpy", "not a list: pass a list such as ['numpy>=1.26']"),
        (None, "not a list"),
        ([""], "is empty"),
        (["   "], "is empty"),
        (["numpy\nrequests"], "spans several lines"),
        (["a\rb"], "spans several lines"),
        ([3], "is a int, not a string"),
        (["--index-url=https://example.com"], "is a pip option"),
        (["-r other.txt"], "is a pip option"),
    ],
)
def test_rejects_bad_requirements(packages, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Image().add_python_packages(packages)
    assert str(caught.value).startswith("svc.Image.add_python_packages: packages=")
    assert fix in str(caught.value)


def test_is_immutable():
    image = svc.Image()
    with pytest.raises(AttributeError, match="immutable"):
        image.python_version = "3.12"
    with pytest.raises(AttributeError):
        image.other = 1


def test_equal_specs_are_equal_and_hash_alike():
    one = svc.Image(python_version="3.11").add_python_packages(["x"])
    two = svc.Image(python_version="3.11").add_python_packages(["x"])
    assert one == two and hash(one) == hash(two)
    assert one != svc.Image(python_version="3.11")
    assert one != svc.Image(python_version="3.12").add_python_packages(["x"])


def test_repr_shows_how_to_build_it():
    image = svc.Image(python_version="3.11").add_python_packages(["x"])
    assert repr(image) == "Image(python_version='3.11').add_python_packages(['x'])"
