"""`vx show`: every form, pretty and JSON (held to schemas/show.json), and every refusal's words."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
SHOW = json.loads((SCHEMAS / "show.json").read_text())
ERROR = json.loads((SCHEMAS / "error.json").read_text())

APP = {
    "tags": ["scope:web", "type:app"],
    "tasks": {
        "build": {
            "description": "compile the app",
            "dependsOn": ["^build"],
            "exec": "tsc -b",
            "cache": {
                "inputs": {"files": ["src/**"], "env": ["NODE_ENV"]},
                "outputs": {"files": ["dist/**"]},
            },
        },
        "test": {
            "dependsOn": ["build"],
            "exec": {
                "command": "vitest run\necho done",
                "timeout": 60000,
                "retries": 2,
                "env": {
                    "passThrough": ["CI"],
                    "define": {"NODE_ENV": "test", "A": "1"},
                    "secret": ["NPM_TOKEN"],
                },
            },
            "cache": {"inputs": {"tasks": []}},
        },
        "dev": {"exec": {"command": "vite", "persistent": True, "readyWhen": "ready in"}},
        "ci": {"dependsOn": ["build", "test"]},
    },
}

FILES = {
    "package.json": {"name": "mono", "private": True, "workspaces": ["packages/*"]},
    "vx.config.json": {"tasks": {"lint": {"exec": "eslint ."}}},
    "packages/app/package.json": {"name": "app", "dependencies": {"lib": "workspace:*"}},
    "packages/app/vx.config.json": APP,
    "packages/lib/package.json": {"name": "lib", "dependencies": {"util": "workspace:*"}},
    "packages/util/package.json": {"name": "util"},
    "packages/bare/package.json": {"name": "bare"},
    "packages/web/package.json": {"name": "@acme/web"},
    "packages/web/vx.config.json": {
        "tasks": {"test": {"exec": {"command": "jest", "interactive": True}}}
    },
}

LIST = """\
//         .              1 task
@acme/web  packages/web   1 task
app        packages/app   4 tasks                               [scope:web, type:app]
bare       packages/bare  (no vx config)
lib        packages/lib   1 task (no vx config; default build)
util       packages/util  1 task (no vx config; default build)
"""

APP_TEST = """\
test
  command:         vitest run
                   echo done
  dependsOn:       build
  timeout:         60000 ms
  retries:         2
  env.passThrough: CI
  env.define:      A=1, NODE_ENV=test
  env.secret:      NPM_TOKEN
  inputs.tasks:    (none)
"""


def env_block(*tasks: str) -> str:
    """What `vx show PROJECT` ends with: the names each task receives, never a value."""
    return (
        "\nenvironment each task receives (names; a value is never shown):\n"
        "  baseline:  PATH, HOME, USER, SHELL, TERM, LANG, LC_*, TMPDIR, TZ, CI\n"
        "  network:   SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS,\n"
        "             HTTP_PROXY, HTTPS_PROXY, NO_PROXY, ALL_PROXY (each in either case)\n"
        "  set by vx: VX_RUN_WORKSPACE, VX_RUN_TASK, FORCE_COLOR\n"
        + "".join(f"  {t}\n" for t in tasks)
    )


PRETTY = {
    "show": LIST,
    "show app": f"""\
app — packages/app
tags: scope:web, type:app

