"""Lockfiles keyed per project, with the real package managers writing real lockfiles.

Each workspace has three members: `@acme/ui` (depends on `ms`), `app` (links `@acme/ui`) and
`lone` (its own pinned `ms`). Bumping `ms` in `ui` must re-key `ui` and `app` (which installs
`ms` through `ui`) and not `lone`; `vx why` must name the bump and `--affected` pick the same two.
No task depends on another, so a re-key can only come from the lockfile (and ui's manifest).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, make_git_workspace, run_vx
from tests.e2e.pm_tools import get_manager, run_pm

if TYPE_CHECKING:
    from pathlib import Path

    from tests.e2e.pm_tools import Manager

BUILD = {
    "tasks": {
        "build": {
            "exec": "mkdir -p dist && echo built > dist/out.txt",
            "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
        }
    }
}

# manager → (lockfile, how a member names another, install argv)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "npm": ("package-lock.json", "1.0.0", ["install"]),
    "pnpm8": ("pnpm-lock.yaml", "workspace:*", ["install"]),
    "pnpm9": ("pnpm-lock.yaml", "workspace:*", ["install"]),
    "yarn1": ("yarn.lock", "1.0.0", ["install", "--no-progress"]),
    "yarn4": ("yarn.lock", "workspace:*", ["install"]),
    "bun": ("bun.lock", "workspace:*", ["install"]),
}


def _tree(name: str, link: str, ms: str) -> dict[str, Any]:
    pnpm = name.startswith("pnpm")
    root: dict[str, Any] = {"name": "root", "private": True}
    if not pnpm:
        root["workspaces"] = ["packages/*"]
    files: dict[str, Any] = {
        "package.json": root,
        ".gitignore": "node_modules/\ndist/\n.yarn/\n.pnp.*\n",
        "packages/ui/package.json": {
            "name": "@acme/ui",
            "version": "1.0.0",
            "dependencies": {"ms": ms},
        },
        "packages/app/package.json": {
            "name": "app",
            "version": "1.0.0",
            "dependencies": {"@acme/ui": link},
        },
        "packages/lone/package.json": {
            "name": "lone",
            "version": "1.0.0",
            "dependencies": {"ms": "2.1.2"},
        },
    }
    for member in ("ui", "app", "lone"):
        files[f"packages/{member}/vx.config.json"] = BUILD
        files[f"packages/{member}/src/index.txt"] = member
    if pnpm:
        files["pnpm-workspace.yaml"] = "packages:\n  - 'packages/*'\n"
    if name == "yarn4":
        files["yarn.lock"] = ""
        files[".yarnrc.yml"] = "nodeLinker: node-modules\nenableTelemetry: false\n"
    return files


def _statuses(result_out: str) -> dict[str, str]:
    doc = json.loads(result_out)
    return {t["id"]: t["status"] for t in doc["tasks"]}


def _install(manager: Manager, lockfile: str, args: list[str], root: Path) -> None:
    run_pm(manager, args, root)
    assert (root / lockfile).is_file(), f"{manager.name} wrote no {lockfile}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bump_re_keys_only_the_package_and_its_dependents(
    name: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    manager = get_manager(tmp_path_factory, name)
    lockfile, link, install = CASES[name]
    root = make_git_workspace(tmp_path / "ws", _tree(name, link, "2.1.2"), commit=False)
    _install(manager, lockfile, install, root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()

    def vx(*args: str) -> Any:
        return run_vx(list(args), root, home=home)

    first = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert set(_statuses(first.out).values()) == {"success"}, first
    assert "keys on the whole" not in first.err, first
    again = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert set(_statuses(again.out).values()) == {"cache-hit"}, again

    ui = root / "packages/ui/package.json"
    ui.write_text(
        json.dumps({"name": "@acme/ui", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}})
    )
    _install(manager, lockfile, install, root)
    assert git(root, "status", "--porcelain", "--", lockfile).strip(), "the lockfile did not move"

    affected = vx("run", "build", "--affected=main", "--dry=json").assert_ok()
    picked = {t["id"] for t in json.loads(affected.out)["tasks"]}
    assert picked == {"@acme/ui#build", "app#build"}, affected

    bumped = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert _statuses(bumped.out) == {
        "@acme/ui#build": "success",
        "app#build": "success",
        "lone#build": "cache-hit",
    }, bumped
    why = vx("why", "app#build").assert_ok()
    assert f"changed lockfile  {lockfile}" in why.out, why
    assert "lockfile: ms 2.1.2 → 2.1.3 (via @acme/ui)" in why.out, why.out


def test_an_unreadable_lockfile_keys_every_task_on_the_whole_file(workspace: Any, vx: Any) -> None:
    root = workspace(
        {
            "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
            "package-lock.json": {"name": "root", "lockfileVersion": 1, "dependencies": {}},
            "packages/a/package.json": {"name": "a", "version": "1.0.0"},
            "packages/a/vx.config.json": BUILD,
            "packages/a/src/index.txt": "a",
        }
    )
    first = vx(["run", "build", "--all"], root).assert_ok()
    assert first.err.count("package-lock.json: no `packages` map") == 1, first
    assert "keys on the whole package-lock.json" in first.err, first
    (root / "package-lock.json").write_text('{"lockfileVersion": 1, "requires": true}\n')
    moved = vx(["run", "build", "--all", "--format", "json"], root).assert_ok()
    assert _statuses(moved.out) == {"a#build": "success"}, moved
