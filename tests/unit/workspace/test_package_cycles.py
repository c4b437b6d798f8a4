"""A uv root with a `[project]` is a named member; test-only edges give way to break cycles."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vx.errors import CycleError
from vx.graph.build import build_graph
from vx.graph.select import selection_edges
from vx.ids import TaskId
from vx.loader.assemble import load_workspace

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Make = Callable[..., Path]

ROOT = (
    '[project]\nname = "Core_Lib"\nversion = "1.0"\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
)
BUILD = '{"tasks": {"build": {"exec": "true", "dependsOn": ["^build"]}}}'


def member(name: str, deps: str = "", extra: str = "") -> str:
    return f'[project]\nname = "{name}"\ndependencies = [{deps}]\n{extra}'


def test_the_uv_root_is_a_member_named_by_its_project(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": ROOT,
            "packages/app/pyproject.toml": member("app", '"core-lib"'),
            "packages/cli/pyproject.toml": member("cli", '"core_lib>=1"'),
        }
    )
    ws = load_workspace(root / "packages" / "app")
    assert ws.names() == ("Core_Lib", "app", "cli")
    core = ws.root_project
    assert core is not None
    assert (core.name, core.rel_dir, core.manifest) == (
        "Core_Lib",
        ".",
        "pyproject.toml",
    )
    assert dict(ws.package_deps) == {"Core_Lib": (), "app": ("Core_Lib",), "cli": ("Core_Lib",)}
    graph = build_graph(ws, [TaskId("app", "build")])
    assert graph.deps[TaskId("app", "build")] == (TaskId("Core_Lib", "build"),)


def test_a_root_without_a_project_table_stays_nameless(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/app/pyproject.toml": member("app"),
        }
    )
    ws = load_workspace(root)
    assert (ws.names(), ws.root_project) == (("app",), None)


def test_a_dependency_group_closing_a_cycle_selects_but_does_not_order(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/a/pyproject.toml": member("a", "", '[dependency-groups]\ntest = ["b"]\n'),
            "packages/a/vx.config.json": BUILD,
            "packages/b/pyproject.toml": member("b", '"a"'),
            "packages/b/vx.config.json": BUILD,
        }
    )
    ws = load_workspace(root)
    assert dict(ws.package_deps) == {"a": ("b",), "b": ("a",)}
    assert dict(ws.selection_only) == {"a": ("b",)}
    graph = build_graph(ws, [TaskId("a", "build"), TaskId("b", "build")])
    assert graph.deps[TaskId("a", "build")] == ()
    assert graph.deps[TaskId("b", "build")] == (TaskId("a", "build"),)
    assert selection_edges(ws)["a"] == ("b",)


def test_a_weak_edge_gives_way_only_in_the_task_it_would_loop_back_to(workspace: Make) -> None:
    tasks = '{"tasks": {"build": {"dependsOn": ["^build"]}, "test": {"dependsOn": ["^build"]}}}'
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/a/pyproject.toml": member("a", "", '[dependency-groups]\ntest = ["b"]\n'),
            "packages/a/vx.config.json": tasks,
            "packages/b/pyproject.toml": member("b", '"a"'),
            "packages/b/vx.config.json": tasks,
        }
    )
    ws = load_workspace(root)
    graph = build_graph(ws, [TaskId("a", "test")])
    # a#test needs b built, and b#build needs a#build: no loop, since a#test is not a#build.
    assert dict(graph.deps) == {
        TaskId("a", "test"): (TaskId("b", "build"),),
        TaskId("b", "build"): (TaskId("a", "build"),),
        TaskId("a", "build"): (),
    }
    both = build_graph(ws, [TaskId("a", "build"), TaskId("b", "test")])
    assert both.deps[TaskId("a", "build")] == ()
    assert both.deps[TaskId("b", "test")] == (TaskId("a", "build"),)


def test_a_weak_edge_to_a_package_without_config_gives_way_the_same(workspace: Make) -> None:
    tasks = '{"tasks": {"build": {"dependsOn": ["^build"]}, "test": {"dependsOn": ["^build"]}}}'
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/a/pyproject.toml": member("a", "", '[dependency-groups]\ntest = ["m"]\n'),
            "packages/a/vx.config.json": tasks,
            "packages/m/pyproject.toml": member("m", '"b"'),
            "packages/b/pyproject.toml": member("b", '"a"'),
            "packages/b/vx.config.json": tasks,
        }
    )
    ws = load_workspace(root)
    assert dict(ws.selection_only) == {"a": ("m",)}
    graph = build_graph(ws, [TaskId("a", "test"), TaskId("a", "build")])
    assert graph.deps[TaskId("a", "test")] == (TaskId("m", "build"),)
    assert graph.deps[TaskId("a", "build")] == ()


def test_js_dev_and_peer_entries_give_way_too(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": {
                "name": "a",
                "version": "1.0.0",
                "devDependencies": {"b": "*"},
            },
            "packages/b/package.json": {
                "name": "b",
                "version": "1.0.0",
                "dependencies": {"c": "*"},
            },
            "packages/c/package.json": {
                "name": "c",
                "version": "1.0.0",
                "peerDependencies": {"a": "*"},
            },
        }
    )
    ws = load_workspace(root)
    # a→b (dev) is taken back first and kept; c→a (peer) is the one that would close the loop.
    assert dict(ws.selection_only) == {"c": ("a",)}


def test_a_runtime_cycle_names_the_manifest_entries(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/a/pyproject.toml": member("a", '"b"', '[dependency-groups]\ndev = ["b"]\n'),
            "packages/a/vx.config.json": BUILD,
            "packages/b/pyproject.toml": member("b", '"a"'),
        }
    )
    ws = load_workspace(root)
    assert dict(ws.selection_only) == {}
    with pytest.raises(CycleError) as info:
        build_graph(ws, [TaskId("a", "build")])
    message = info.value.message
    assert message.startswith("task graph has a cycle: a#build → b#build → a#build — ")
    assert (
        "packages/a/pyproject.toml lists b in [project] dependencies and [dependency-groups] dev;"
        " packages/b/pyproject.toml lists a in [project] dependencies;" in message
    )
    assert "dependsOn" not in message
