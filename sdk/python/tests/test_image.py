"""svc.Image: immutable, chainable, validated."""

from __future__ import annotations

import os

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


@pytest.mark.parametrize(
    "requirement",
    [
        "numpy>=1.26,<2",
        "requests~=2.31",
        "pkg===1.0",
        "uvicorn[standard]>=0.30",
        "Django[argon2,bcrypt]",
        'tomli; python_version < "3.11"',
        "pywin32 >= 306 ; sys_platform == 'win32'",
        'uvloop; platform_system != "Windows" and python_version >= "3.10"',
        "pkg @ https://example.com/pkg-1.0-py3-none-any.whl",
        "pkg @ https://example.com/pkg-1.0.tar.gz#sha256=" + "0" * 64,
        "pkg[extra] @ git+https://github.com/example/pkg@v1.0",
        "pkg @ file:///opt/wheels/pkg-1.0-py3-none-any.whl",
    ],
)
def test_accepts_what_pip_accepts_as_one_requirement(requirement):
    assert svc.Image().add_python_packages([requirement]).python_packages == (requirement,)


@pytest.mark.parametrize(
    "requirement,fix",
    [
        ("-e .", "is a pip option"),
        ("--extra-index-url https://example.com", "is a pip option"),
        ("  -c constraints.txt", "is a pip option"),
        ('tomli; python_version < "3.11"\nnumpy', "spans several lines"),
    ],
)
def test_still_refuses_pip_options_and_several_lines(requirement, fix):
    with pytest.raises(svc.InvalidOptionError, match=fix):
        svc.Image().add_python_packages([requirement])


# --- pip_install_from_requirements ---


