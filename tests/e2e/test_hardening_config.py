"""Odd config values and odd names are refusals of one short line, never a stack (issue 8,
item 7): a huge timeout, a config nested 100 000 deep, duplicate keys, a 10 000-character name."""

from __future__ import annotations

import pytest
from tests.e2e.runws import tree

APP = "packages/app/vx.config.json"
LONG = "q" * 10_000


def one_line(r) -> str:
    """The refusal: exit 1, exactly one line on stderr, no stack."""
    assert r.code == 1, repr(r)
    assert "Traceback" not in r.err, repr(r)
    assert r.err.count("\n") == 1, repr(r)
    assert r.err.endswith("\n"), repr(r)
    return r.err.rstrip("\n")


def app_with(config_text: str) -> dict:
    files = tree({"app": ((), {"build": {"exec": "echo built"}})})
    files[APP] = config_text
    return files


@pytest.mark.parametrize("verb", [["run", "build"], ["show"]])
def test_a_timeout_past_any_timer_is_refused(workspace, vx, verb):
    root = workspace(
        app_with('{"tasks": {"build": {"exec": {"command": "echo x", "timeout": 1e30}}}}')
    )
    line = one_line(vx(verb, root / "packages/app"))
    assert line.startswith(f"{APP}: tasks.build.exec.timeout: expected a positive integer"), line
    assert "2147483647" in line


@pytest.mark.parametrize("verb", [["run", "build"], ["show"]])
def test_a_config_nested_100_000_deep_is_refused(workspace, vx, verb):
    deep = '{"tasks": {"build": {"exec": "echo x", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}}"
    root = workspace(app_with(deep))
    line = one_line(vx(verb, root / "packages/app"))
    assert line.startswith(f"{APP}: nests lists or objects too deeply"), line
    assert "RecursionError" not in line


@pytest.mark.parametrize("verb", [["run", "build"], ["show"]])
def test_a_duplicate_key_is_refused_naming_it(workspace, vx, verb):
    twice = '{"tasks": {"build": {"exec": "echo one"}, "build": {"exec": "echo two"}}}'
    root = workspace(app_with(twice))
    line = one_line(vx(verb, root / "packages/app"))
    assert line.startswith(f'{APP}: tasks: "build" appears twice'), line


def test_a_duplicate_key_deep_in_a_task_is_refused_naming_it(workspace, vx):
    twice = '{"tasks": {"build": {"exec": "echo one", "exec": "echo two"}}}'
    root = workspace(app_with(twice))
    line = one_line(vx(["run", "build"], root / "packages/app"))
    assert line.startswith(f'{APP}: tasks.build: "exec" appears twice'), line


@pytest.mark.parametrize(
    ("where", "word"),
    [
        ("packages/app", LONG),  # an unknown task of the project
        ("packages/app", f"app#{LONG}"),  # an unknown task of a named project
        ("packages/app", f"{LONG}#build"),  # an unknown project
        (".", LONG),  # at the root, inside no project
        (".", f"^{LONG}"),  # no task reference at all
    ],
    ids=["task", "pkg-task", "project", "no-project", "no-reference"],
)
@pytest.mark.parametrize("verb", ["run", "show"])
def test_a_10_000_character_name_makes_a_short_refusal(workspace, vx, where, word, verb):
    root = workspace(tree({"app": ((), {"build": {"exec": "echo built"}})}))
    r = vx([verb, word], root / where)
    line = one_line(r)
    # the workspace's own path is echoed where the cwd matters; it is no typed name
    assert len(line.replace(str(root), "<ws>")) < 300, line
    assert "qqqqqqqqqq" in line  # the head of the name is echoed, so the user can find it
