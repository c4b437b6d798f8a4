"""`vx prune` in a repo adopted with `vx init --keep`: turbo.json and the files its
`globalDependencies` name come along so a run in the pruned tree works, and an untracked file
git does not ignore (a `.env.production`, an `.npmrc` with a token) stays out unless asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.conftest import git

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

KEPT_TURBO: dict[str, Any] = {
    "package.json": {"name": "acme", "private": True, "workspaces": ["apps/*", "packages/*"]},
    "package-lock.json": {
        "name": "acme",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {
            "": {"name": "acme", "workspaces": ["apps/*", "packages/*"]},
            "apps/web": {"name": "web", "dependencies": {"ui": "*"}},
            "packages/ui": {"name": "ui"},
            "packages/other": {"name": "other"},
            "node_modules/web": {"resolved": "apps/web", "link": True},
            "node_modules/ui": {"resolved": "packages/ui", "link": True},
            "node_modules/other": {"resolved": "packages/other", "link": True},
        },
    },
    "vx.workspace.json": {"tasksFrom": "turbo"},
    "turbo.json": {
        "globalDependencies": ["config/*.env"],
        "tasks": {"build": {"dependsOn": ["^build"], "outputs": ["dist/**"]}},
    },
    "config/shared.env": "REGION=eu\n",
    ".gitignore": "node_modules\ndist\nout\n",
    "apps/web/package.json": {
        "name": "web",
        "dependencies": {"ui": "*"},
        "scripts": {"build": "mkdir -p dist && cat ../../config/shared.env > dist/web.txt"},
    },
    "apps/web/turbo.json": {"extends": ["//"], "tasks": {"build": {"outputs": ["dist/**"]}}},
    "packages/ui/package.json": {
        "name": "ui",
        "scripts": {"build": "mkdir -p dist && echo ui > dist/ui.txt"},
    },
    "packages/other/package.json": {"name": "other", "scripts": {"build": "true"}},
}
SECRETS = {".npmrc": "//r/:_authToken=t0ken\n", "apps/web/.env.production": "API_KEY=s3cret\n"}


def _adopted(workspace: Callable[..., Path]) -> Path:
    root = workspace(KEPT_TURBO)
    for rel, text in SECRETS.items():
        (root / rel).write_text(text)
    return root


def test_the_pruned_tree_keeps_turbo_json_and_its_global_dependencies_and_runs(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = _adopted(workspace)
    result = vx(["prune", "web"], root).assert_ok()
    out = root / "out"
    for rel in ("turbo.json", "apps/web/turbo.json", "config/shared.env", "vx.workspace.json"):
        assert (out / rel).is_file(), rel
    assert not (out / "packages/other").exists()
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-qm", "pruned")
    vx(["run", "build", "--all"], out).assert_ok()
    assert (out / "apps/web/dist/web.txt").read_text() == "REGION=eu\n"
    assert (out / "packages/ui/dist/ui.txt").read_text() == "ui\n"
    assert result.err.startswith(
        "vx prune: note: left out 2 untracked files git does not ignore: .npmrc,"
        " apps/web/.env.production — commit them, or pass --untracked to copy them\n"
    )


def test_untracked_files_stay_out_of_the_docker_context_unless_asked(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = _adopted(workspace)
    vx(["prune", "web", "--docker"], root).assert_ok()
    for layer in ("json", "full"):
        for rel in SECRETS:
            assert not (root / "out" / layer / rel).exists(), (layer, rel)
    asked = vx(["prune", "web", "--docker", "--untracked"], root).assert_ok()
    assert asked.err.startswith(
        "vx prune: note: copied 2 untracked files git does not ignore: .npmrc,"
        " apps/web/.env.production\n"
    )
    for rel, text in SECRETS.items():
        assert (root / "out/full" / rel).read_text() == text