def test_requirements_file_is_read_relative_to_the_calling_module(tmp_path, write_module, monkeypatch):
    (tmp_path / "requirements.txt").write_text("numpy>=1.26\n# a comment\n--index-url https://example.com/simple\n")
    write_module(
        """
        import svc
        image = svc.Image(python_version="3.11").pip_install_from_requirements("requirements.txt")
        """,
        name="reqs_app",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.syspath_prepend(str(tmp_path))
    import reqs_app  # type: ignore[import-not-found]

    assert reqs_app.image.requirements_files == (
        ("requirements.txt", "numpy>=1.26\n# a comment\n--index-url https://example.com/simple\n"),
    )
    assert reqs_app.image.python_packages == ()


def test_requirements_file_keeps_the_text_exactly_but_a_byte_order_mark(tmp_path):
    (tmp_path / "r.txt").write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9==1\r\nb\r\n")
    image = svc.Image().pip_install_from_requirements(tmp_path / "r.txt")
    assert image.requirements_files == (("r.txt", "caf\u00e9==1\r\nb\r\n"),)


def test_requirements_files_keep_their_order_once_each(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "a.txt").write_text("b\n")
    image = (
        svc.Image()
        .pip_install_from_requirements(tmp_path / "a.txt")
        .pip_install_from_requirements(str(tmp_path / "b" / "a.txt"))
        .pip_install_from_requirements(tmp_path / "a.txt")
    )
    assert image.requirements_files == (("a.txt", "a\n"), ("a.txt", "b\n"))


def test_requirements_file_relative_to_the_current_directory_without_a_calling_file(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("six\n")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"svc": svc}
    exec('image = svc.Image().pip_install_from_requirements("requirements.txt")', namespace)  # no __file__: a REPL
    assert namespace["image"].requirements_files == (("requirements.txt", "six\n"),)  # type: ignore[attr-defined]


def _requirements_error(tmp_path, content: bytes | None, name: str = "requirements.txt") -> str:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Image().pip_install_from_requirements(path)
    message = str(caught.value)
    assert message.startswith("svc.Image.pip_install_from_requirements: path=")
    return message


def test_a_missing_requirements_file_names_the_path_and_where_relative_paths_start(tmp_path):
    message = _requirements_error(tmp_path, None)
    assert str(tmp_path / "requirements.txt") in message
    assert "does not exist" in message and "folder of the file that calls pip_install_from_requirements" in message


def test_a_folder_is_not_a_requirements_file(tmp_path):
    with pytest.raises(svc.InvalidOptionError, match="is a folder: pass the file in it"):
        svc.Image().pip_install_from_requirements(tmp_path)


def test_a_requirements_file_must_be_utf8(tmp_path):
    assert "is not UTF-8 text (byte 3): save it as UTF-8" in _requirements_error(tmp_path, b"caf\xe9\n")


def test_a_requirements_file_over_256_kib_is_refused(tmp_path):
    message = _requirements_error(tmp_path, b"#" * (256 * 1024 + 1))
    assert "is 262145 bytes; at most 262144 (256 KiB)" in message


def test_an_unreadable_requirements_file_says_so(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("six\n")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as root: every file is readable")
        with pytest.raises(svc.InvalidOptionError, match="cannot be read .*check its permissions"):
            svc.Image().pip_install_from_requirements(path)
    finally:
        path.chmod(0o600)


@pytest.mark.parametrize(
    "line,fix",
    [
        ("-r base.txt", "call pip_install_from_requirements on that file too"),
        ("  --requirement=base.txt", "call pip_install_from_requirements on that file too"),
        ("-rbase.txt", "call pip_install_from_requirements on that file too"),
        ("-c constraints.txt", "pin those versions in this file instead"),
        ("--constraint constraints.txt", "pin those versions in this file instead"),
    ],
)
def test_a_line_naming_another_file_is_refused_with_its_number(tmp_path, line, fix):
    message = _requirements_error(tmp_path, f"six\n# -r commented.txt\n{line}\n".encode())
    assert f"line 3 {line.strip()!r} names another file" in message
    assert fix in message


def test_other_pip_options_in_a_requirements_file_are_pips_business(tmp_path):
    text = "--index-url https://example.com/simple\n--hash=sha256:00\n-e git+https://example.com/x#egg=x\n--requirements-ok\n"
    (tmp_path / "r.txt").write_text(text)
    assert svc.Image().pip_install_from_requirements(tmp_path / "r.txt").requirements_files == (("r.txt", text),)


def test_the_path_must_be_a_path(tmp_path):
    with pytest.raises(svc.InvalidOptionError, match="is a int, not a path"):
        svc.Image().pip_install_from_requirements(3)  # type: ignore[arg-type]
    with pytest.raises(svc.InvalidOptionError, match="is empty"):
        svc.Image().pip_install_from_requirements("")


# --- pip_install_from_pyproject ---

PYPROJECT = """
[project]
name = "demo"
version = "1.0"
dependencies = ["numpy>=1.26", 'tomli; python_version < "3.11"']

[project.optional-dependencies]
server = ["uvicorn[standard]", "numpy>=1.26"]
test = ["pytest"]
"""


def test_pyproject_dependencies_become_packages(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    image = svc.Image().add_python_packages(["six"]).pip_install_from_pyproject(tmp_path / "pyproject.toml")
    assert image.python_packages == ("six", "numpy>=1.26", 'tomli; python_version < "3.11"')
    assert image == svc.Image().add_python_packages(["six", "numpy>=1.26", 'tomli; python_version < "3.11"'])


def test_pyproject_optional_groups_are_added_in_the_order_named(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    image = svc.Image().pip_install_from_pyproject(
        tmp_path / "pyproject.toml", optional_dependencies=["test", "server"]
    )
    assert image.python_packages == ("numpy>=1.26", 'tomli; python_version < "3.11"', "pytest", "uvicorn[standard]")


def test_pyproject_is_read_relative_to_the_calling_module(tmp_path, write_module, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    write_module(
        """
        import svc
        image = svc.Image().pip_install_from_pyproject("pyproject.toml")
        """,
        name="pyproject_app",
    )
    monkeypatch.chdir("/")
    monkeypatch.syspath_prepend(str(tmp_path))
    import pyproject_app  # type: ignore[import-not-found]

    assert pyproject_app.image.python_packages == ("numpy>=1.26", 'tomli; python_version < "3.11"')


@pytest.mark.parametrize(
    "text,groups,fix",
    [
        (None, [], "does not exist"),
        ("[project\nname = 1", [], "is not valid TOML (Expected ']'"),
        ("[tool.demo]\nx = 1\n", [], "has no [project] table"),
        ('[project]\nname = "d"\ndynamic = ["dependencies"]\n', [], "declares its dependencies dynamic"),
        ('[project]\ndependencies = "numpy"\n', [], "[project].dependencies that is a str, not a list"),
        (
            PYPROJECT,
            ["gpu"],
            "optional_dependencies='gpu' is not a group of [project.optional-dependencies]; known: server, test",
        ),
        ('[project]\ndependencies = ["-e ."]\n', [], "dependencies='-e .' is a pip option"),
        ("[project]\ndependencies = [3]\n", [], "dependencies=3 is a int, not a string"),
    ],
)
def test_pyproject_errors_say_what_to_fix(tmp_path, text, groups, fix):
    if text is not None:
        (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Image().pip_install_from_pyproject(tmp_path / "pyproject.toml", optional_dependencies=groups)
    assert str(caught.value).startswith("svc.Image.pip_install_from_pyproject: ")
    assert fix in str(caught.value)


def test_pyproject_groups_must_be_a_list():
    with pytest.raises(svc.InvalidOptionError, match="not a list: pass a list such as"):
        svc.Image().pip_install_from_pyproject("pyproject.toml", optional_dependencies="server")  # type: ignore[arg-type]


def test_pyproject_without_dependencies_adds_nothing(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\n')
    assert svc.Image().pip_install_from_pyproject(tmp_path / "pyproject.toml") == svc.Image()


# --- env ---


def test_env_merges_later_wins_and_reads_back_sorted():
    image = svc.Image().env({"B": "1", "A": "x"}).env({"B": "2", "_C9": ""})
    assert image.environment == {"A": "x", "B": "2", "_C9": ""}
    assert list(image.environment) == ["A", "B", "_C9"]
    assert svc.Image().env({"A": "1", "B": "2"}) == svc.Image().env({"B": "2"}).env({"A": "1"})


@pytest.mark.parametrize(
    "variables,fix",
    [
        ([("A", "1")], "not a dict"),
        ({"1A": "x"}, "'1A' is not an environment variable name"),
        ({"A-B": "x"}, "is not an environment variable name"),
        ({3: "x"}, "3 is not an environment variable name"),
        ({"SVC_APP": "x"}, "is a variable svc sets in every container itself"),
        ({"PYTHONPATH": "/x"}, "is a variable svc sets in every container itself"),
        ({"PATH": "/x"}, "choose another name"),
        ({"A": 1}, "variables['A']=1 is a int, not a string"),
        ({"A": None}, "is a NoneType, not a string"),
        ({"A": "a\0b"}, "the value of A holds a NUL character"),
        ({"A": "x" * (32 * 1024 + 1)}, "is over 32768 bytes"),
    ],
)
def test_env_refuses_bad_variables(variables, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Image().env(variables)
    assert str(caught.value).startswith("svc.Image.env: ")
    assert fix in str(caught.value)
    assert "xxxxxxxx" not in str(caught.value), "a long value is not repeated"


# --- identity of images with the new fields ---


def test_new_fields_take_part_in_equality_hash_and_repr(tmp_path):
    (tmp_path / "requirements.txt").write_text("six\n")
    base = svc.Image(python_version="3.11")
    full = base.add_python_packages(["x"]).pip_install_from_requirements(tmp_path / "requirements.txt").env({"A": "1"})
    again = base.env({"A": "1"}).pip_install_from_requirements(tmp_path / "requirements.txt").add_python_packages(["x"])
    assert full == again and hash(full) == hash(again)
    assert full != base.add_python_packages(["x"]).env({"A": "1"})
    assert full != base.add_python_packages(["x"]).pip_install_from_requirements(tmp_path / "requirements.txt")
    (tmp_path / "requirements.txt").write_text("six==1.16\n")
    assert full != base.add_python_packages(["x"]).pip_install_from_requirements(tmp_path / "requirements.txt").env(
        {"A": "1"}
    )
    assert repr(full) == (
        "Image(python_version='3.11').add_python_packages(['x'])"
        ".pip_install_from_requirements('requirements.txt').env({'A': '1'})"
    )


def test_every_method_leaves_the_image_it_was_called_on(tmp_path):
    (tmp_path / "r.txt").write_text("six\n")
    base = svc.Image().add_python_packages(["x"])
    base.env({"A": "1"})
    base.pip_install_from_requirements(tmp_path / "r.txt")
    assert base == svc.Image().add_python_packages(["x"])
    assert base.requirements_files == () and base.environment == {}
    with pytest.raises(AttributeError, match="immutable"):
        base._env = ()  # type: ignore[misc]


def test_an_image_installs_at_most_32_requirements_files_and_sets_at_most_100_variables(tmp_path):
    image = svc.Image()
    for index in range(32):
        (tmp_path / f"r{index}.txt").write_text(f"p{index}\n")
        image = image.pip_install_from_requirements(tmp_path / f"r{index}.txt")
    (tmp_path / "more.txt").write_text("more\n")
    with pytest.raises(svc.InvalidOptionError, match="would be file 33; an image installs at most 32"):
        image.pip_install_from_requirements(tmp_path / "more.txt")
    many = svc.Image().env({f"V{index}": "" for index in range(100)})
    with pytest.raises(svc.InvalidOptionError, match="would set 101 variables; an image sets at most 100"):
        many.env({"ONE_MORE": ""})
