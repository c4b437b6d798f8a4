"""Finding and reading config files: one spelling per directory, JSON with comments, TOML, .py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import write_tree
from vx.errors import ConfigError
from vx.workspace.config_load import (
    find_config,
    load_project_config,
    load_workspace_config,
    parse_jsonc,
)
from vx.workspace.model import CacheRetention, WorkspaceConfig

SRC = Path(__file__).resolve().parents[3] / "src"

JSON_EXAMPLE = """\
// packages/a/vx.config.json
{
  "$schema": "../../schemas/config.json",
  "tags": ["scope:web",],  /* trailing commas are fine */
  "tasks": {
    "build": {
      "description": "compile // not a comment",
      "dependsOn": ["^build"],
      "exec": {"command": "tsc -b", "env": {"define": {"URL": "https://example.com/a//b"}}},
      "cache": {"outputs": {"files": ["dist/**", "!dist/cache/**",]}},
    },
    "fetch": {"exec": "curl 'http://x/*' \\"/*\\" #1",},
  },
}
"""

TOML_EXAMPLE = """\
tags = ["scope:web"]

[tasks.build]
description = "compile // not a comment"
dependsOn = ["^build"]
exec = { command = "tsc -b", env = { define = { URL = "https://example.com/a//b" } } }
cache = { outputs = { files = ["dist/**", "!dist/cache/**"] } }

[tasks.fetch]
exec = "curl 'http://x/*' \\"/*\\" #1"
"""

PY_EXAMPLE = """\
from vx import define_project

URL = "https://example.com/a//b"

define_project(
    tags=["scope:web"],
    tasks={
        "build": {
            "description": "compile // not a comment",
            "dependsOn": ["^build"],
            "exec": {"command": "tsc -b", "env": {"define": {"URL": URL}}},
            "cache": {"outputs": {"files": ["dist/**", "!dist/cache/**"]}},
        },
        "fetch": {"exec": "curl 'http://x/*' \\"/*\\" #1"},
    },
)
"""


def load(root: Path, files: dict[str, str], rel: str = "packages/a"):
    write_tree(root, files)
    return load_project_config(root / rel, root=root)


def refusal(root: Path, files: dict[str, str], rel: str = "packages/a") -> str:
    with pytest.raises(ConfigError) as caught:
        load(root, files, rel)
    assert "\n" not in caught.value.message
    assert "Traceback" not in caught.value.message
    return caught.value.message


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("vx.config.json", JSON_EXAMPLE),
        ("vx.config.toml", TOML_EXAMPLE),
        ("vx.config.py", PY_EXAMPLE),
    ],
)
def test_three_spellings_load_to_the_same_config(tmp_path: Path, name: str, text: str) -> None:
    config = load(tmp_path, {f"packages/a/{name}": text})
    assert config is not None
    assert config.path == f"packages/a/{name}"
    assert config.tags == ("scope:web",)
    build, fetch = config.tasks["build"], config.tasks["fetch"]
    assert build.description == "compile // not a comment"
    assert build.exec_spec is not None
    assert dict(build.exec_spec.env.define) == {"URL": "https://example.com/a//b"}
    assert build.cache_spec is not None
    assert build.cache_spec.outputs.files == ("dist/**", "!dist/cache/**")
    assert fetch.exec_spec is not None
    assert fetch.exec_spec.command == "curl 'http://x/*' \"/*\" #1"


def test_the_three_spellings_resolve_identically(tmp_path: Path) -> None:
    resolved = [
        json.dumps(load(tmp_path / ext, {f"p/vx.config.{ext}": text}, "p").tasks["build"].resolved)
        for ext, text in (("json", JSON_EXAMPLE), ("toml", TOML_EXAMPLE), ("py", PY_EXAMPLE))
    ]
    assert resolved[0] == resolved[1] == resolved[2]


def test_no_config_file_is_none(tmp_path: Path) -> None:
    write_tree(tmp_path, {"packages/a/package.json": "{}", "packages/a/vx.config.json/x": "{}"})
    assert load_project_config(tmp_path / "packages/a", root=tmp_path) is None
    assert find_config(tmp_path / "packages/a", "vx.config") is None


@pytest.mark.parametrize("stem", ["vx.config", "vx.workspace"])
@pytest.mark.parametrize("suffix", [".json", ".toml", ".py"])
def test_find_config_finds_each_spelling(tmp_path: Path, stem: str, suffix: str) -> None:
    write_tree(tmp_path, {f"{stem}{suffix}": "", "vx.config.yaml": "", "vx.workspaces.json": ""})
    assert find_config(tmp_path, stem) == tmp_path / f"{stem}{suffix}"


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            ["vx.config.json", "vx.config.toml"],
            (
                "packages/a/vx.config.json: packages/a/vx.config.toml is here too: "
                "keep one config file per directory"
            ),
        ),
        (
            ["vx.config.py", "vx.config.toml"],
            (
                "packages/a/vx.config.toml: packages/a/vx.config.py is here too: "
                "keep one config file per directory"
            ),
        ),
        (
            ["vx.config.json", "vx.config.toml", "vx.config.py"],
            (
                "packages/a/vx.config.json: packages/a/vx.config.toml and packages/a/vx.config.py "
                "are here too: keep one config file per directory"
            ),
        ),
    ],
)
def test_two_spellings_in_one_directory_are_refused(
    tmp_path: Path, names: list[str], message: str
) -> None:
    assert refusal(tmp_path, {f"packages/a/{n}": "{}" for n in names}) == message


def test_two_spellings_without_a_root_show_the_paths_as_given(tmp_path: Path) -> None:
    write_tree(tmp_path, {"vx.workspace.json": "{}", "vx.workspace.py": "config = {}"})
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, "vx.workspace")
    assert caught.value.message == (
        f"{tmp_path}/vx.workspace.json: {tmp_path}/vx.workspace.py is here too: "
        "keep one config file per directory"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1,}', {"a": 1}),
        ("[1, 2, 3 , ]", [1, 2, 3]),
        ('{"a": [1,\n  // last\n],\n}', {"a": [1]}),
        ('{"a": 1, /* x */ }', {"a": 1}),
        ('{"url": "http://x//y"} // tail', {"url": "http://x//y"}),
        ('{"s": "/* not a comment */"}', {"s": "/* not a comment */"}),
        ('{"s": "a\\"// b", "t": 1}', {"s": 'a"// b', "t": 1}),
        ('{"s": "a\\\\"} // "quoted" ,]', {"s": "a\\"}),
        ('/* "x" */ {"s": ",]"}', {"s": ",]"}),
        ('{"a": "x,"}', {"a": "x,"}),
    ],
)
def test_json_comments_and_trailing_commas(text: str, value: object) -> None:
    assert parse_jsonc(text, "f.json") == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "a": 1\n  "b": 2\n}', "invalid JSON at line 3, column 3: Expecting ',' delimiter"),
        ("", "invalid JSON at line 1, column 1: Expecting value"),
        ('{"a": 1} /* open', "invalid JSON at line 1, column 10: unclosed /*"),
        ('{\n  // c\n  "a": [1,,]\n}', "invalid JSON at line 3, column 12: Expecting value"),
        (
            "{'a': 1}",
            "invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes",
        ),
        ('{"a": "http://x}', "invalid JSON at line 1, column 7: Unterminated string starting at"),
    ],
)
def test_json_syntax_errors_name_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    assert refusal(tmp_path, {"packages/a/vx.config.json": text}) == (
        f"packages/a/vx.config.json: {message}"
    )


