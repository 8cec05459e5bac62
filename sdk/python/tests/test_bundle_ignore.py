"""svc.bundle: .svcignore (gitignore syntax) and the default exclusions."""

from __future__ import annotations

from pathlib import Path

import pytest
from svc.bundle import IgnoreRules, collect


def project(root: Path, paths: list[str], svcignore: str | None = None) -> Path:
    for relative in paths:
        path = root / relative
        if relative.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative)
    if svcignore is not None:
        (root / ".svcignore").write_text(svcignore)
    return root


def bundled(root: Path) -> set[str]:
    """The files (not folders) the bundle would hold."""
    return {entry.path for entry in collect(root) if entry.kind != "dir"}


def test_the_defaults_leave_out_tooling_caches_and_environments(tmp_path):
    root = project(
        tmp_path,
        [
            "app.py",
            "pkg/mod.py",
            ".git/HEAD",
            ".git/objects/ab/cdef",
            "__pycache__/app.cpython-311.pyc",
            "pkg/__pycache__/mod.cpython-311.pyc",
            "stray.pyc",
            ".venv/bin/python",
            "venv/lib/site.py",
            "node_modules/left-pad/index.js",
            "web/node_modules/x.js",
            ".svc/bundle.tar.gz",
            ".mypy_cache/x",
            ".pytest_cache/v",
            ".DS_Store",
            "pkg/.DS_Store",
        ],
    )
    assert bundled(root) == {"app.py", "pkg/mod.py"}


def test_any_folder_with_pyvenv_cfg_is_a_virtual_environment(tmp_path):
    root = project(
        tmp_path, ["app.py", "env/pyvenv.cfg", "env/bin/python", "tools/myenv/pyvenv.cfg", "tools/myenv/lib/x.py"]
    )
    assert bundled(root) == {"app.py"}


def test_a_folder_named_env_without_pyvenv_cfg_is_kept(tmp_path):
    root = project(tmp_path, ["app.py", "env/settings.py"])
    assert bundled(root) == {"app.py", "env/settings.py"}


def test_a_git_file_of_a_worktree_or_submodule_is_left_out(tmp_path):
    root = project(tmp_path, ["app.py", "vendor/lib/.git", "vendor/lib/lib.py"])
    assert bundled(root) == {"app.py", "vendor/lib/lib.py"}


def test_svcignore_patterns_comments_and_blank_lines(tmp_path):
    root = project(
        tmp_path,
        ["app.py", "notes.md", "docs/guide.md", "data/raw.csv", "keep.log", "debug.log", "#hash"],
        svcignore=("# a comment\n\n*.md\ndata/\n*.log\n!keep.log\n\\#hash\n"),
    )
    assert bundled(root) == {"app.py", "keep.log", ".svcignore"}


def test_a_pattern_without_a_slash_matches_at_any_depth(tmp_path):
    root = project(tmp_path, ["app.py", "build/x.o", "src/build/y.o", "src/builder.py"], svcignore="build\n")
    assert bundled(root) == {"app.py", "src/builder.py", ".svcignore"}


def test_a_leading_or_middle_slash_anchors_the_pattern_at_the_root(tmp_path):
    root = project(
        tmp_path,
        ["app.py", "build/x.o", "src/build/y.o", "doc/a/frotz", "doc/frotz", "x/doc/frotz"],
        svcignore="/build\ndoc/frotz\n",
    )
    assert bundled(root) == {"app.py", "src/build/y.o", "doc/a/frotz", "x/doc/frotz", ".svcignore"}


def test_a_trailing_slash_matches_folders_only(tmp_path):
    root = project(tmp_path, ["app.py", "cache/x", "sub/cache"], svcignore="cache/\n")
    assert bundled(root) == {"app.py", "sub/cache", ".svcignore"}


def test_star_does_not_cross_folders_but_double_star_does(tmp_path):
    root = project(
        tmp_path,
        ["app.py", "a/x.txt", "a/b/y.txt", "c/d/e/z.txt", "c/z.txt", "logs/1/2/3.log", "logs/top.log"],
        svcignore="a/*.txt\nc/**/z.txt\nlogs/**\n",
    )
    assert bundled(root) == {"app.py", "a/b/y.txt", ".svcignore"}


def test_leading_double_star_matches_in_every_folder(tmp_path):
    root = project(
        tmp_path, ["app.py", "fixtures/big.json", "tests/fixtures/x.json", "fixtures.py"], svcignore="**/fixtures\n"
    )
    assert bundled(root) == {"app.py", "fixtures.py", ".svcignore"}


def test_question_mark_and_classes(tmp_path):
    root = project(
        tmp_path,
        ["app.py", "a1.tmp", "a2.tmp", "ab.tmp", "abc.tmp", "b9.dat", "bx.dat"],
        svcignore="a?.tmp\n!a[0-1].tmp\nb[!0-9].dat\n",
    )
    assert bundled(root) == {"app.py", "a1.tmp", "abc.tmp", "b9.dat", ".svcignore"}


def test_negation_re_includes_a_default(tmp_path):
    root = project(tmp_path, ["app.py", "node_modules/kept.js", "venv/kept.py"], svcignore="!node_modules/\n!venv/\n")
    assert bundled(root) == {"app.py", "node_modules/kept.js", "venv/kept.py", ".svcignore"}


def test_nothing_comes_back_from_inside_an_excluded_folder(tmp_path):
    root = project(tmp_path, ["app.py", "out/keep.txt", "out/drop.txt"], svcignore="out/\n!out/keep.txt\n")
    assert bundled(root) == {"app.py", ".svcignore"}


def test_the_contents_of_a_folder_can_be_excluded_but_one_file_kept(tmp_path):
    root = project(tmp_path, ["app.py", "out/keep.txt", "out/drop.txt"], svcignore="out/*\n!out/keep.txt\n")
    assert bundled(root) == {"app.py", "out/keep.txt", ".svcignore"}


def test_the_last_matching_pattern_wins(tmp_path):
    root = project(tmp_path, ["app.py", "x.cfg"], svcignore="!x.cfg\nx.cfg\n")
    assert bundled(root) == {"app.py", ".svcignore"}


def test_trailing_spaces_are_ignored_unless_escaped(tmp_path):
    rules = IgnoreRules(["name.txt   ", "space\\ "])
    assert rules.ignored("name.txt", False)
    assert rules.ignored("space ", False) and not rules.ignored("space", False)


def test_an_escaped_bang_is_literal(tmp_path):
    rules = IgnoreRules(["\\!important"])
    assert rules.ignored("!important", False) and not rules.ignored("important", False)


@pytest.mark.parametrize(
    "path,is_dir,expected",
    [
        ("a/b/c.py", False, True),
        ("a/c.py", False, True),
        ("c.py", False, False),
        ("a", True, False),
    ],
)
def test_middle_double_star_matches_zero_or_more_folders(path, is_dir, expected):
    assert IgnoreRules(["a/**/c.py"], defaults=()).ignored(path, is_dir) is expected


def test_an_empty_folder_left_after_exclusions_is_kept_but_an_excluded_one_is_not(tmp_path):
    root = project(tmp_path, ["app.py", "logs/a.log", "tmp/x"], svcignore="*.log\ntmp/\n")
    paths = {entry.path for entry in collect(root)}
    assert "logs" in paths and "tmp" not in paths
