"""An Nx repo (npm workspaces, project.json, named inputs) read live with `"tasksFrom": "nx"`:
the tasks against what `nx show project --json` resolves, the graph, and a second run all hits.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tests.e2e.npmtools import npm_tool

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

NX_REPO: dict[str, Any] = {
    "package.json": {
        "name": "acme",
        "private": True,
        "workspaces": ["packages/*"],
        "scripts": {"build": "nx run-many -t build"},
    },
    "package-lock.json": {"name": "acme", "lockfileVersion": 3, "packages": {}},
    "vx.workspace.json": {"tasksFrom": "nx"},
    "nx.json": {
        "namedInputs": {
            "default": ["{projectRoot}/**/*", "sharedGlobals"],
            "production": ["default", "!{projectRoot}/**/*.spec.ts"],
            "sharedGlobals": ["{workspaceRoot}/babel.config.json"],
        },
        "targetDefaults": {
            "build": {
                "dependsOn": ["^build"],
                "inputs": ["production", "^production"],
                "outputs": ["{projectRoot}/dist"],
                "cache": True,
            },
            "test": {"inputs": ["default", "^production", {"env": "CI_SHARD"}], "cache": True},
        },
        "defaultBase": "main",
    },
    "babel.config.json": "{}\n",
    ".gitignore": "node_modules\ndist\ncoverage\n.nx\norder.log\n",
    "packages/lib/package.json": {
        "name": "@acme/lib",
        "version": "1.0.0",
        "scripts": {
            "build": "mkdir -p dist && echo lib > dist/index.js && echo lib >> ../../order.log"
        },
    },
    "packages/lib/project.json": {
        "name": "lib",
        "tags": ["scope:shared"],
        "targets": {"test": {"command": "echo test {projectName}", "dependsOn": ["build"]}},
    },
    "packages/app/package.json": {
        "name": "@acme/app",
        "version": "1.0.0",
        "dependencies": {"@acme/lib": "*"},
        "scripts": {
            "build": (
                "mkdir -p dist ../../coverage/app && echo app > dist/main.js"
                " && echo cov > ../../coverage/app/lcov.info && echo app >> ../../order.log"
            )
        },
    },
    "packages/app/project.json": {
        "name": "app",
        "targets": {
            "build": {"outputs": ["{projectRoot}/dist", "{workspaceRoot}/coverage/{projectName}"]},
            "e2e": {"executor": "@nx/cypress:cypress", "options": {}},
            "lint": {
                "executor": "nx:run-commands",
                "options": {
                    "commands": ["echo a", "echo b"],
                    "parallel": False,
                    "cwd": "packages/app",
                },
            },
            "deploy": {
                "command": "echo deploying {projectRoot}",
                "dependsOn": [{"target": "build", "projects": ["lib"]}, "build"],
            },
        },
    },
}

WARNINGS = (
    'warning: nx.json: "defaultBase" is not honoured by vx — set affectedBase in'
    " vx.workspace.json\n"
    'warning: packages/app/project.json: executor "@nx/cypress:cypress" (at app:e2e) is not'
    " honoured by vx — it runs only under Nx, so the target is left out; give it a command\n"
)
PRODUCTION = {"files": ["**/*", "!**/*.spec.ts"], "workspaceFiles": ["babel.config.json"]}


def _tasks(vx: Callable[..., VxResult], ws: Path, project: str) -> dict[str, Any]:
    tasks: dict[str, Any] = (
        vx(["show", project, "--format", "json"], ws).assert_ok().json()["config"]["tasks"]
    )
    return tasks


def _inputs(task: dict[str, Any]) -> dict[str, Any]:
    found = task["cache"]["inputs"]
    return {k: v for k, v in found.items() if v}


def test_nx_targets_named_inputs_and_the_run(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    ws = workspace(NX_REPO)
    listing = vx(["show"], ws).assert_ok()
    assert listing.out == (
        "@acme/app  packages/app  3 tasks (no vx config; from nx.json)\n"
        "@acme/lib  packages/lib  2 tasks (no vx config; from nx.json)  [scope:shared]\n"
    )
    assert listing.err == WARNINGS
    app = _tasks(vx, ws, "@acme/app")
    assert app["build"]["dependsOn"] == ["^build"]
    assert _inputs(app["build"]) == PRODUCTION  # the named set, expanded
    assert app["build"]["cache"]["outputs"] == {
        "files": ["dist/**"],
        "workspaceFiles": ["coverage/app/**"],
    }
    assert app["lint"]["exec"]["command"] == "echo a && echo b"  # cwd: the project itself
    assert app["lint"]["cache"] is None
    # run-commands runs in the workspace root unless its cwd says otherwise
    assert app["deploy"]["exec"]["command"] == "cd ../.. && echo deploying packages/app"
    assert app["deploy"]["dependsOn"] == ["@acme/lib#build", "build"]
    assert "e2e" not in app
    lib = _tasks(vx, ws, "@acme/lib")
    assert lib["test"]["exec"]["command"] == "cd ../.. && echo test lib"
    assert _inputs(lib["test"]) == {
        "files": ["**/*"],
        "workspaceFiles": ["babel.config.json"],
        "env": ["CI_SHARD"],
    }
    plan = vx(["run", "deploy", "--filter", "@acme/app", "--dry=json"], ws).assert_ok().json()
    assert {t["id"]: sorted(t["deps"]) for t in plan["tasks"]} == {
        "@acme/app#build": ["@acme/lib#build"],
        "@acme/app#deploy": ["@acme/app#build", "@acme/lib#build"],
        "@acme/lib#build": [],
    }
    vx(["run", "build", "--all"], ws).assert_ok()
    assert (ws / "order.log").read_text().split() == ["lib", "app"]
    assert (ws / "coverage/app/lcov.info").is_file()
    again = vx(["run", "build", "--all"], ws).assert_ok()
    assert "all cached" in again.out + again.err, again


def _nx_project(ws: Path, name: str) -> dict[str, Any]:
    nx = npm_tool("nx", "21", "nx")
    modules = ws / "node_modules"
    modules.mkdir(exist_ok=True)
    (modules / "nx").symlink_to(nx.resolve().parents[1], target_is_directory=True)
    env = {**os.environ, "NX_DAEMON": "false", "NX_NO_CLOUD": "true", "NX_TUI": "false"}
    proc = subprocess.run(
        [str(nx), "show", "project", name, "--json"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    (modules / "nx").unlink()
    if proc.returncode != 0:
        pytest.skip(f"nx show project {name} --json failed here: {proc.stderr[-400:]}")
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


@pytest.mark.parametrize(("nx_name", "vx_name"), [("app", "@acme/app"), ("lib", "@acme/lib")])
def test_nx_resolves_the_targets_vx_reads(
    workspace: Callable[..., Path], vx: Callable[..., VxResult], nx_name: str, vx_name: str
) -> None:
    """Nx's own merge of targetDefaults and project.json, against vx's reading of it."""
    ours = _tasks(vx, workspace(NX_REPO), vx_name)
    theirs = _nx_project(workspace(NX_REPO, name="nx"), nx_name)["targets"]
    runnable = {
        name
        for name, target in theirs.items()
        if target.get("executor") in ("nx:run-script", "nx:run-commands")
    }
    assert set(ours) == runnable
    names = {"app": "@acme/app", "lib": "@acme/lib"}
    for name in runnable:
        target, task = theirs[name], ours[name]
        assert (task["cache"] is not None) == bool(target.get("cache")), name
        expected = [
            d if isinstance(d, str) else f"{names[d['projects'][0]]}#{d['target']}"
            for d in target.get("dependsOn", [])
        ]
        assert task["dependsOn"] == expected, name
        outputs = [
            o.replace("{projectRoot}/", "").replace(
                "{workspaceRoot}/coverage/{projectName}", f"coverage/{nx_name}"
            )
            + "/**"
            for o in target.get("outputs", [])
        ]
        if task["cache"] is not None:
            cached = task["cache"]["outputs"]
            assert cached["files"] + cached["workspaceFiles"] == outputs, name


def test_migrate_from_nx_writes_what_the_live_reader_gives(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    live = workspace(NX_REPO, name="live")
    native = workspace({k: v for k, v in NX_REPO.items() if k != "vx.workspace.json"}, name="nat")
    done = vx(["migrate"], native).assert_ok()  # nx.json at the root says which runner
    assert done.out.splitlines()[:2] == [
        "wrote packages/app/vx.config.json",
        "wrote packages/lib/vx.config.json",
    ]
    assert done.err == WARNINGS
    assert done.out.splitlines()[-1].endswith(
        "(nx.json and project.json are no longer read; delete them when you are ready)"
    )
    for project in ("@acme/app", "@acme/lib"):
        assert _tasks(vx, native, project) == _tasks(vx, live, project), project
    shown = vx(["show"], native).assert_ok().out
    assert "[scope:shared]" in shown  # project.json tags travel too


def test_a_warning_names_the_file_the_target_came_from_and_no_task_of_its_own_choosing(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    """A package with no project.json, whose lint reads its dependencies' files."""
    files = {
        "package.json": {"name": "acme", "private": True, "workspaces": ["packages/*"]},
        "vx.workspace.json": {"tasksFrom": "nx"},
        "nx.json": {
            "namedInputs": {"default": ["{projectRoot}/**/*"]},
            "targetDefaults": {"lint": {"inputs": ["default", "^default"], "cache": True}},
        },
        "packages/lib/package.json": {"name": "lib", "scripts": {"lint": "echo lint"}},
    }
    root = workspace(files)
    shown = vx(["show"], root).assert_ok()
    (line,) = [w for w in shown.err.splitlines() if "^default" in w]
    assert line.startswith("warning: packages/lib/package.json: "), line
    assert "^build" not in line
    assert '"dependsOn": ["^<task>"]' in line
