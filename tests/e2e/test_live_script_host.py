"""Which manager runs a script the Turbo and Nx readers map, and what `vx init` takes for a server.

The manager comes from `packageManager` and the lockfile: a `.yarnrc.yml` left behind in a pnpm
workspace is noise, and running every script as `yarn run` there fails every build.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

PNPM_WITH_STRAY_YARNRC: dict[str, Any] = {
    "package.json": {"name": "acme", "private": True, "packageManager": "pnpm@9.12.0"},
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    ".yarnrc.yml": "nodeLinker: node-modules\n",
    ".gitignore": "node_modules\ndist\n",
    "packages/lib/package.json": {
        "name": "lib",
        "scripts": {"build": "mkdir -p dist && echo lib > dist/index.js"},
    },
}
TURBO = {"turbo.json": {"tasks": {"build": {"outputs": ["dist/**"]}}}}
NX = {"nx.json": {"targetDefaults": {"build": {"outputs": ["{projectRoot}/dist"]}}}}


@pytest.mark.parametrize(("kind", "files"), [("turbo", TURBO), ("nx", NX)])
def test_a_stray_yarnrc_in_a_pnpm_workspace_leaves_the_script_inline(
    workspace: Callable[..., Path],
    vx: Callable[..., VxResult],
    kind: str,
    files: dict[str, Any],
) -> None:
    root = workspace({**PNPM_WITH_STRAY_YARNRC, **files, "vx.workspace.json": {"tasksFrom": kind}})
    config = vx(["show", "lib#build", "--format", "json"], root).assert_ok().json()["config"]
    assert config["exec"]["command"] == "mkdir -p dist && echo lib > dist/index.js"
    vx(["run", "lib#build"], root).assert_ok()
    assert (root / "packages/lib/dist/index.js").read_text() == "lib\n"


@pytest.mark.parametrize(("kind", "files"), [("turbo", TURBO), ("nx", NX)])
def test_yarn_berry_declared_by_package_manager_still_runs_through_yarn(
    workspace: Callable[..., Path],
    vx: Callable[..., VxResult],
    kind: str,
    files: dict[str, Any],
) -> None:
    berry = {
        **PNPM_WITH_STRAY_YARNRC,
        "package.json": {
            "name": "acme",
            "private": True,
            "packageManager": "yarn@4.5.0",
            "workspaces": ["packages/*"],
        },
        "yarn.lock": "__metadata:\n  version: 8\n",
    }
    del berry["pnpm-workspace.yaml"], berry["pnpm-lock.yaml"]
    root = workspace({**berry, **files, "vx.workspace.json": {"tasksFrom": kind}})
    config = vx(["show", "lib#build", "--format", "json"], root).assert_ok().json()["config"]
    assert config["exec"]["command"] == "yarn run build"


def _strip_comments(text: str) -> str:
    return re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)


def test_karma_single_run_is_a_test_not_a_server(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "acme", "private": True, "workspaces": ["packages/*"]},
            "package-lock.json": {"name": "acme", "lockfileVersion": 3, "packages": {}},
            "packages/ui/package.json": {
                "name": "ui",
                "scripts": {"test": "karma start --single-run", "tdd": "karma start"},
            },
        }
    )
    vx(["init"], root).assert_ok()
    tasks = json.loads(_strip_comments((root / "packages/ui/vx.config.json").read_text()))["tasks"]
    assert tasks["test"]["exec"] == "karma start --single-run"
    assert tasks["tdd"]["exec"] == {"command": "karma start", "persistent": True}
