"""Lockfiles keyed per project, with the real package managers writing real lockfiles.

Each workspace has three members: `@acme/ui` (depends on `ms`), `app` (links `@acme/ui`) and
`lone` (its own pinned `ms`). Bumping `ms` in `ui` must re-key `ui` and `app` (which installs
`ms` through `ui`) and not `lone`; `vx why` must name the bump and `--affected` pick the same two.
No task depends on another, so a re-key can only come from the lockfile (and ui's manifest).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, make_git_workspace, run_vx
from tests.e2e.pm_tools import get_manager, run_pm
from tests.e2e.test_history import schema

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
    "pnpm8": ("pnpm-lock.yaml", "workspace:*", ["install", "--no-frozen-lockfile"]),
    "pnpm9": ("pnpm-lock.yaml", "workspace:*", ["install", "--no-frozen-lockfile"]),
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
    timed = {"VX_TIMING": "1"}
    run_vx(["run", "build", "--all"], root, home=home, env=timed).assert_ok()
    warm = run_vx(["run", "build", "--all"], root, home=home, env=timed).assert_ok()
    assert "warm replay" in warm.err, warm

    ui = root / "packages/ui/package.json"
    ui.write_text(
        json.dumps({"name": "@acme/ui", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}})
    )
    _install(manager, lockfile, install, root)
    assert git(root, "status", "--porcelain", "--", lockfile).strip(), "the lockfile did not move"

    affected = vx("run", "build", "--affected=main", "--dry=json").assert_ok()
    tasks = {t["id"]: t for t in json.loads(affected.out)["tasks"]}
    assert set(tasks) == {"@acme/ui#build", "app#build"}, affected
    change = tasks["app#build"]["affected"]["change"]
    assert change == f"{lockfile} changed (ms 2.1.2 → 2.1.3 (via @acme/ui))", change

    bumped = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert _statuses(bumped.out) == {
        "@acme/ui#build": "success",
        "app#build": "success",
        "lone#build": "cache-hit",
    }, bumped
    why = vx("why", "app#build").assert_ok()
    assert f"changed lockfile  {lockfile}" in why.out, why
    assert "lockfile: ms 2.1.2 → 2.1.3 (via @acme/ui)" in why.out, why.out
    doc = vx("why", "app#build", "--format", "json").assert_ok().json()
    schema("why.json").validate(doc)
    assert doc["diff"]["changed"][0]["detail"] == ["ms 2.1.2 → 2.1.3 (via @acme/ui)"], doc
    # the warm snapshot taken before the bump must not answer for the new lockfile
    replay = run_vx(["run", "build", "--all"], root, home=home, env=timed).assert_ok()
    assert "warm replay" not in replay.err, replay


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


def _uv_tree(six: str) -> dict[str, Any]:
    backend = (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    build = {
        "tasks": {
            "build": {
                "dependsOn": ["^build"],
                "exec": "mkdir -p dist && echo built > dist/out.txt",
                "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
            }
        }
    }
    files: dict[str, Any] = {
        "pyproject.toml": (
            '[project]\nname = "root"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n'
            '\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
        ),
        ".gitignore": "dist/\n.venv/\n*.egg-info/\n",
        "packages/a/pyproject.toml": (
            f'[project]\nname = "a"\nversion = "0.1.0"\ndependencies = ["six=={six}"]\n\n{backend}'
        ),
        # b's dependencies are dynamic: only uv.lock says that b needs a
        "packages/b/pyproject.toml": (
            '[project]\nname = "b"\nversion = "0.1.0"\ndynamic = ["dependencies"]\n\n'
            '[tool.setuptools.dynamic]\ndependencies = {file = ["requirements.txt"]}\n\n'
            "[tool.uv.sources]\na = { workspace = true }\n\n"
            f"{backend}"
        ),
        "packages/b/requirements.txt": "a\n",
        "packages/c/pyproject.toml": (
            '[project]\nname = "c"\nversion = "0.1.0"\ndependencies = ["iniconfig==2.0.0"]\n\n'
            f"{backend}"
        ),
    }
    for member in ("a", "b", "c"):
        files[f"packages/{member}/vx.config.json"] = build
        files[f"packages/{member}/src/{member}/__init__.py"] = ""
    return files


def test_uv_lock_edges_and_closures(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (pip install uv): the uv.lock test needs it")
    root = make_git_workspace(tmp_path / "ws", _uv_tree("1.16.0"), commit=False)

    def lock() -> None:
        proc = subprocess.run(
            [uv, "lock", "--quiet"], cwd=root, capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            pytest.skip(f"uv lock failed (no PyPI?): {proc.stderr.strip()[-300:]}")

    lock()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()

    def statuses() -> dict[str, str]:
        done = run_vx(["run", "build", "--all", "--format", "json"], root, home=home).assert_ok()
        return _statuses(done.out)

    assert set(statuses().values()) == {"success"}
    (root / "packages/a/src/a/__init__.py").write_text("X = 1\n")
    assert statuses() == {"a#build": "success", "b#build": "success", "c#build": "cache-hit"}
    git(root, "commit", "-q", "-am", "edit a")

    write_tree_text = _uv_tree("1.17.0")["packages/a/pyproject.toml"]
    (root / "packages/a/pyproject.toml").write_text(write_tree_text)
    lock()
    affected = run_vx(["run", "build", "--affected=main", "--dry=json"], root, home=home)
    picked = {t["id"] for t in json.loads(affected.assert_ok().out)["tasks"]}
    assert picked == {"a#build", "b#build"}, affected
    assert statuses() == {"a#build": "success", "b#build": "success", "c#build": "cache-hit"}
    why = run_vx(["why", "b#build"], root, home=home).assert_ok()
    assert "lockfile: six 1.16.0 → 1.17.0 (via a)" in why.out, why.out