build
  description:   compile the app
  command:       tsc -b
  dependsOn:     ^build
  inputs.files:  src/**
  inputs.env:    NODE_ENV
  outputs.files: dist/**

ci
  command:   (group)
  dependsOn: build, test

dev
  command:    vite
  persistent: yes
  readyWhen:  ready in

{APP_TEST}{
        env_block("build: NODE_ENV", "dev: nothing more", "test: CI, NPM_TOKEN, NODE_ENV, A")
    }""",
    "show lib": """\
lib — packages/lib
no vx config: a run gives it the default build, for a dependant's ^build

build (default)
  command:   (group)
  dependsOn: ^build
  cache:     on: keyed on every file of the project, no outputs
""",
    "show bare": "bare — packages/bare\nno vx config, and no tasks\n",
    "show //": "// — .\n\nlint\n  command: eslint .\n" + env_block("lint: nothing more"),
    "show //#lint": "// — .\n\nlint\n  command: eslint .\n",
    "show app#test": f"app — packages/app\n\n{APP_TEST}",
    "show test": f"""\
@acme/web — packages/web

test
  command:     jest
  interactive: yes

app — packages/app

{APP_TEST}""",
    "show app#dev": "app — packages/app\n\ndev\n  command:    vite\n  persistent: yes\n  readyWhen:  ready in\n",
    "show @acme/web": "@acme/web — packages/web\n\ntest\n  command:     jest\n  interactive: yes\n"
    + env_block("test: nothing more"),
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    from conftest import make_git_workspace

    return make_git_workspace(tmp_path_factory.mktemp("show") / "ws", FILES)


@pytest.mark.parametrize("command", sorted(PRETTY))
def test_pretty(vx, ws, command):
    result = vx(command.split(), ws).assert_ok()
    assert (result.out, result.err) == (PRETTY[command], "")


def test_the_list_is_the_same_from_inside_a_project(vx, ws):
    assert vx(["show"], ws / "packages" / "app").assert_ok().out == LIST


@pytest.mark.parametrize(
    "command",
    [
        "show",
        "show app",
        "show lib",
        "show bare",
        "show //",
        "show app#test",
        "show test",
        "show lib#build",
    ],
)
def test_json_holds_to_the_schema(vx, ws, command):
    result = vx([*command.split(), "--format", "json"], ws).assert_ok()
    assert result.err == ""
    jsonschema.validate(result.json(), SHOW)


def test_json_list(vx, ws):
    doc = vx(["show", "--format=json"], ws).assert_ok().json()
    assert doc == [
        {"name": "//", "dir": ".", "tags": [], "tasks": ["lint"]},
        {"name": "@acme/web", "dir": "packages/web", "tags": [], "tasks": ["test"]},
        {
            "name": "app",
            "dir": "packages/app",
            "tags": ["scope:web", "type:app"],
            "tasks": ["build", "ci", "dev", "test"],
        },
        {"name": "bare", "dir": "packages/bare", "tags": [], "tasks": []},
        {"name": "lib", "dir": "packages/lib", "tags": [], "tasks": ["build"]},
        {"name": "util", "dir": "packages/util", "tags": [], "tasks": ["build"]},
    ]


def test_json_project_carries_each_task_as_resolved(vx, ws):
    doc = vx(["show", "app", "--format", "json"], ws).assert_ok().json()
    assert (doc["name"], doc["dir"], doc["config"]["tags"]) == (
        "app",
        "packages/app",
        ["scope:web", "type:app"],
    )
    assert sorted(doc["config"]["tasks"]) == ["build", "ci", "dev", "test"]
    assert doc["config"]["tasks"]["build"] == {
        "description": "compile the app",
        "dependsOn": ["^build"],
        "exec": {
            "command": "tsc -b",
            "env": {"passThrough": [], "define": {}, "secret": []},
            "timeout": None,
            "retries": None,
            "persistent": False,
            "readyWhen": None,
            "interactive": False,
        },
        "cache": {
            "inputs": {
                "files": ["src/**"],
                "workspaceFiles": [],
                "env": ["NODE_ENV"],
                "tasks": None,
                "runtime": [],
                "workspaceRuntime": [],
            },
            "outputs": {"files": ["dist/**"], "workspaceFiles": []},
        },
    }
    assert doc["config"]["tasks"]["ci"]["exec"] is None
    env = doc["env"]
    assert env["tasks"] == {
        "build": ["NODE_ENV"],
        "dev": [],
        "test": ["CI", "NPM_TOKEN", "NODE_ENV", "A"],
    }
    assert {"PATH", "SSL_CERT_FILE", "https_proxy"} <= set(env["baseline"])
    assert (env["workspace"], env["setByVx"]) == (
        [],
        ["VX_RUN_WORKSPACE", "VX_RUN_TASK", "FORCE_COLOR"],
    )


def test_json_one_task_and_a_task_everywhere(vx, ws):
    one = vx(["show", "app#test", "--format", "json"], ws).assert_ok().json()
    assert {k: one[k] for k in ("name", "dir", "task")} == {
        "name": "app",
        "dir": "packages/app",
        "task": "test",
    }
    assert one["config"]["exec"]["command"] == "vitest run\necho done"
    many = vx(["show", "test", "--format", "json"], ws).assert_ok().json()
    assert [(e["name"], e["task"]) for e in many] == [("@acme/web", "test"), ("app", "test")]
    assert many[1] == one


def test_json_of_a_project_without_config(vx, ws):
    doc = vx(["show", "bare", "--format", "json"], ws).assert_ok().json()
    assert doc.pop("env")["tasks"] == {}
    assert doc == {"name": "bare", "dir": "packages/bare", "config": {"tags": [], "tasks": {}}}
    lib = vx(["show", "lib", "--format", "json"], ws).assert_ok().json()
    assert list(lib["config"]["tasks"]) == ["build"]
    assert lib["config"]["tasks"]["build"]["dependsOn"] == ["^build"]


REFUSALS = [
    (
        "show buidl",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project or task: "buidl" — did you mean build?',
    ),
    ("show ap", "VX_E_UNKNOWN_PROJECT", 'unknown project or task: "ap" — did you mean app?'),
    (
        "show web",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project or task: "web" — did you mean @acme/web?',
    ),
    (
        "show zzz",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project or task: "zzz"; projects and tasks: //, @acme/web, app, bare, lib, util, build, ci and 3 more',
    ),
    ("show app#bui", "VX_E_UNKNOWN_TASK", 'unknown task: "app#bui" — did you mean app#build?'),
    ("show //#lnt", "VX_E_UNKNOWN_TASK", 'unknown task: "//#lnt" — did you mean //#lint?'),
    (
        "show app#zzz",
        "VX_E_UNKNOWN_TASK",
        'unknown task: "app#zzz"; its tasks: app#build, app#ci, app#dev, app#test',
    ),
    ("show bare#build", "VX_E_UNKNOWN_TASK", 'unknown task: "bare#build"; bare has no tasks'),
    (
        "show zzz#build",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project: "zzz"; projects: //, @acme/web, app, bare, lib, util',
    ),
    (
        "show web#test",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project: "web" — did you mean @acme/web#test?',
    ),
    (
        "show app#",
        "VX_E_USAGE",
        '"app#" is not a task of a project: write PROJECT#TASK, e.g. app#build',
    ),
    (
        "show projects",
        "VX_E_UNKNOWN_PROJECT",
        'unknown project or task: "projects" — vx show alone lists every project',
    ),
    ("show project app", "VX_E_USAGE", "vx show takes the project's name alone: vx show app"),
    ("show app lib", "VX_E_USAGE", "vx show takes one target, got 2: app lib — see vx show --help"),
    ("show --formt json", "VX_E_USAGE", "unknown flag: --formt (did you mean --format?)"),
    ("show --json", "VX_E_USAGE", "unknown flag: --json (did you mean --format json?)"),
    (
        "show --filter=",
        "VX_E_USAGE",
        (
            "--filter= is empty: --filter needs a value: --filter <pattern> or --filter=<pattern>"
            " — see vx show --help"
        ),
    ),
]


@pytest.mark.parametrize(("command", "code", "message"), REFUSALS)
def test_refusals(vx, ws, command, code, message):
    result = vx(command.split(), ws).assert_code(1)
    assert (result.out, result.err) == ("", message + "\n")
    as_json = vx([*command.split(), "--format", "json"], ws).assert_code(1)
    assert as_json.err == message + "\n"
    doc = as_json.json()
    jsonschema.validate(doc, ERROR)
    # A flag table's refusal carries its pointer to --help as the hint, apart in the JSON.
    reason, dash, hint = message.rpartition(" — ")
    error = (
        {"code": code, "message": reason, "hint": hint}
        if dash and hint.startswith("see vx ")
        else {"code": code, "message": message}
    )
    assert doc == {"ok": False, "error": error}


def test_an_empty_target_is_refused(vx, ws):
    result = vx(["show", ""], ws).assert_code(1)
    assert result.err == "vx show: the target is empty — omit it to list every project\n"


def test_the_default_build_is_no_declared_task(vx, workspace):
    """Only a default build answers to `build`: `vx show build` names no task."""
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/app/package.json": {"name": "app", "dependencies": {"lib": "workspace:*"}},
            "p/app/vx.config.json": {"tasks": {"test": {"exec": "t", "dependsOn": ["^build"]}}},
            "p/lib/package.json": {"name": "lib"},
        }
    )
    assert vx(["show"], root).assert_ok().out == (
        "app  p/app  1 task\nlib  p/lib  1 task (no vx config; default build)\n"
    )
    result = vx(["show", "build"], root).assert_code(1)
    assert result.err == 'unknown project or task: "build"; projects and tasks: app, lib, test\n'
    assert (
        vx(["show", "lib#build"], root)
        .assert_ok()
        .out.startswith("lib — p/lib\n\nbuild (default)\n")
    )


def test_a_configured_project_reached_for_its_build_gets_the_default(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/app/package.json": {"name": "app", "dependencies": {"lib": "workspace:*"}},
            "p/app/vx.config.json": {"tasks": {"build": {"exec": "b", "dependsOn": ["^build"]}}},
            "p/lib/package.json": {"name": "lib"},
            "p/lib/vx.config.json": {"tags": ["core"], "tasks": {"lint": {"exec": "l"}}},
        }
    )
    assert vx(["show"], root).assert_ok().out == (
        "app  p/app  1 task\nlib  p/lib  2 tasks (with the default build)  [core]\n"
    )


def test_a_single_package_repo_is_one_project(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {"tasks": {"build": {"exec": "make"}}},
        }
    )
    assert vx(["show"], root).assert_ok().out == "solo  .  1 task\n"
    assert vx(["show", "//#build"], root).assert_ok().out == "solo — .\n\nbuild\n  command: make\n"


def test_a_workspace_without_a_root_project_refuses_slash_slash(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a"},
        }
    )
    result = vx(["show", "//"], root).assert_code(1)
    assert (
        result.err
        == 'unknown project: "//" — this workspace\'s root is not a project; projects: a\n'
    )


def test_notes_go_to_stderr_and_leave_the_json_whole(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a"},
            "p/nameless/package.json": {"private": True},
        }
    )
    result = vx(["show", "--format", "json"], root).assert_ok()
    assert result.json() == [{"name": "a", "dir": "p/a", "tags": [], "tasks": []}]
    assert result.err == 'note: p/nameless/package.json has no "name"; skipped\n'


def test_a_config_error_is_one_line(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a"},
            "p/a/vx.config.json": {"tasks": {"b": {"exec": "x", "dependOn": []}}},
        }
    )
    result = vx(["show", "--format", "json"], root).assert_code(1)
    assert len(result.err.splitlines()) == 1
    assert result.err.startswith("p/a/vx.config.json: ")
    assert result.json()["error"]["code"] == "VX_E_CONFIG"


def test_a_broken_graph_still_lists_what_it_can(vx, workspace):
    """A cycle is `vx run`'s to refuse; `vx show` still shows what the sound tasks reach."""
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/app/package.json": {"name": "app", "dependencies": {"lib": "workspace:*"}},
            "p/app/vx.config.json": {
                "tasks": {
                    "build": {"exec": "b", "dependsOn": ["^build"]},
                    "x": {"exec": "x", "dependsOn": ["y"]},
                    "y": {"exec": "y", "dependsOn": ["x"]},
                }
            },
            "p/lib/package.json": {"name": "lib"},
        }
    )
    assert vx(["show"], root).assert_ok().out == (
        "app  p/app  3 tasks\nlib  p/lib  1 task (no vx config; default build)\n"
    )
