"""Plugins end to end: the example plugin's verb and telemetry, `vx info`'s seams, and every
refusal in one line naming the plugin."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest
from jsonschema import Draft202012Validator
from tests.conftest import REPO, make_git_workspace, run_vx

if TYPE_CHECKING:
    from pathlib import Path

EXAMPLE = REPO / "examples" / "plugins" / "vx_hello.py"
BUILD = {
    "exec": "mkdir -p dist && cp src/x dist/x",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}


def make(tmp_path: Path, plugins: object, extra: dict[str, object] | None = None) -> Path:
    files: dict[str, object] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n__pycache__/\n",
        "vx.workspace.json": {"plugins": plugins},
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"build": BUILD}},
        "packages/a/src/x": "x\n",
        **(extra or {}),
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(EXAMPLE, ws / "vx_hello.py")
    return make_git_workspace(ws, files)


def test_the_example_plugin_adds_a_verb(tmp_path: Path) -> None:
    ws = make(tmp_path, ["vx_hello:plugin"])
    result = run_vx(["hello", "Ada"], ws / "packages" / "a", home=tmp_path / "home").assert_ok()
    assert result.out == "hello, Ada, from ws\n"
    failed = run_vx(["hello", "--fail"], ws, home=tmp_path / "home").assert_code(3)
    assert failed.err == "[vx-hello] asked to fail\n"


def test_an_unknown_verb_hints_the_plugin_verbs(tmp_path: Path) -> None:
    ws = make(tmp_path, ["vx_hello:plugin"])
    result = run_vx(["helo"], ws, home=tmp_path / "home").assert_code(1)
    assert result.err == 'unknown command: "helo" — did you mean hello?\n'


def test_telemetry_sees_every_finished_task(tmp_path: Path) -> None:
    ws = make(tmp_path, ["vx_hello:plugin"])
    log = tmp_path / "telemetry.log"
    env = {"VX_HELLO_LOG": str(log)}
    run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    assert log.read_text() == "a#build success miss\na#build success up-to-date\n"


def test_info_lists_the_plugins_and_their_seams(tmp_path: Path) -> None:
    ws = make(tmp_path, ["vx_hello:plugin", "vx.plugins.turbo:plugin"])
    pretty = run_vx(["info"], ws, home=tmp_path / "home").assert_ok()
    row = next(line for line in pretty.out.splitlines() if line.startswith("plugins:"))
    assert row == "plugins:          2 — vx-hello (telemetry, commands); vx-turbo (cache)"
    doc = run_vx(["info", "--format", "json"], ws, home=tmp_path / "home").assert_ok().json()
    assert doc["plugins"] == [
        {"name": "vx-hello", "seams": ["telemetry", "commands"]},
        {"name": "vx-turbo", "seams": ["cache"]},
    ]
    schema = json.loads((REPO / "schemas/info.json").read_text())
    Draft202012Validator(schema).validate(doc)


@pytest.mark.parametrize(
    ("plugins", "module", "expected"),
    [
        (
            ["no_such_vx_plugin:plugin"],
            None,
            (
                "vx.workspace.json: plugin 'no_such_vx_plugin:plugin': no module named"
                " 'no_such_vx_plugin' — install the package that provides it (pip install …) or"
                " fix the module path"
            ),
        ),
        (
            ["vx_hello:plugn"],
            None,
            (
                "vx.workspace.json: plugin 'vx_hello:plugn': vx_hello has no callable 'plugn'"
                " — did you mean vx_hello:plugin?"
            ),
        ),
        (
            ["broken:plugin"],
            "raise RuntimeError('half-written')\n",
            (
                "vx.workspace.json: plugin 'broken:plugin' failed to import: RuntimeError:"
                " half-written — fix the module or drop it from plugins"
            ),
        ),
        (
            ["broken:plugin"],
            "def plugin():\n    return {'name': 'x'}\n",
            (
                "vx.workspace.json: plugin 'broken:plugin' returned dict, not a vx.plugins.Plugin"
                " — return Plugin(name=…, cache=…, commands=…, telemetry=…)"
            ),
        ),
        (
            ["broken:plugin"],
            (
                "from vx.plugins import Command, Plugin\n"
                "def plugin():\n"
                "    return Plugin('broken', commands={'run': Command(lambda a, c: 0)})\n"
            ),
            (
                "vx.workspace.json: plugin 'broken' declares the command 'run', which is a vx"
                " command — rename the plugin's command"
            ),
        ),
    ],
    ids=["missing-module", "missing-factory", "import-fails", "not-a-plugin", "core-verb"],
)
def test_a_bad_plugin_is_refused_in_one_line(
    tmp_path: Path, plugins: list[str], module: str | None, expected: str
) -> None:
    extra = {"broken.py": module} if module is not None else {}
    ws = make(tmp_path, plugins, extra)
    home = tmp_path / "home"
    verb = run_vx(["frobnicate"], ws, home=home).assert_code(1)
    assert verb.err == expected + "\n"
    if "declares the command" not in expected:  # a run never dispatches a verb
        run = run_vx(["run", "build", "--all"], ws, home=home).assert_code(1)
        assert run.err == expected + "\n"
    info = run_vx(["info", "--format", "json"], ws, home=home).assert_ok().json()
    assert [e["message"] for e in info["configErrors"]] == [expected.partition(": ")[2]]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "raise ValueError('no such thing')",
            "plugin 'odd' failed in command 'odd': ValueError: no such thing",
        ),
        (
            "return 256",
            (
                "plugin 'odd' command 'odd' returned 256, not an exit code (an int from 0 to 255)"
                " — return 0 for success"
            ),
        ),
        (
            "return None",
            (
                "plugin 'odd' command 'odd' returned None, not an exit code (an int from 0 to 255)"
                " — return 0 for success"
            ),
        ),
    ],
    ids=["raises", "too-big", "nothing"],
)
def test_a_failing_plugin_verb_is_one_line(tmp_path: Path, body: str, expected: str) -> None:
    module = (
        "from vx.plugins import Command, Plugin\n"
        f"def odd(argv, ctx):\n    {body}\n"
        "def plugin():\n    return Plugin('odd', commands={'odd': Command(odd)})\n"
    )
    ws = make(tmp_path, ["odd:plugin"], {"odd.py": module})
    result = run_vx(["odd"], ws, home=tmp_path / "home").assert_code(1)
    assert result.err == expected + "\n"


def test_a_py_workspace_may_pass_plugin_objects(tmp_path: Path) -> None:
    ws = make(tmp_path, [])
    (ws / "vx.workspace.json").unlink()
    (ws / "vx.workspace.py").write_text(
        "from vx.plugins import Command, Plugin\n"
        "def hi(argv, ctx):\n    ctx.out.write('hi\\n')\n    return 0\n"
        "config = {'plugins': [Plugin('inline', commands={'hi': Command(hi)})]}\n"
    )
    assert run_vx(["hi"], ws, home=tmp_path / "home").assert_ok().out == "hi\n"


def test_the_warm_path_replays_without_loading_a_cache_plugin(tmp_path: Path) -> None:
    module = (
        "import os\n"
        "from vx.plugins import CacheOff, Plugin\n"
        "with open(os.environ['MARK'], 'a') as fh:\n"
        "    fh.write('imported\\n')\n"
        "def no_server(ctx):\n"
        "    raise CacheOff('no server in this test')\n"
        "def plugin():\n"
        "    return Plugin('marker', cache=no_server)\n"
    )
    ws = make(tmp_path, ["marker:plugin"], {"marker.py": module})
    mark = tmp_path / "mark"
    env = {"MARK": str(mark)}
    first = run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    assert "[vx] plugin 'marker' supplies no remote cache this run: no server in this test" in (
        first.err
    )
    run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    assert mark.read_text() == "imported\n" * 2  # the all-hit run a replay needs first
    third = run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    assert mark.read_text() == "imported\n" * 2, "a replay of local hits loads no plugin"
    assert "no server" not in third.err


def test_help_lists_the_plugin_verbs(tmp_path: Path) -> None:
    ws = make(tmp_path, ["vx_hello:plugin"])
    out = run_vx(["help"], ws, home=tmp_path / "home").assert_ok().out
    assert "Plugin commands:\n  hello  greet someone (plugin vx-hello)\n" in out
    plain = run_vx(["help"], tmp_path, home=tmp_path / "home").assert_ok().out
    assert "Plugin commands" not in plain


def test_a_failing_telemetry_hook_is_told_once_and_the_run_goes_on(tmp_path: Path) -> None:
    module = (
        "from vx.plugins import Plugin\n"
        "def hook(event):\n    raise OSError('collector down')\n"
        "def plugin():\n    return Plugin('spy', telemetry=hook)\n"
    )
    ws = make(tmp_path, ["spy:plugin"], {"spy.py": module})
    result = run_vx(["run", "build", "--all"], ws, home=tmp_path / "home").assert_ok()
    lines = [line for line in result.err.splitlines() if "spy" in line]
    assert lines == ["[vx] plugin 'spy' failed in telemetry: OSError: collector down"]


def test_two_cache_plugins_are_refused(tmp_path: Path) -> None:
    module = (
        "from vx.plugins import Plugin\n"
        "def plugin():\n    return Plugin('other-cache', cache=lambda ctx: None)\n"
    )
    ws = make(tmp_path, ["vx.plugins.turbo:plugin", "other:plugin"], {"other.py": module})
    result = run_vx(["run", "build", "--all"], ws, home=tmp_path / "home").assert_code(1)
    assert result.err == (
        "vx.workspace.json: plugins 'vx-turbo' and 'other-cache' both supply a remote cache"
        " — keep one of them\n"
    )