def test_json_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    (tmp_path / "vx.config.json").write_text('\ufeff{"tags": ["a"]}', encoding="utf-8")
    config = load_project_config(tmp_path, root=tmp_path)
    assert config is not None
    assert config.tags == ("a",)


def test_json_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vx.config.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError) as caught:
        load_project_config(tmp_path, root=tmp_path)
    assert caught.value.message == "vx.config.json: is not UTF-8 text"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tasks.build]\nexec = \n", "invalid TOML at line 2, column 8: Invalid value"),
        ('tags = ["a"\n', "invalid TOML at the end of the file: Unclosed array"),
        ('tags = ["a"\nx = 1', "invalid TOML at line 2, column 1: Unclosed array"),
    ],
)
def test_toml_syntax_errors_name_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    assert refusal(tmp_path, {"packages/a/vx.config.toml": text}) == (
        f"packages/a/vx.config.toml: {message}"
    )


def test_validation_errors_name_the_root_relative_path(tmp_path: Path) -> None:
    files = {"packages/a/vx.config.toml": "[tasks.build.exec]\ncomand = 'make'\n"}
    assert refusal(tmp_path, files) == (
        'packages/a/vx.config.toml: tasks.build.exec: unknown field "comand" '
        '(did you mean "command"?)'
    )


