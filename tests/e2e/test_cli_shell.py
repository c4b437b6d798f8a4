"""The CLI shell end to end: verbs, help, version, refusals, JSON error documents, exit codes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import VX, base_env, make_git_workspace

ERROR = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "error.json").read_text())

FILES = {
    "package.json": {"name": "mono", "private": True, "workspaces": ["packages/*"]},
    "packages/app/package.json": {"name": "app", "dependencies": {"lib": "workspace:*"}},
    "packages/app/vx.config.json": {
        "tasks": {
            "build": {"exec": "tsc -b", "dependsOn": ["^build"]},
            "test": {"exec": "vitest"},
            "shoe": {"exec": "true"},
        }
    },
    "packages/lib/package.json": {"name": "lib"},
    "packages/lib/vx.config.json": {"tasks": {"test": {"exec": "vitest"}}},
    "packages/cart/package.json": {"name": "@acme/cart"},
    "packages/cart/vx.config.json": {"tasks": {"build": {"exec": "tsc -b"}}},
    "packages/bare/package.json": {"name": "bare"},
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    return make_git_workspace(tmp_path_factory.mktemp("shell") / "ws", FILES)


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("nowhere")


def refused(vx, args, cwd, message, code="VX_E_UNKNOWN_COMMAND"):
    result = vx(args, cwd).assert_code(1)
    assert (result.out, result.err) == ("", message + "\n")
    as_json = vx([*args, "--format=json"], cwd).assert_code(1)
    doc = as_json.json()
    jsonschema.validate(doc, ERROR)
    assert doc["error"] == {"code": code, "message": as_json.err.rstrip("\n")}


# --- version ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--version"], ["version"]])
def test_version(vx, outside, args):
    result = vx(args, outside).assert_ok()
    assert (result.out, result.err) == ("vx 0.1.0\n", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["version", "--hlp"], "unknown flag: --hlp (did you mean --help?)"),
        (["version", "x"], "vx version takes no arguments, got: x — see vx version --help"),
        (["version", "--all"], "unknown flag: --all — see vx version --help"),
        (["-V"], "unknown flag: -V (did you mean --version?)"),
        (["--version", "x"], "vx --version takes nothing after it, got: x"),
        (["--verison"], "unknown flag: --verison (did you mean --version?)"),
        (["--foo"], "unknown flag: --foo — flags go after the verb (vx help lists the verbs)"),
    ],
)
def test_usage_refusals(vx, outside, args, message):
    result = vx(args, outside).assert_code(1)
    assert (result.out, result.err) == ("", message + "\n")


# --- help ------------------------------------------------------------------------------------


def test_every_spelling_of_the_overview_prints_the_same(vx, ws):
    pages = {tuple(a): vx(a, ws).assert_ok().out for a in ([], ["help"], ["--help"], ["-h"])}
    assert len(set(pages.values())) == 1
    page = pages[()]
    assert page.startswith("vx 0.1.0 — ")
    assert "\nUsage:\n" in page
    assert (
        "\n  vx show [PROJECT[#TASK] | TASK] [--filter <pattern>] [--affected[=<base>]]"
        " [--format pretty|json]\n" in page
    )
    assert "\n  vx help [VERB]\n" in page
    assert "\n  vx version\n" in page


def test_the_overview_prints_anywhere_but_bare_vx_wants_a_workspace(vx, outside):
    assert vx(["help"], outside).assert_ok().out.startswith("vx 0.1.0 — ")
    result = vx([], outside).assert_code(1)
    assert result.out == ""
    assert result.err == (
        "not in a workspace: no package.json, pnpm-workspace.yaml or pyproject.toml at or above "
        f"{outside} — vx help prints the help anywhere\n"
    )


@pytest.mark.parametrize("verb", ["show", "version", "help"])
def test_every_spelling_of_a_verb_page_prints_the_same(vx, ws, verb):
    forms = [["help", verb], [verb, "--help"], [verb, "-h"], [verb, "--bogus", "--help"]]
    pages = {vx(a, ws).assert_ok().out for a in forms}
    assert len(pages) == 1
    page = pages.pop()
    assert page.startswith(f"Usage:\n  vx {verb}")
    assert page.endswith("\nFull reference: vx help\n")


def test_the_show_page(vx, ws):
    page = vx(["show", "--help"], ws).assert_ok().out
    assert page.startswith(
        "Usage:\n  vx show [PROJECT[#TASK] | TASK] [--filter <pattern>] [--affected[=<base>]]"
        " [--format pretty|json]\n\n"
    )
    assert "\nFlags:\n  --filter <pattern>    " in page
    assert "\n  --format pretty|json  " in page
    assert "\n  -h, --help            print this help\n" in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["help", "zzz"], 'unknown command: "zzz"; commands: '),
        (["help", "ls"], 'unknown command: "ls" — vx show lists every project'),
        (["help", "build"], 'unknown command: "build" — to run the task, use vx run build --all'),
        (["help", "shwo"], 'unknown command: "shwo" — did you mean show?'),
    ],
)
def test_help_for_no_verb_is_refused_as_the_verb_would_be(vx, ws, args, message):
    result = vx(args, ws).assert_code(1)
    assert result.err.startswith(message)
    assert result.err == vx(args[1:], ws).err
    assert (
        vx(["help", "show", "version"], ws)
        .assert_code(1)
        .err.startswith("vx help takes one verb, got 2: show version")
    )


def run_on_tty(args, cwd, env=None) -> str:
    """Run vx with stdout on a pseudo-terminal; what it wrote, with the tty's CRLF undone."""
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, str(VX), *args],
            cwd=cwd,
            env=base_env(env),
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
            check=True,
            timeout=60,
        )
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_help_is_painted_on_a_terminal(ws):
    page = run_on_tty(["show", "--help"], ws)
    assert page.startswith(
        "\x1b[1mUsage:\x1b[0m\n  \x1b[36mvx show\x1b[0m [PROJECT[#TASK] | TASK] ["
    )
    assert "\x1b[36m--format\x1b[0m" in page
    assert "\x1b[1mFlags:\x1b[0m" in page
    assert "\x1b[36mvx show app#build\x1b[0m" not in page
    assert "  \x1b[36mvx show\x1b[0m app#build" in page


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"FORCE_COLOR": "0"}, {"FORCE_COLOR": "false"}])
def test_the_environment_turns_the_paint_off(vx, ws, env):
    assert run_on_tty(["help"], ws, env) == vx(["help"], ws).out


