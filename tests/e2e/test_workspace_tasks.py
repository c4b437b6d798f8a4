"""Tasks declared once in vx.workspace.json: every package runs and caches them, and an edit to
that file re-keys them on the warm path as on the full one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.conftest import git, run_vx
from tests.e2e.cachews import statuses
from tests.e2e.runws import package

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

BUILD = {
    "dependsOn": ["^build"],
    "exec": "mkdir -p dist && cat src/*.txt > dist/out.txt && echo $MARK >> dist/out.txt",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}


def files(mark: str) -> dict[str, object]:
    build = {**BUILD, "exec": {"command": BUILD["exec"], "env": {"define": {"MARK": mark}}}}
    out: dict[str, object] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
        "vx.workspace.json": {"tasks": {"build": build}},
        # b says only what differs: its command reads one more file.
        "packages/b/vx.config.json": {
            "tasks": {"build": {"exec": {"command": f"{BUILD['exec']} && cp extra dist/"}}}
        },
        "packages/b/extra": "b's extra\n",
    }
    for name, deps in (("a", ()), ("b", ("a",)), ("c", ())):
        out[f"packages/{name}/package.json"] = package(name, deps)
        out[f"packages/{name}/src/index.txt"] = f"{name}\n"
    return out


def build(ws: Path, home: Path, *args: str) -> VxResult:
    return run_vx(["run", "build", "--all", *args], ws, env={"VX_TIMING": "1"}, home=home)


def build_json(ws: Path, home: Path) -> dict[str, str]:
    return statuses(build(ws, home, "--format", "json").assert_ok())


def test_workspace_tasks_run_cache_and_rekey_on_the_warm_path(workspace, tmp_path) -> None:
    ws = workspace(files("one"))
    home = tmp_path / "home"
    assert build_json(ws, home) == dict.fromkeys(("a#build", "b#build", "c#build"), "success")
    assert (ws / "packages/b/dist/out.txt").read_text() == "b\none\n"
    assert (ws / "packages/b/dist/extra").read_text() == "b's extra\n"
    assert (ws / "packages/c/dist/out.txt").read_text() == "c\none\n"
    build(ws, home).assert_ok()
    third = build(ws, home).assert_ok()
    assert "warm replay" in third.err, third

    # One edit to the workspace file re-keys every package's build, warm path on.
    (ws / "vx.workspace.json").write_text(json.dumps(files("two")["vx.workspace.json"]))
    git(ws, "commit", "-qam", "two")
    fourth = build(ws, home).assert_ok()
    assert "warm replay" not in fourth.err, fourth
    assert (ws / "packages/a/dist/out.txt").read_text() == "a\ntwo\n"
    assert (ws / "packages/b/dist/out.txt").read_text() == "b\ntwo\n"
    assert set(build_json(ws, home).values()) == {"cache-hit"}
