"""`--affected` in a uv workspace whose root is a named member: a member's edge to the root
is an edge like any other, so a manifest edit elsewhere does not take the root's dependents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conftest import make_git_workspace, write_tree

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from conftest import VxResult

BUILD = {"tasks": {"build": {"exec": "echo built", "dependsOn": ["^build"], "cache": {}}}}


def pyproject(name: str, *deps: str) -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    return f'[project]\nname = "{name}"\nversion = "1.0.0"\ndependencies = [{listed}]\n'


def kept(result: VxResult) -> dict[str, str]:
    doc = result.json()
    return {t["id"]: t["affected"]["change"] for t in doc["tasks"] if "affected" in t}


def test_a_manifest_edit_elsewhere_leaves_the_roots_dependents_alone(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = make_git_workspace(
        tmp_path / "ws",
        {
            "pyproject.toml": pyproject("core") + '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "vx.config.json": BUILD,
            "packages/app/pyproject.toml": pyproject("app", "core"),
            "packages/app/vx.config.json": BUILD,
            "packages/solo/pyproject.toml": pyproject("solo"),
            "packages/solo/vx.config.json": BUILD,
        },
    )
    write_tree(root, {"packages/solo/pyproject.toml": pyproject("solo", "httpx")})
    run = vx(["run", "build", "--all", "--affected=HEAD", "--dry=json"], root).assert_ok()
    assert kept(run) == {"solo#build": "packages/solo/pyproject.toml changed (in its project)"}


def test_dropping_the_edge_to_the_root_selects_the_member(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = make_git_workspace(
        tmp_path / "ws",
        {
            "pyproject.toml": pyproject("core") + '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "vx.config.json": BUILD,
            "packages/app/pyproject.toml": pyproject("app", "core"),
            "packages/app/vx.config.json": BUILD,
        },
    )
    write_tree(root, {"packages/app/pyproject.toml": pyproject("app")})
    run = vx(["run", "build", "--all", "--affected=HEAD", "--dry=json"], root).assert_ok()
    assert kept(run)["app#build"] == "an edge to . was dropped"


def test_a_changed_member_list_selects_everything(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    members = '[tool.uv.workspace]\nmembers = ["packages/*"]\n'
    root = make_git_workspace(
        tmp_path / "ws",
        {
            "pyproject.toml": pyproject("core") + members,
            "vx.config.json": BUILD,
            "packages/app/pyproject.toml": pyproject("app", "core"),
            "packages/app/vx.config.json": BUILD,
        },
    )
    edited = pyproject("core") + members.replace('"]', '", "tools/*"]')
    write_tree(root, {"pyproject.toml": edited})
    run = vx(["run", "build", "--all", "--affected=HEAD", "--dry=json"], root).assert_ok()
    assert set(kept(run)) == {"core#build", "app#build"}
    assert kept(run)["app#build"] == "pyproject.toml changed (the workspace's members)"
