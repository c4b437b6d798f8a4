"""Changed paths since a ref, in real repositories, and the projects that own them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from conftest import git, write_tree
from vx.errors import UserError
from vx.selection.changes import BaseRef, changed_projects, changes_since, check_ref
from vx.workspace.model import Manager, Project, Workspace

if TYPE_CHECKING:
    from pathlib import Path

ENV = dict(os.environ)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("main", BaseRef("main")),
        (" main ", BaseRef("main")),
        ("origin/main...HEAD", BaseRef("origin/main")),
        ("main..HEAD", BaseRef("main", merge=False)),
        ("main^{tree}", BaseRef("main^{tree}")),
        ("HEAD~2", BaseRef("HEAD~2")),
    ],
)
def test_check_ref_passes(text: str, expected: BaseRef) -> None:
    assert check_ref(text, what="x") == expected


@pytest.mark.parametrize(
    "text", ["", "  ", "-p", "--output=/tmp/x", "a..b", "a...b", "^main", "main:src"]
)
def test_check_ref_refuses(text: str) -> None:
    with pytest.raises(UserError):
        check_ref(text, what="x")


def test_changes_since_a_ref(workspace) -> None:
    root = workspace({"a/x.txt": "1\n", "b/y.txt": "1\n", "c/z.txt": "1\n"})
    write_tree(root, {"a/x.txt": "2\n"})
    git(root, "commit", "-q", "-am", "two")
    git(root, "mv", "c/z.txt", "c/w.txt")
    write_tree(root, {"b/y.txt": "edited\n", "d/new.txt": "untracked\n"})
    assert changes_since(root, BaseRef("HEAD"), env=ENV).paths == {
        "b/y.txt",
        "c/z.txt",
        "c/w.txt",
        "d/new.txt",
    }
    assert "a/x.txt" in changes_since(root, BaseRef("HEAD~1"), env=ENV).paths


def test_changes_from_the_merge_base(workspace) -> None:
    root = workspace({"a.txt": "1\n", "b.txt": "1\n"})
    git(root, "checkout", "-q", "-b", "topic")
    write_tree(root, {"a.txt": "topic\n"})
    git(root, "commit", "-q", "-am", "topic")
    git(root, "checkout", "-q", "main")
    write_tree(root, {"b.txt": "main\n"})
    git(root, "commit", "-q", "-am", "main")
    git(root, "checkout", "-q", "topic")
    assert changes_since(root, BaseRef("main"), env=ENV).paths == {"a.txt"}
    assert changes_since(root, BaseRef("main", merge=False), env=ENV).paths == {"a.txt", "b.txt"}


def test_an_unknown_ref_is_one_line(workspace) -> None:
    root = workspace({"a.txt": "1\n"})
    with pytest.raises(UserError, match=r'^git ref "nope" did not resolve$'):
        changes_since(root, BaseRef("nope"), env=ENV)


def test_a_workspace_below_the_top_level(workspace) -> None:
    top = workspace({"ws/a/x.txt": "1\n", "other.txt": "1\n"})
    write_tree(top, {"ws/a/x.txt": "2\n", "other.txt": "2\n"})
    assert changes_since(top / "ws", BaseRef("HEAD"), env=ENV).paths == {"a/x.txt"}


def test_paths_map_to_the_deepest_project_and_links(tmp_path: Path) -> None:
    (tmp_path / "vendor/kit").mkdir(parents=True)
    (tmp_path / "packages").mkdir()
    (tmp_path / "packages/kit").symlink_to("../vendor/kit")

    def project(name: str, rel: str) -> Project:
        return Project(name=name, dir=tmp_path / rel, rel_dir=rel, is_root=rel == ".")

    projects = (
        project("//", "."),
        project("lib", "packages/lib"),
        project("sub", "packages/lib/sub"),
        project("kit", "packages/kit"),
    )
    ws = Workspace(tmp_path, Manager.NPM, projects)
    assert changed_projects(ws, ["packages/lib/sub/a.ts"]) == {"sub"}
    assert changed_projects(ws, ["packages/lib/a.ts"]) == {"lib"}
    assert changed_projects(ws, ["vendor/kit/a.ts", "packages/kit/b.ts"]) == {"kit"}
    assert changed_projects(ws, ["README.md"]) == {"//"}
    assert changed_projects(Workspace(tmp_path, Manager.NPM, projects[1:]), ["README.md"]) == set()


def test_an_unknown_ref_in_a_shallow_clone_says_how_to_deepen(workspace, tmp_path: Path) -> None:
    origin = workspace({"a.txt": "1\n"})
    write_tree(origin, {"a.txt": "2\n"})
    git(origin, "commit", "-q", "-am", "two")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    with pytest.raises(UserError) as caught:
        changes_since(clone, BaseRef("HEAD~1"), env=ENV)
    assert str(caught.value) == (
        'git ref "HEAD~1" did not resolve — this clone is shallow, so older history and other'
        " branches may be missing: git fetch --unshallow (in CI: fetch-depth: 0)"
    )
