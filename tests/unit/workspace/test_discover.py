"""Finding the root, telling package managers apart, and listing member directories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vx.errors import ConfigError, ErrorCode, UserError
from vx.workspace.discover import find_root, list_members
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Make = Callable[..., Path]


def pkg(name: str) -> dict[str, str]:
    return {"name": name, "version": "1.0.0"}


@pytest.mark.parametrize(
    ("extra", "manager"),
    [
        ({}, Manager.NPM),
        ({"yarn.lock": ""}, Manager.YARN),
        ({"bun.lock": ""}, Manager.BUN),
        ({"bun.lockb": ""}, Manager.BUN),
        ({"package-lock.json": {}}, Manager.NPM),
    ],
)
def test_js_manager_from_lockfile(workspace: Make, extra: dict[str, Any], manager: Manager) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            **extra,
        }
    )
    found = find_root(root)
    assert (found.root, found.manager, list(found.members)) == (root, manager, ["packages/a"])
    assert found.notes == ()


def test_yarn_object_form(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": {"packages": ["apps/*", "libs/*"], "nohoist": ["**/x"]}},
            "yarn.lock": "",
            "apps/web/package.json": pkg("web"),
            "libs/ui/package.json": pkg("ui"),
        }
    )
    found = find_root(root)
    assert found.manager is Manager.YARN
    assert list(found.members) == ["apps/web", "libs/ui"]


def test_pnpm_reads_its_yaml_and_notes_other_globs(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*", "./tools/*"]},
            "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - apps/*\n",
            "packages/a/package.json": pkg("a"),
            "apps/web/package.json": pkg("web"),
            "tools/t/package.json": pkg("t"),
        }
    )
    found = find_root(root)
    assert found.manager is Manager.PNPM
    assert list(found.members) == ["apps/web", "packages/a"]
    assert found.notes == (
        (
            'package.json "workspaces" lists ./tools/*, which pnpm-workspace.yaml does not; '
            "pnpm reads only pnpm-workspace.yaml, so vx does too"
        ),
    )


def test_pnpm_same_globs_needs_no_note(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["./packages/*"]},
            "pnpm-workspace.yaml": "packages: ['packages/*']\n",
            "packages/a/package.json": pkg("a"),
        }
    )
    assert find_root(root).notes == ()


def test_pnpm_yaml_without_packages_is_no_workspace(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": pkg("solo"),
            "pnpm-workspace.yaml": "onlyBuiltDependencies:\n  - esbuild\n",
        }
    )
    found = find_root(root)
    assert (found.root, found.manager, found.members) == (root, Manager.SINGLE, ())


def test_uv_members_and_exclude(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[project]\nname = "root"\n[tool.uv.workspace]\n'
            'members = ["packages/*"]\nexclude = ["packages/seeds"]\n',
            "packages/api/pyproject.toml": '[project]\nname = "api"\n',
            "packages/seeds/pyproject.toml": '[project]\nname = "seeds"\n',
            "packages/empty": None,
        }
    )
    found = find_root(root / "packages" / "api")
    assert (found.root, found.manager) == (root, Manager.UV)
    assert list(found.members) == ["packages/api"]


@pytest.mark.parametrize(
    "files",
    [
        {"package.json": pkg("solo")},
        {"pyproject.toml": '[project]\nname = "solo"\n'},
        {"vx.workspace.json": {}},
        {"vx.config.toml": ""},
    ],
)
def test_single_package_roots(workspace: Make, files: dict[str, Any]) -> None:
    root = workspace({**files, "src/deep/x.txt": ""})
    found = find_root(root / "src" / "deep")
    assert (found.root, found.manager, found.members) == (root, Manager.SINGLE, ())


def test_walk_passes_a_members_own_manifest(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "packages/a/src/x/file.ts": "",
        }
    )
    assert find_root(root / "packages" / "a").root == root
    assert find_root(root / "packages" / "a" / "src" / "x").root == root
    assert find_root(root / "packages" / ".." / "packages" / "a").root == root


def test_unlisted_package_below_a_workspace_is_its_own_root(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "tools/standalone/package.json": pkg("standalone"),
            "docs/readme.md": "",
        }
    )
    found = find_root(root / "tools" / "standalone")
    assert (found.root, found.manager) == (root / "tools" / "standalone", Manager.SINGLE)
    assert find_root(root / "docs").root == root


def test_nested_workspace_listing_the_package_wins(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "vendor/inner/package.json": {"workspaces": ["libs/*"]},
            "vendor/inner/libs/x/package.json": pkg("x"),
        }
    )
    inner = root / "vendor" / "inner"
    found = find_root(inner / "libs" / "x")
    assert (found.root, list(found.members)) == (inner, ["libs/x"])


def test_globstar_negation_and_skipped_dirs(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {
                "workspaces": ["!packages/internal/**", "packages/**", "apps/{web,docs}"]
            },
            "packages/a/package.json": pkg("a"),
            "packages/group/b/package.json": pkg("b"),
            "packages/group/b/node_modules/dep/package.json": pkg("dep"),
            "packages/node_modules/c/package.json": pkg("c"),
            "packages/.cache/d/package.json": pkg("d"),
            "packages/internal/e/package.json": pkg("e"),
            "packages/no-manifest/readme.md": "",
            "apps/web/package.json": pkg("web"),
            "apps/docs/package.json": pkg("docs"),
            "apps/other/package.json": pkg("other"),
        }
    )
    assert list(find_root(root).members) == [
        "apps/docs",
        "apps/web",
        "packages/a",
        "packages/group/b",
    ]


def test_root_is_never_its_own_member(workspace: Make) -> None:
    root = workspace({"package.json": {"workspaces": [".", "*"]}, "a/package.json": pkg("a")})
    assert list(find_root(root).members) == ["a"]


def test_symlinked_member_keeps_the_link_path(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "ext/b/package.json": pkg("b"),
        }
    )
    (root / "packages" / "b").symlink_to("../ext/b")
    found = find_root(root)
    assert list(found.members) == ["packages/a", "packages/b"]
    assert find_root(root / "ext" / "b").root == root


def test_link_and_target_both_matched_are_listed_once(workspace: Make) -> None:
    root = workspace(
        {"package.json": {"workspaces": ["packages/*", "ext/*"]}, "ext/b/package.json": pkg("b")}
    )
    (root / "packages").mkdir()
    (root / "packages" / "b").symlink_to("../ext/b")
    assert list(find_root(root).members) == ["packages/b"]


def test_globstar_does_not_enter_linked_dirs(workspace: Make) -> None:
    root = workspace(
        {"package.json": {"workspaces": ["packages/**"]}, "packages/a/package.json": pkg("a")}
    )
    (root / "packages" / "a" / "loop").symlink_to("..")
    assert list(find_root(root).members) == ["packages/a"]


def test_list_members_directly(workspace: Make) -> None:
    root = workspace(
        {
            "libs/x/pyproject.toml": "",
            "libs/y/package.json": pkg("y"),
            "libs/z/pyproject.toml": "",
        }
    )
    members = list_members(root, ("libs/*", "!libs/z"), "pyproject.toml")
    assert list(members) == ["libs/x"]


def test_no_workspace(tmp_path: Path) -> None:
    empty = tmp_path / "nothing" / "here"
    empty.mkdir(parents=True)
    with pytest.raises(UserError) as caught:
        find_root(empty)
    assert caught.value.code is ErrorCode.NO_WORKSPACE
    assert caught.value.message == (
        f"no workspace found at or above {empty} — run vx inside a repository with a "
        "package.json, pnpm-workspace.yaml or pyproject.toml"
    )


def test_broken_root_manifest_is_named(workspace: Make) -> None:
    root = workspace({"package.json": '{"workspaces": ['})
    with pytest.raises(ConfigError) as caught:
        find_root(root)
    assert caught.value.path == str(root / "package.json")
