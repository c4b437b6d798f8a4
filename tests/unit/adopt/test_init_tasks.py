"""One package's scripts → tasks: hooks, groups, the build chain, npm variables, Yarn Berry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vx.adopt.init_tasks import (
    CACHE_REASON,
    HOOKS_REASON,
    OWN_REASON,
    READY_REASON,
    TaskDraft,
    draft_package,
    valid_task_name,
)
from vx.workspace.model import Manager
from vx.workspace.script_host import ScriptHost, detect_host

if TYPE_CHECKING:
    from pathlib import Path

NPM = ScriptHost("npm")
BERRY = ScriptHost("yarn", berry=True, pnp=False, hooks=False)
PNP = ScriptHost("yarn", berry=True, pnp=True, hooks=False)


def tasks(scripts: dict[str, str], host: ScriptHost = NPM, **manifest: Any) -> dict[str, TaskDraft]:
    return {t.name: t for t in draft_package(scripts, host, manifest).tasks}


def test_hooks_fold_in_order_and_are_not_tasks() -> None:
    got = tasks({"prebuild": "a", "build": "b", "postbuild": "c", "pretty": "d"})
    assert list(got) == ["build", "pretty"]  # `pretty` is no hook: there is no `tty`
    assert got["build"].command == (
        'vx_script() { (set --; a) && (b "$@") && (set --; c); }; vx_script'
    )
    assert [t.reason for t in got["build"].todos] == [CACHE_REASON, HOOKS_REASON]


def test_a_pre_script_without_its_script_is_a_task() -> None:
    assert tasks({"prelint": "x"})["prelint"].command == "x"


def test_lifecycle_scripts_are_never_tasks_nor_hooks() -> None:
    got = tasks({"prepare": "husky", "preinstall": "x", "install": "y", "prepack": "tsc"})
    assert got == {}


@pytest.mark.parametrize("host", [BERRY, ScriptHost("npm", hooks=False)])
def test_no_folding_where_the_manager_runs_no_hooks(host: ScriptHost) -> None:
    got = tasks({"prebuild": "a", "build": "b"}, host)
    assert list(got) == ["prebuild", "build"]
    assert got["build"].command == "b"


def test_a_delegating_build_is_a_group_and_its_target_takes_the_edge() -> None:
    got = tasks(
        {"build": "npm run compile", "compile": "pnpm bundle", "bundle": "tsc", "test": "x"}
    )
    assert got["build"] == TaskDraft("build", ("compile",))
    assert got["compile"].command is None
    assert got["compile"].depends_on == ("bundle",)
    assert got["bundle"].depends_on == ("^build",)
    assert got["bundle"].outputs == ("dist/**",)
    assert got["test"].depends_on == ("build",)


def test_a_delegate_to_a_folded_hook_stays_a_command() -> None:
    got = tasks({"prebuild": "a", "build": "b", "go": "npm run prebuild"})
    assert got["go"].command == "npm run prebuild"


def test_a_chain_of_own_scripts_gets_a_todo() -> None:
    got = tasks({"check": "npm run lint && npm test", "lint": "x", "test": "y"})
    assert got["check"].todos[0].reason == OWN_REASON
    assert got["check"].todos[0].detail == "lint, test"


def test_a_runner_of_servers_is_persistent_without_a_todo() -> None:
    got = tasks({"web": "vite", "api": "nodemon api.js", "dev": "run-p web api"})
    assert all(t.persistent for t in got.values())
    assert got["dev"].todos == ()


def test_a_test_runner_that_starts_a_server_is_not_persistent() -> None:
    got = tasks(
        {
            "start": "next start",
            "cy": "cypress run",
            "e2e": "start-server-and-test start http://localhost:3000 cy",
        }
    )
    assert got["start"].persistent
    assert not got["e2e"].persistent


def test_a_server_a_command_waits_on_gets_a_ready_todo() -> None:
    got = tasks({"build": "tsc -w", "test": "node --test"})
    assert got["test"].depends_on == ("build",)
    assert got["build"].persistent
    assert got["build"].todos[-1].reason == READY_REASON
    # a group over a server waits on nothing
    assert tasks({"start": "node server.js", "e2e": "npm start"})["start"].todos == ()


def test_npm_variables_are_defined() -> None:
    got = tasks({"v": "echo $npm_package_version $npm_lifecycle_event"}, version="2.0.0")
    assert got["v"].define == (
        ("npm_package_version", "2.0.0", "version"),
        ("npm_lifecycle_event", "v", None),
    )


def test_berry_writes_run_as_yarn_run_and_pnp_runs_the_script_through_yarn() -> None:
    assert tasks({"a": "tsc && run b", "b": "x"}, BERRY)["a"].command == "tsc && yarn run b"
    pnp = tasks({"a": "tsc && run b", "b": "x"}, PNP)["a"]
    assert pnp.command == "yarn run a"
    assert pnp.todos[-1].detail == "the script runs: tsc && run b"


@pytest.mark.parametrize(
    ("name", "ok"), [("build", True), ("lint#fix", False), ("^up", False), ("a b", False)]
)
def test_valid_task_name(name: str, *, ok: bool) -> None:
    assert valid_task_name(name) is ok


def test_an_invalid_name_is_skipped_with_a_reason() -> None:
    draft = draft_package({"lint#fix": "x", "build": "y"}, NPM, {})
    assert [t.name for t in draft.tasks] == ["build"]
    assert [s.script for s in draft.skipped] == ["lint#fix"]


def test_a_builder_in_prepack_is_named_when_there_is_no_build() -> None:
    assert draft_package({"prepack": "bob build", "test": "x"}, NPM, {}).builder_hook == "prepack"


@pytest.mark.parametrize(
    ("files", "manifest", "manager", "host"),
    [
        ({}, {}, Manager.NPM, NPM),
        ({".npmrc": "ignore-scripts=true\n"}, {}, Manager.NPM, ScriptHost("npm", hooks=False)),
        ({}, {}, Manager.PNPM, ScriptHost("pnpm")),
        (
            {"pnpm-workspace.yaml": "packages: []\nenablePrePostScripts: false\n"},
            {},
            Manager.PNPM,
            ScriptHost("pnpm", hooks=False),
        ),
        ({"yarn.lock": "# yarn lockfile v1\n"}, {}, Manager.YARN, ScriptHost("yarn")),
        ({"yarn.lock": "__metadata:\n  version: 8\n"}, {}, Manager.YARN, PNP),
        (
            {".yarnrc.yml": "nodeLinker: node-modules\n"},
            {"packageManager": "yarn@4.1.0"},
            Manager.YARN,
            BERRY,
        ),
        ({}, {"packageManager": "yarn@1.22.0"}, Manager.YARN, ScriptHost("yarn")),
        ({"bun.lock": ""}, {}, Manager.BUN, ScriptHost("bun")),
        ({"pnpm-lock.yaml": ""}, {"packageManager": "deno@2"}, Manager.SINGLE, ScriptHost("pnpm")),
    ],
)
def test_detect_host(
    tmp_path: Path,
    files: dict[str, str],
    manifest: dict[str, Any],
    manager: Manager,
    host: ScriptHost,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert detect_host(tmp_path, manager, manifest) == host