@pytest.mark.parametrize(
    "text",
    [
        'config = {"tasks": {"t": {"exec": "make"}}}',
        'import vx\nproject = vx.define_project({"tasks": {"t": {"exec": "make"}}})',
        'from vx import define_project\ndefine_project(tasks={"t": {"exec": "make"}})',
        (
            "from vx import define_project\n"
            "def make():\n"
            '    return define_project(tasks={"t": {"exec": "make"}})\n'
            "settings = {'p': make()}\n"
        ),
        'from vx import define_project as dp\ndp(tags=["x"])\ndp(tasks={"t": {"exec": "make"}})',
        (
            'from vx import define_project\ndefine_project(tags=["x"])\n'
            'config = {"tasks": {"t": {"exec": "make"}}}'
        ),
        (
            'from vx import define_workspace, define_project\ndefine_project(tasks={"t": {"exec": '
            '"make"}})\ndefine_workspace(concurrency=2)'
        ),
        (
            'import pathlib\nassert pathlib.Path(__file__).name == "vx.config.py"\n'
            'config = {"tasks": {"t": {"exec": "make"}}}'
        ),
    ],
)
def test_python_config_forms(tmp_path: Path, text: str) -> None:
    config = load(tmp_path, {"packages/a/vx.config.py": text})
    assert config is not None
    assert list(config.tasks) == ["t"]
    assert config.tags == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1\n\nraise ValueError('boom')\n", "line 3: ValueError: boom"),
        ("def f():\n    return {}['k']\n\nconfig = f()\n", "line 2: KeyError: 'k'"),
        ("raise RuntimeError('two\\nlines')\n", "line 1: RuntimeError: two lines"),
        ("raise RuntimeError\n", "line 1: RuntimeError"),
        ("import sys\nsys.exit(3)\n", "line 2: SystemExit: 3"),
        ("import helper_that_raises\n", "line 1: ZeroDivisionError: division by zero"),
        (
            "import no_such_module_anywhere\n",
            "line 1: ModuleNotFoundError: No module named 'no_such_module_anywhere'",
        ),
        ("config = {\n", "line 1: SyntaxError: '{' was never closed"),
        ("x = 1\n", 'defines no config: assign a dict to "config" or call vx.define_project(...)'),
        (
            "from vx import define_workspace\ndefine_workspace(concurrency=2)\n",
            'defines no config: assign a dict to "config" or call vx.define_project(...)',
        ),
        ("config = [1]\n", "expected an object"),
        ('config = {"taks": {}}\n', 'unknown field "taks" (did you mean "tags" or "tasks"?)'),
    ],
)
def test_python_config_refusals_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    files = {"packages/a/vx.config.py": text, "packages/a/helper_that_raises.py": "1 / 0\n"}
    assert refusal(tmp_path, files) == f"packages/a/vx.config.py: {message}"


def test_python_config_leaves_sys_path_and_sibling_modules_alone(tmp_path: Path) -> None:
    body = "from preset import TASKS\nconfig = {'tasks': TASKS}\n"
    write_tree(
        tmp_path,
        {
            "a/vx.config.py": body,
            "a/preset.py": "TASKS = {'from-a': {'exec': 'make'}}\n",
            "b/vx.config.py": body,
            "b/preset.py": "TASKS = {'from-b': {'exec': 'make'}}\n",
        },
    )
    path_before = list(sys.path)
    a = load_project_config(tmp_path / "a", root=tmp_path)
    b = load_project_config(tmp_path / "b", root=tmp_path)
    assert a is not None
    assert b is not None
    assert list(a.tasks) == ["from-a"]
    assert list(b.tasks) == ["from-b"]
    assert sys.path == path_before
    assert "preset" not in sys.modules


def test_python_config_imports_vx_however_vx_was_started(tmp_path: Path) -> None:
    """A fresh interpreter, cwd in the config's directory beside a decoy `vx.py`."""
    write_tree(
        tmp_path,
        {
            "pkg/vx.config.py": "from vx import define_project\n"
            "define_project(tasks={'t': {'exec': 'make'}})\n",
            "pkg/vx.py": "raise SystemExit('the decoy was imported')\n",
        },
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        from pathlib import Path
        from vx.workspace.config_load import load_project_config
        config = load_project_config(Path("."), root=Path(".."))
        print(list(config.tasks), config.path)
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script],
        cwd=tmp_path / "pkg",
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "['t'] pkg/vx.config.py\n", "")


