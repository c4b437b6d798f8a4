"""The root toolchain is keyed (issue 26, item 4): a bump of a root devDependency, made by the
real package manager, re-runs every member's build, and `vx why` names the root dependency.

The members' own lockfile closures do not move (they install nothing), so only the root's
closure, the `toolchain` component, can re-key them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, make_git_workspace, run_vx
from tests.e2e.pm_tools import get_manager, run_pm
from tests.e2e.test_history import schema

from vx.trace.probe import tracing_available

if TYPE_CHECKING:
    from pathlib import Path

BUILD = {
    "tasks": {
        "build": {
            "exec": "mkdir -p dist && echo built > dist/out.txt",
            "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
        }
    }
}

# manager → (lockfile, install argv)
CASES: dict[str, tuple[str, list[str]]] = {
    "npm": ("package-lock.json", ["install"]),
    "pnpm9": ("pnpm-lock.yaml", ["install", "--no-frozen-lockfile"]),
    "yarn1": ("yarn.lock", ["install", "--no-progress"]),
    "yarn4": ("yarn.lock", ["install"]),
    "bun": ("bun.lock", ["install"]),
}


def _tree(name: str, ms: str) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "root", "private": True, "devDependencies": {"ms": ms}}
    files: dict[str, Any] = {".gitignore": "node_modules/\ndist/\n.yarn/\n.pnp.*\n"}
    if name == "yarn4":
        files["yarn.lock"] = ""
        files[".yarnrc.yml"] = "nodeLinker: node-modules\nenableTelemetry: false\n"
    if name.startswith("pnpm"):
        files["pnpm-workspace.yaml"] = "packages:\n  - 'packages/*'\n"
    else:
        root["workspaces"] = ["packages/*"]
    files["package.json"] = root
    for member in ("web", "api"):
        files[f"packages/{member}/package.json"] = {"name": member, "version": "1.0.0"}
        files[f"packages/{member}/vx.config.json"] = BUILD
        files[f"packages/{member}/src/index.txt"] = member
    return files


def _statuses(out: str) -> dict[str, str]:
    return {t["id"]: t["status"] for t in json.loads(out)["tasks"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_root_dev_dependency_bump_re_runs_every_build_and_why_names_it(
    name: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    manager = get_manager(tmp_path_factory, name)
    lockfile, install = CASES[name]
    root = make_git_workspace(tmp_path / "ws", _tree(name, "2.1.2"), commit=False)
    run_pm(manager, install, root)
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

    (root / "package.json").write_text(json.dumps(_tree(name, "2.1.3")["package.json"]))
    run_pm(manager, install, root)
    assert git(root, "status", "--porcelain", "--", lockfile).strip(), "the lockfile did not move"

    affected = vx("run", "build", "--affected=main", "--dry=json").assert_ok()
    tasks = {t["id"]: t for t in json.loads(affected.out)["tasks"]}
    assert set(tasks) == {"web#build", "api#build"}, affected
    change = tasks["web#build"]["affected"]["change"]
    assert change.startswith(f"{lockfile} changed a root dependency (ms 2.1.2 → 2.1.3"), change

    bumped = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert _statuses(bumped.out) == {"web#build": "success", "api#build": "success"}, bumped
    why = vx("why", "web#build").assert_ok()
    assert f"changed toolchain  {lockfile}" in why.out, why
    assert "toolchain: root dependency ms 2.1.2 → 2.1.3" in why.out, why.out
    doc = vx("why", "api#build", "--format", "json").assert_ok().json()
    schema("why.json").validate(doc)
    (change,) = doc["diff"]["changed"]
    assert change["kind"] == "toolchain", doc
    assert change["detail"] == ["root dependency ms 2.1.2 → 2.1.3"], doc
    settled = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert set(_statuses(settled.out).values()) == {"cache-hit"}, settled


@pytest.mark.skipif(
    not tracing_available().ok, reason=f"no tracer here: {tracing_available().reason}"
)
def test_an_audited_task_keys_only_the_root_dependencies_it_ran(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`web` reads the root's `ms`, `api` nothing of the root's: once both are audited, a bump
    of `ms` re-runs `web` alone, and `vx why` names the dependency in the component."""
    manager = get_manager(tmp_path_factory, "npm")
    files = _tree("npm", "2.1.2")
    reads = "mkdir -p dist && cat ../../node_modules/ms/package.json > dist/out.txt"
    files["packages/web/vx.config.json"] = {
        "tasks": {"build": {**BUILD["tasks"]["build"], "exec": reads}}
    }
    # the audit names root dependencies from the root project's manifest: a root config
    # makes the root a project
    files["vx.config.json"] = {"tasks": {}}
    root = make_git_workspace(tmp_path / "ws", files, commit=False)
    run_pm(manager, ["install"], root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()

    def vx(*args: str) -> Any:
        return run_vx(list(args), root, home=home)

    vx("run", "build", "--all", "--audit").assert_ok()
    last = vx("last", "--format", "json").assert_ok().json()
    audits = {t["id"]: t["audit"] for t in last["tasks"]}
    assert [f["value"] for f in audits["web#build"]["findings"]] == ["ms"], audits
    assert audits["api#build"]["findings"] == [], audits
    vx("run", "build", "--all").assert_ok()  # the keys narrow once the audits are in
    again = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert set(_statuses(again.out).values()) == {"cache-hit"}, again

    (root / "package.json").write_text(json.dumps(_tree("npm", "2.1.3")["package.json"]))
    run_pm(manager, ["install"], root)

    bumped = vx("run", "build", "--all", "--format", "json").assert_ok()
    assert _statuses(bumped.out) == {"web#build": "success", "api#build": "cache-hit"}, bumped
    why = vx("why", "web#build").assert_ok()
    assert "changed toolchain  package-lock.json ms" in why.out, why
    assert "toolchain: root dependency ms 2.1.2 → 2.1.3" in why.out, why.out
