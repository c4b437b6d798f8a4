"""Adopting vx: a root `build` that does more than fan out to the members keeps its own steps,
and a repo or package not yet adopted is pointed at `vx init` (and `vx init --keep` beside
turbo.json or nx.json)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

# The root's build makes its own .d.ts and bundle around the members' builds: dropping the
# whole script would leave both unbuilt, and say nothing.
ROOT_BUILD_REPO: dict[str, Any] = {
    "package.json": {
        "name": "lib-suite",
        "private": True,
        "workspaces": ["packages/*"],
        "scripts": {
            "build": (
                "mkdir -p types && echo types > types/index.d.ts && npm run build --workspaces"
                " && cat packages/a/dist/a.js packages/b/dist/b.js > bundle.js"
            ),
        },
    },
    "package-lock.json": {"name": "lib-suite", "lockfileVersion": 3, "packages": {}},
    "packages/a/package.json": {
        "name": "a",
        "scripts": {"build": "mkdir -p dist && echo a > dist/a.js"},
    },
    "packages/b/package.json": {
        "name": "b",
        "scripts": {"build": "mkdir -p dist && echo b > dist/b.js"},
    },
}


def _config(path: Path) -> Any:
    return json.loads(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.MULTILINE))


def test_a_root_build_keeps_its_own_steps_and_runs_them_after_the_members(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(ROOT_BUILD_REPO)
    out = vx(["init"], root).assert_ok().out
    assert (
        "note: root script build: its own steps (mkdir -p types && echo types >"
        " types/index.d.ts && cat packages/a/dist/a.js packages/b/dist/b.js > bundle.js) are"
        " the root's build task, run after every member's build\n"
    ) in out
    task = _config(root / "vx.config.json")["tasks"]["build"]
    assert task["dependsOn"] == ["a#build", "b#build"]
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    vx(["run", "build", "--all"], root).assert_ok()
    assert (root / "types/index.d.ts").read_text() == "types\n"
    assert (root / "bundle.js").read_text() == "a\nb\n"


def test_a_root_build_that_only_fans_out_is_still_left_out(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    files = {**ROOT_BUILD_REPO}
    files["package.json"] = {
        **ROOT_BUILD_REPO["package.json"],
        "scripts": {"build": "npm run build --workspaces"},
    }
    root = workspace(files)
    out = vx(["init"], root).assert_ok().out
    assert "note: root scripts left out (runs the workspace's members): build\n" in out
    assert not (root / "vx.config.json").exists()


@pytest.mark.parametrize(
    ("runner", "content"),
    [("turbo.json", {"tasks": {"build": {}}}), ("nx.json", {"targetDefaults": {}})],
)
def test_a_runner_repo_not_yet_adopted_is_told_about_init_keep(
    workspace: Callable[..., Path], vx: Callable[..., VxResult], runner: str, content: Any
) -> None:
    root = workspace({**ROOT_BUILD_REPO, runner: content})
    result = vx(["run", "build", "--all"], root).assert_code(1)
    assert result.err == (
        "vx run: no projects declare task(s): build. No package declares a vx.config — run"
        f" `vx init --keep` to read {runner} live on every run, or `vx init` to write vx.config"
        " files from it.\n"
    )


def test_a_package_with_scripts_and_no_config_is_pointed_at_vx_init(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {**ROOT_BUILD_REPO, "packages/a/vx.config.json": {"tasks": {"build": {"exec": "true"}}}}
    )
    result = vx(["run", "build"], root / "packages/b").assert_code(1)
    assert result.err == (
        "vx run: no projects declare task(s): build. Only projects outside the selection"
        " declare build — pass --all, or name one as pkg#task. b has package.json script(s)"
        " build but no vx.config — run `vx init` to write a vx.config per package from its"
        " package.json scripts.\n"
    )


def test_vx_show_of_a_package_with_scripts_and_no_config_points_at_vx_init(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(ROOT_BUILD_REPO)
    out = vx(["show", "b"], root).assert_ok().out
    assert out.startswith(
        "b — packages/b\nno vx config, and no tasks\npackage.json scripts: build — run `vx init`"
        " to write a vx.config per package from its package.json scripts\n"
    )
