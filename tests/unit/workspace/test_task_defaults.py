"""Workspace-wide tasks: every package gets them, and a package's own task merges over them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vx.errors import ConfigError
from vx.loader.assemble import load_workspace
from vx.workspace.task_defaults import merge_task

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Make = Callable[..., Path]

BUILD: dict[str, Any] = {
    "dependsOn": ["^build"],
    "exec": {"command": "uv build", "timeout": 60000},
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}
UV_TREE: dict[str, Any] = {
    "pyproject.toml": '[project]\nname = "root"\n[tool.uv.workspace]\nmembers = ["packages/*"]\n',
    "packages/a/pyproject.toml": '[project]\nname = "a"\n',
    "packages/b/pyproject.toml": '[project]\nname = "b"\n',
    "packages/b/vx.config.json": {
        "tasks": {
            "build": {"exec": "make", "cache": {"outputs": {"files": ["lib/**"]}}},
            "lint": {"exec": "ruff check"},
        }
    },
    "vx.workspace.json": {"tasks": {"build": BUILD}},
}


def test_a_package_without_a_config_takes_the_workspace_task(workspace: Make) -> None:
    ws = load_workspace(workspace(UV_TREE))
    a = ws.project("a")
    assert a is not None
    assert a.config is not None
    assert a.config.path == "vx.workspace.json"
    build = a.tasks["build"]
    assert build.depends_on == ("^build",)
    assert build.exec_spec is not None
    assert build.exec_spec.command == "uv build"
    # The root of a uv workspace is a package like the others (uv counts it as a member).
    root = ws.project("root")
    assert root is not None
    assert "build" in root.tasks


def test_a_package_task_merges_over_the_workspace_one_field_by_field(workspace: Make) -> None:
    ws = load_workspace(workspace(UV_TREE))
    b = ws.project("b")
    assert b is not None
    assert b.config is not None
    assert b.config.path == "packages/b/vx.config.json"
    assert list(b.tasks) == ["build", "lint"]
    build = b.tasks["build"]
    assert build.exec_spec is not None
    assert (build.exec_spec.command, build.exec_spec.timeout_ms) == ("make", 60000)
    assert build.depends_on == ("^build",)
    assert build.cache_spec is not None
    assert build.cache_spec.inputs.files == ("src/**",)
    assert build.cache_spec.outputs.files == ("lib/**",)
    # What the key hashes is the merged task, not either file's half of it.
    assert build.resolved["exec"]["command"] == "make"
    assert build.resolved["cache"]["inputs"]["files"] == ("src/**",)


def test_the_root_of_a_javascript_workspace_gets_none(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"name": "mono", "workspaces": ["packages/*"]},
            "packages/ui/package.json": {"name": "ui"},
            "vx.config.json": {"tasks": {"lint": {"exec": "eslint ."}}},
            "vx.workspace.json": {"tasks": {"build": {"exec": "tsc"}}},
        }
    )
    ws = load_workspace(root)
    ui, top = ws.project("ui"), ws.project("//")
    assert ui is not None
    assert top is not None
    assert list(ui.tasks) == ["build"]
    assert list(top.tasks) == ["lint"]


def test_a_merged_task_that_breaks_a_rule_names_the_package_file(workspace: Make) -> None:
    tree = dict(UV_TREE)
    tree["packages/b/vx.config.json"] = {"tasks": {"build": {"exec": {"readyWhen": "up"}}}}
    with pytest.raises(ConfigError) as caught:
        load_workspace(workspace(tree))
    assert str(caught.value).startswith("packages/b/vx.config.json: tasks.build.exec.readyWhen:")


def test_a_package_may_say_only_what_differs(workspace: Make) -> None:
    tree = dict(UV_TREE)
    tree["packages/b/vx.config.json"] = {"tasks": {"build": {"exec": {"timeout": 5}}}}
    b = load_workspace(workspace(tree)).project("b")
    assert b is not None
    spec = b.tasks["build"].exec_spec
    assert spec is not None
    assert (spec.command, spec.timeout_ms) == ("uv build", 5)


def test_tasks_and_tasks_from_together_are_refused(workspace: Make) -> None:
    tree = dict(UV_TREE)
    tree["vx.workspace.json"] = {"tasks": {}, "tasksFrom": "turbo"}
    with pytest.raises(ConfigError, match="tasksFrom"):
        load_workspace(workspace(tree))


@pytest.mark.parametrize(
    ("base", "over", "merged"),
    [
        ({"exec": "a"}, {"exec": "b"}, {"exec": {"command": "b"}}),
        (
            {"exec": {"command": "a", "retries": 2}},
            {"exec": "b"},
            {"exec": {"command": "b", "retries": 2}},
        ),
        ({"exec": "a"}, {"exec": {"timeout": 5}}, {"exec": {"command": "a", "timeout": 5}}),
        ({"dependsOn": ["^build"]}, {"dependsOn": []}, {"dependsOn": []}),
        (
            {"cache": {"inputs": {"files": ["src/**"], "env": ["A"]}}},
            {"cache": {"inputs": {"files": ["lib/**"]}}},
            {"cache": {"inputs": {"files": ["lib/**"], "env": ["A"]}}},
        ),
    ],
)
def test_merge_rule(base: object, over: object, merged: object) -> None:
    assert merge_task(base, over) == merged
