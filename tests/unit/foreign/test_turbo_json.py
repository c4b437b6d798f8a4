"""turbo.json read live: which definition a package gets, field merging, commands, groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import write_tree

from vx.errors import ConfigError
from vx.foreign.driver import LiveProject, Warnings
from vx.foreign.tasks import prune_dangling
from vx.foreign.turbo_json import read_turbo
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from pathlib import Path


def read(
    root: Path, files: dict[str, Any], scripts: dict[str, dict[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    write_tree(root, files)
    projects = [
        LiveProject(name, "." if name == "//" else f"packages/{name}", table, name == "//")
        for name, table in scripts.items()
    ]
    found = read_turbo(root, projects, Manager.PNPM)
    return {n: p.raw["tasks"] for n, p in found.projects.items()}, found.warnings


def test_pkg_task_key_replaces_the_task_and_root_keys_stay_at_the_root(tmp_path: Path) -> None:
    turbo = {
        "tasks": {
            "a#build": {"outputs": ["lib/**"]},
            "build": {"dependsOn": ["^build"], "outputs": ["dist/**"]},
            "//#check": {},
        }
    }
    tasks, _ = read(
        tmp_path,
        {"turbo.json": turbo},
        {"a": {"build": "tsc"}, "b": {"build": "tsc"}, "//": {"build": "x", "check": "y"}},
    )
    assert tasks["a"]["build"] == {
        "exec": {"command": "tsc"},
        "cache": {"outputs": {"files": ["lib/**"]}},
    }
    assert tasks["b"]["build"]["dependsOn"] == ["^build"]
    assert list(tasks["//"]) == ["check"]  # a plain task never applies to the root


def test_a_package_turbo_json_overrides_field_by_field(tmp_path: Path) -> None:
    files = {
        "turbo.json": {
            "tasks": {"test": {"dependsOn": ["build"], "inputs": ["src/**"], "env": ["A"]}}
        },
        "packages/a/turbo.json": {
            "extends": ["//"],
            "tasks": {"test": {"inputs": ["$TURBO_EXTENDS$", "fixtures/**"], "env": ["B"]}},
        },
    }
    tasks, warnings = read(tmp_path, files, {"a": {"test": "vitest"}})
    assert tasks["a"]["test"] == {
        "dependsOn": ["build"],
        "exec": {"command": "vitest"},
        "cache": {"inputs": {"files": ["src/**", "fixtures/**"], "env": ["B"]}},
    }
    assert warnings == []


@pytest.mark.parametrize(
    ("scripts", "command"),
    [
        ({"build": "tsc -b"}, "tsc -b"),
        ({"build": "tsc -b", "prebuild": "rm -rf dist"}, "pnpm run build"),
        ({"build": "echo $npm_package_version"}, "pnpm run build"),
    ],
)
def test_the_command_is_the_script_unless_the_manager_must_run_it(
    tmp_path: Path, scripts: dict[str, str], command: str
) -> None:
    tasks, _ = read(tmp_path, {"turbo.json": {"tasks": {"build": {}}}}, {"a": scripts})
    assert tasks["a"]["build"]["exec"]["command"] == command


def test_a_task_without_a_script_is_a_group_and_dangling_groups_go(tmp_path: Path) -> None:
    turbo = {
        "tasks": {
            "build": {"dependsOn": ["^build", "codegen"]},
            "codegen": {},
            "lint": {"dependsOn": ["prep"]},
            "prep": {},
        }
    }
    tasks, _ = read(tmp_path, {"turbo.json": turbo}, {"a": {}, "b": {"codegen": "gen"}})
    assert tasks["a"] == {
        "build": {"dependsOn": ["^build", "codegen"]},
        "lint": {"dependsOn": ["prep"]},
    }
    warnings = Warnings()
    prune_dangling(tasks, warnings, {})
    assert tasks["a"] == {"build": {"dependsOn": ["^build"]}}  # codegen and prep reach nothing
    assert tasks["b"]["build"] == {"dependsOn": ["^build", "codegen"]}
    assert warnings.render() == []


def test_fields_vx_cannot_honour_are_one_warning_each(tmp_path: Path) -> None:
    turbo = {
        "ui": "tui",
        "tasks": {
            "build": {"outputLogs": "new-only", "env": ["NEXT_PUBLIC_*"]},
            "test": {"outputLogs": "errors-only"},
        },
    }
    _, warnings = read(tmp_path, {"turbo.json": turbo}, {"a": {"build": "x"}, "b": {"build": "y"}})
    assert warnings == [
        (
            'turbo.json: "ui" is not honoured by vx — vx frames each task\'s output; --output-logs'
            " sets how much"
        ),
        (
            'turbo.json: "outputLogs" (at tasks.build, tasks.test) is not honoured by vx — set it'
            " per run with --output-logs"
        ),
        (
            'turbo.json: env entry "NEXT_PUBLIC_*" (at tasks.build) is not honoured by vx — vx reads'
            " variables by exact name: list each one"
        ),
    ]


def test_a_package_turbo_json_may_not_name_other_packages(tmp_path: Path) -> None:
    files = {
        "turbo.json": {"tasks": {}},
        "packages/a/turbo.json": {"extends": ["//"], "tasks": {"b#build": {}}},
    }
    with pytest.raises(ConfigError) as caught:
        read(tmp_path, files, {"a": {}})
    assert caught.value.message == (
        "packages/a/turbo.json: b#build: a package's turbo.json names its own tasks, without pkg#"
    )


def test_a_plain_task_skips_the_root_even_when_it_is_the_only_package_read(
    tmp_path: Path,
) -> None:
    """Every member has a vx.config of its own: the root alone is read, and is still no package."""
    tasks, _ = read(tmp_path, {"turbo.json": {"tasks": {"build": {}}}}, {"//": {"build": "x"}})
    assert tasks["//"] == {}