@pytest.mark.parametrize("env", [{"FORCE_COLOR": "1"}, {"NO_COLOR": ""}])
def test_off_a_terminal_help_is_plain_whatever_the_environment(vx, ws, env):
    assert "\x1b" not in vx(["help"], ws, env=env).assert_ok().out


# --- unknown verbs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["shwo"], 'unknown command: "shwo" — did you mean show?'),
        (["rnu"], 'unknown command: "rnu" — did you mean run?'),
        (["shew"], 'unknown command: "shew" — did you mean show?'),
        (["build"], 'unknown command: "build" — to run the task, use vx run build --all'),
        (["test"], 'unknown command: "test" — to run the task, use vx run test --all'),
        (
            ["build", "app"],
            'unknown command: "build" — to run the task, use vx run app#build',
        ),
        (
            ["build", "app", "cart"],
            'unknown command: "build" — to run the task, use vx run app#build @acme/cart#build',
        ),
        (
            ["build", "--force"],
            'unknown command: "build" — to run the task, use vx run build --all --force',
        ),
        (
            ["build", "app", "-F", "x"],
            'unknown command: "build" — to run the task, use vx run app#build -F x',
        ),
        (["app#build"], 'unknown command: "app#build" — to run the task, use vx run app#build'),
        (
            ["biuld"],
            'unknown command: "biuld" — did you mean the task build? To run it, use vx run build --all',
        ),
        (
            ["bare#build"],
            'unknown command: "bare#build"; commands: run, watch, show, info, cache, last, why, audit and 11 more (vx help describes them)',
        ),
    ],
)
def test_unknown_commands_at_the_root(vx, ws, args, message):
    refused(vx, args, ws, message)


@pytest.mark.parametrize(
    ("where", "args", "message"),
    [
        ("packages/app", ["build"], 'unknown command: "build" — to run the task, use vx run build'),
        (
            "packages/app/src",
            ["test"],
            'unknown command: "test" — to run the task, use vx run test',
        ),
        (
            "packages/lib",
            ["build"],
            'unknown command: "build" — to run the task, use vx run build --all',
        ),
        (
            "packages/bare",
            ["tset"],
            'unknown command: "tset" — did you mean the task test? To run it, use vx run test --all',
        ),
    ],
)
def test_unknown_commands_inside_a_project(vx, ws, where, args, message):
    cwd = ws / where
    cwd.mkdir(parents=True, exist_ok=True)
    refused(vx, args, cwd, message)


def test_outside_a_workspace_a_word_is_only_checked_against_the_verbs(vx, outside):
    refused(
        vx,
        ["build"],
        outside,
        'unknown command: "build"; commands: run, watch, show, info, cache, last, why, audit and 11 more (vx help describes them)',
    )
    refused(vx, ["shw"], outside, 'unknown command: "shw" — did you mean show?')


