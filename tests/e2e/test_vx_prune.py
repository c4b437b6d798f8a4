"""`vx prune`: the pruned tree installs with a frozen lockfile and builds, with real managers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, make_git_workspace, run_vx
from tests.e2e.pm_tools import get_manager, run_pm

if TYPE_CHECKING:
    from pathlib import Path


def _build(deps: bool) -> dict[str, Any]:
    task: dict[str, Any] = {
        "exec": "mkdir -p dist && echo built > dist/out.txt",
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }
    if deps:
        task["dependsOn"] = ["^build"]
    return {"tasks": {"build": task}}


def _tree(name: str) -> dict[str, Any]:
    pnpm = name.startswith("pnpm")
    link = "1.0.0" if name in ("npm", "yarn1") else "workspace:*"
    root: dict[str, Any] = {"name": "root", "private": True}
    if not pnpm:
        root["workspaces"] = ["packages/*"]
    files: dict[str, Any] = {
        "package.json": root,
        ".gitignore": "node_modules/\ndist/\nout/\n",
        "packages/ui/package.json": {
            "name": "@acme/ui",
            "version": "1.0.0",
            "dependencies": {"ms": "2.1.3"},
        },
        "packages/testkit/package.json": {
            "name": "testkit",
            "version": "1.0.0",
            "dependencies": {"is-number": "7.0.0"},
        },
        "packages/app/package.json": {
            "name": "app",
            "version": "1.0.0",
            "dependencies": {"@acme/ui": link},
            "devDependencies": {"testkit": link},
        },
        "packages/lone/package.json": {
            "name": "lone",
            "version": "1.0.0",
            "dependencies": {"ms": "2.1.2"},
        },
    }
    for member in ("ui", "app", "lone", "testkit"):
        files[f"packages/{member}/vx.config.json"] = _build(member == "app")
        files[f"packages/{member}/src/index.txt"] = member
    if pnpm:
        files["pnpm-workspace.yaml"] = "packages:\n  - 'packages/*'\n"
    if name == "yarn4":
        files["yarn.lock"] = ""
        files[".yarnrc.yml"] = "nodeLinker: node-modules\nenableTelemetry: false\n"
    return files


CASES = {
    "npm": ("package-lock.json", ["ci"]),
    "pnpm8": ("pnpm-lock.yaml", ["install", "--frozen-lockfile"]),
    "pnpm9": ("pnpm-lock.yaml", ["install", "--frozen-lockfile"]),
    "yarn1": ("yarn.lock", ["install", "--frozen-lockfile", "--no-progress"]),
    "yarn4": ("yarn.lock", ["install", "--immutable"]),
    "bun": ("bun.lock", ["install", "--frozen-lockfile"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("production", [False, True], ids=["all", "production"])
def test_a_pruned_docker_tree_installs_frozen_and_builds(
    name: str, production: bool, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    manager = get_manager(tmp_path_factory, name)
    lockfile, frozen = CASES[name]
    root = make_git_workspace(tmp_path / "ws", _tree(name), commit=False)
    run_pm(manager, ["install"], root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()
    args = ["prune", "app", "--docker", *(["--production"] if production else [])]
    pruned = run_vx(args, root, home=home).assert_ok()
    assert "pruned →" in pruned.err, pruned
    out = root / "out"
    kept = {"app", "ui"} if production else {"app", "ui", "testkit"}
    members = sorted(p.name for p in (out / "full/packages").iterdir())
    assert members == sorted(kept), members
    assert sorted(p.name for p in (out / "json/packages").iterdir()) == sorted(kept)
    assert not (out / "json/packages/app/src").exists()
    lock_text = (out / "json" / lockfile).read_text()
    assert "lone" not in lock_text.replace('"lockfileVersion"', "")
    assert ("is-number" in lock_text) is not production
    app = json.loads((out / "full/packages/app/package.json").read_text())
    assert ("testkit" in app.get("devDependencies", {})) is not production

    run_pm(manager, frozen, out / "json")
    ui_ms = [out / "json/packages/ui/node_modules/ms", out / "json/node_modules/ms"]
    assert any(p.exists() for p in ui_ms), "the frozen install did not install ui's ms"
    full = out / "full"
    run_pm(manager, frozen, full)
    git(full, "init", "-q", "-b", "main")
    git(full, "add", "-A")
    git(full, "commit", "-q", "-m", "pruned")
    built = run_vx(["run", "build", "--all", "--format", "json"], full, home=home).assert_ok()
    ran = {t["id"]: t["status"] for t in json.loads(built.out)["tasks"]}
    assert set(ran) == {f"{'@acme/ui' if m == 'ui' else m}#build" for m in kept}, built
    assert set(ran.values()) == {"success"}, built

    again = run_vx(args, root, home=home).assert_ok()
    assert (out / ".vx-prune").is_file(), again


def test_prune_refuses_a_directory_it_did_not_write(workspace: Any, vx: Any) -> None:
    root = workspace(
        {
            "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
            "packages/app/package.json": {"name": "app", "version": "1.0.0"},
            "keep/notes.txt": "mine",
        }
    )
    refused = vx(["prune", "app", "--out-dir", "keep"], root)
    assert refused.code == 1, refused
    assert "--out-dir" in refused.err, refused
    assert "no vx prune wrote it" in refused.err, refused
    assert (root / "keep/notes.txt").read_text() == "mine"
    unknown = vx(["prune", "ap"], root)
    assert unknown.code == 1, unknown
    assert "no project ap — did you mean app?" in unknown.err, unknown