def test_workspace_config_defaults_when_absent(tmp_path: Path) -> None:
    assert load_workspace_config(tmp_path) == WorkspaceConfig()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "vx.workspace.json",
            '{"concurrency": "50%", "cacheRetention": {"olderThan": "30d", "maxSize": "10G"},}',
        ),
        (
            "vx.workspace.toml",
            'concurrency = "50%"\n[cacheRetention]\nolderThan = "30d"\nmaxSize = "10G"\n',
        ),
        (
            "vx.workspace.py",
            (
                "from vx import define_workspace\n"
                "define_workspace(concurrency='50%', "
                "cacheRetention={'olderThan': '30d', 'maxSize': '10G'})\n"
            ),
        ),
    ],
)
def test_workspace_config_in_each_spelling(tmp_path: Path, name: str, text: str) -> None:
    write_tree(tmp_path, {name: text})
    assert load_workspace_config(tmp_path) == WorkspaceConfig(
        path=name, concurrency="50%", cache_retention=CacheRetention("30d", "10G")
    )


def test_workspace_config_refusal_names_the_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"vx.workspace.toml": "concurrency = 0\n"})
    with pytest.raises(ConfigError) as caught:
        load_workspace_config(tmp_path)
    assert caught.value.message == (
        "vx.workspace.toml: concurrency: expected a positive integer or a percentage of the "
        'CPUs like "50%"'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"tasks": {}, "tasks": {}}', '"tasks" appears twice'),
        (
            '{"tasks": {"build": {"exec": "a", "exec": "b"}}}',
            'tasks.build: "exec" appears twice',
        ),
        (
            (
                '// comments take the second path\n{"tasks": {"b": {"exec": {"command": "a",'
                ' "env": {"define": {"A": "1", "B": "2", "A": "3"}}}}}}'
            ),
            'tasks.b.exec.env.define: "A" appears twice',
        ),
        (
            '{"tags": [{"x": 1, "x": 2}], "tasks": {"a": {}, "a": {}}}',
            'tags[0]: "x" appears twice',
        ),
        ('{"tasks": {"' + "t" * 500 + '": 1, "' + "t" * 500 + '": 2}}', 'tasks: "ttttt'),
    ],
    ids=["top", "task", "after-a-comment", "in-a-list", "long-key"],
)
def test_a_key_written_twice_is_refused_by_its_path(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_jsonc(text, "vx.config.json")
    assert caught.value.message.startswith(f"vx.config.json: {message}")
    assert caught.value.message.endswith("JSON would keep only the last — keep one")
    assert len(caught.value.message) < 250


def test_a_key_twice_in_the_part_before_a_comment_is_found_once() -> None:
    text = '{"tasks": {"a": {"exec": "x"}}, "tags": ["x"] // why\n}'
    assert parse_jsonc(text, "vx.config.json") == {"tasks": {"a": {"exec": "x"}}, "tags": ["x"]}


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        "// a comment\n" + "[" * 100_000 + "]" * 100_000,
        '{"tasks":' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}",
        "[" * 100_000,
    ],
    ids=["lists", "lists-after-a-comment", "objects", "unclosed"],
)
def test_json_nested_past_the_stack_is_one_refusal(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_jsonc(text, "vx.config.json")
    assert caught.value.message == (
        "vx.config.json: nests lists or objects too deeply to read: a config needs only a few"
        " levels"
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "vx.config.toml",
            "a = " + "[" * 100_000 + "]" * 100_000,
            "nests lists or objects too deeply to read: a config needs only a few levels",
        ),
        (
            "vx.config.toml",
            "[tasks.b]\nexec = { command = 'x', timeout = " + "9" * 5000 + " }\n",
            "holds a number too long to read (over 4300 digits): write a smaller one",
        ),
        (
            "vx.config.json",
            '{"tasks": {"b": {"exec": {"command": "x", "timeout": ' + "9" * 5000 + "}}}}",
            "holds a number too long to read (over 4300 digits): write a smaller one",
        ),
        (
            "vx.config.py",
            "config = 1" + " + 1" * 100_000 + "\n",
            "is too large or nested too deeply to compile",
        ),
        (
            "vx.config.py",
            "config = " + "-" * 100_000 + "1\n",
            "is too large or nested too deeply to compile",
        ),
        ("vx.config.py", "config = " + "[" * 1000 + "]" * 1000 + "\n", "too many nested"),
    ],
    ids=["toml-deep", "toml-digits", "json-digits", "py-deep", "py-huge", "py-parens"],
)
def test_files_past_the_parsers_limits_are_one_refusal(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    write_tree(tmp_path, {name: text})
    with pytest.raises(ConfigError) as caught:
        load_project_config(tmp_path, root=tmp_path)
    assert caught.value.message.startswith(f"{name}: ")
    assert message in caught.value.message