def test_a_default_build_is_no_task_to_hint(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a", "dependencies": {"b": "workspace:*"}},
            "p/a/vx.config.json": {"tasks": {"test": {"exec": "t", "dependsOn": ["^build"]}}},
            "p/b/package.json": {"name": "b"},
        }
    )
    refused(
        vx,
        ["build"],
        root,
        'unknown command: "build"; commands: run, watch, show, info, cache, last, why, audit and 11 more (vx help describes them)',
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run-many"], "use vx run TASK --all"),
        (
            ["run-many", "-t", "build", "test", "-p", "app,lib"],
            "use vx run app#build app#test lib#build lib#test",
        ),
        (["affected", "--target=test"], "use vx run test --filter '...[main]'"),
        (
            ["graph"],
            (
                "use vx run TASK --graph[=<file>.dot] for the task graph as Graphviz DOT"
                " (vx show TASK prints each project's task with its dependsOn edges)"
            ),
        ),
        (
            ["query"],
            (
                "use vx run TASK --dry=json for the planned tasks as JSON"
                " (vx show --format json prints every project and its tasks)"
            ),
        ),
        (["ls"], "vx show lists every project"),
        (
            ["reset"],
            (
                "use vx cache prune --older-than <age> or --max-size <size> to evict cache"
                " entries; to wipe the cache, delete the cache store vx info names"
            ),
        ),
        (["daemon", "status"], "vx runs no daemon: drop it"),
        (
            ["login"],
            "vx has no account to log in to: the turbo remote-cache plugin reads TURBO_TOKEN (docs/plugins.md)",
        ),
        (["logout"], "vx has no account to log out of: drop it"),
        (
            ["link"],
            "a remote cache is a plugin named in vx.workspace.* (docs/plugins.md): nothing to link",
        ),
        (
            ["unlink"],
            "a remote cache is a plugin named in vx.workspace.*: remove it there to unlink",
        ),
    ],
)
def test_other_tools_verbs_are_answered_with_ours(vx, ws, args, message):
    refused(vx, args, ws, f'unknown command: "{args[0]}" — {message}')


# --- JSON error documents and exit codes ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["show", "--bogus", "--format=json"], "VX_E_USAGE"),
        (["show", "--format", "json", "--bogus"], "VX_E_USAGE"),
        (["show", "--dry=json"], "VX_E_USAGE"),
        (["zzz", "--format", "json"], "VX_E_UNKNOWN_COMMAND"),
        (["show", "nope", "--format", "json"], "VX_E_UNKNOWN_PROJECT"),
    ],
)
def test_a_refusal_asked_for_json_is_a_document_on_stdout_too(vx, ws, args, code):
    result = vx(args, ws).assert_code(1)
    doc = result.json()
    jsonschema.validate(doc, ERROR)
    assert doc["error"]["code"] == code
    hint = doc["error"].get("hint")
    line = doc["error"]["message"] + (f" — {hint}" if hint else "")
    assert result.err == line + "\n"
    assert "\n" not in result.out.rstrip("\n")


def test_a_hint_is_apart_in_json_and_after_the_message_on_the_terminal(vx, ws):
    result = vx(["show", "--bogus", "--format=json"], ws).assert_code(1)
    assert result.json() == {
        "ok": False,
        "error": {
            "code": "VX_E_USAGE",
            "message": "unknown flag: --bogus",
            "hint": "see vx show --help",
        },
    }
    assert result.err == "unknown flag: --bogus — see vx show --help\n"


def test_json_asked_for_after_dashdash_is_not_asked_for(vx, ws):
    result = vx(["show", "--", "--format", "json"], ws).assert_code(1)
    assert result.out == ""
    assert (
        result.err
        == "vx show forwards no arguments: drop the -- and what follows — see vx show --help\n"
    )


def test_every_error_code_is_in_the_schema():
    from vx.errors import ErrorCode

    enum = ERROR["properties"]["error"]["properties"]["code"]["enum"]
    assert enum == [str(c) for c in ErrorCode]


def test_ctrl_c_exits_130_without_a_stack(vx, workspace):
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a"},
            "p/a/vx.config.py": "raise KeyboardInterrupt\n",
        }
    )
    result = vx(["show"], root).assert_code(130)
    assert (result.out, result.err) == ("", "")


DEFECT = """\
import vx.graph.build

def broken(*args, **kwargs):
    raise RuntimeError("boom")

vx.graph.build.build_graph = broken
config = {"tasks": {"t": {"exec": "true"}}}
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_a_defect_prints_its_stack_and_an_internal_code(vx, workspace, as_json):
    """A config that breaks vx's own code stands in for a defect: the boundary must catch it."""
    root = workspace(
        {
            "package.json": {"name": "m", "workspaces": ["p/*"]},
            "p/a/package.json": {"name": "a"},
            "p/a/vx.config.py": DEFECT,
        }
    )
    result = vx(["show", *(["--format", "json"] if as_json else [])], root).assert_code(1)
    assert result.err.startswith("Traceback (most recent call last):\n")
    last = result.err.splitlines()[-1]
    assert last == (
        "VX_E_INTERNAL: vx hit a defect (RuntimeError: boom); please report it with the stack above"
    )
    if as_json:
        doc = result.json()
        jsonschema.validate(doc, ERROR)
        assert doc["error"] == {"code": "VX_E_INTERNAL", "message": last}
    else:
        assert result.out == ""


@pytest.mark.parametrize("args", [["help"], ["show"], ["show", "--format", "json"], ["--version"]])
def test_a_closed_stdout_is_no_error(ws, args):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, str(VX), *args],
            cwd=ws,
            env=base_env(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (0, "")
