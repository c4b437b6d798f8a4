"""Narrow TOML text edits keep every line they do not mean to change."""

from __future__ import annotations

import tomllib

from vx.lockfiles.tomltext import drop_key, drop_tables, replace_array, spans

TEXT = """\
# the root
[project]
name = "root"  # kept

[tool.uv]
dev-dependencies = [
    "pytest>=8",  # a [bracket] in a comment
    "ruff",
]
package = false

[tool.uv.workspace]
members = ["packages/*", 'libs/*']  # every package
exclude = ["packages/old"]

[dependency-groups]
test = ["a"]

[dependency-groups.extra]
x = 1
"""


def test_spans_name_every_table_in_order() -> None:
    names = [s.name for s in spans(TEXT.splitlines(keepends=True))]
    assert names == [
        None,
        "project",
        "tool.uv",
        "tool.uv.workspace",
        "dependency-groups",
        "dependency-groups.extra",
    ]


def test_replace_array_rewrites_one_value_only() -> None:
    out = replace_array(TEXT, "tool.uv.workspace", "members", ["packages/app", "libs/ü"])
    assert out is not None
    doc = tomllib.loads(out)
    assert doc["tool"]["uv"]["workspace"] == {
        "members": ["packages/app", "libs/ü"],
        "exclude": ["packages/old"],
    }
    assert '    "libs/ü",\n]  # every package\n' in out
    assert out.replace(out[out.index("members") : out.index("]  #") + 1], "") == TEXT.replace(
        """members = ["packages/*", 'libs/*']""", ""
    )


def test_replace_array_says_when_the_key_is_not_there() -> None:
    assert replace_array(TEXT, "tool.uv.workspace", "include", []) is None
    assert replace_array(TEXT, "tool.pdm", "members", []) is None


def test_drop_key_takes_a_value_of_many_lines() -> None:
    out = drop_key(TEXT, "tool.uv", "dev-dependencies")
    assert tomllib.loads(out)["tool"]["uv"] == {
        "package": False,
        "workspace": {"members": ["packages/*", "libs/*"], "exclude": ["packages/old"]},
    }
    assert "[tool.uv]\npackage = false\n" in out
    assert drop_key(TEXT, "tool.uv", "nothing") == TEXT


def test_drop_tables_cuts_header_to_next_header() -> None:
    out = drop_tables(TEXT, lambda name: name.split(".")[0] == "dependency-groups")
    assert "dependency-groups" not in tomllib.loads(out)
    assert out == TEXT[: TEXT.index("[dependency-groups]")]


def test_an_indented_header_is_a_table_and_an_array_line_is_not() -> None:
    text = (
        '  [tool.uv.workspace]\nmembers = [\n    ["a"]\n]\nnote = """\n[not.a.table]\n"""\n'
        '\t[ "x" . y ] # c\nz = 1\n'
    )
    assert [s.name for s in spans(text.splitlines(keepends=True))] == [
        "tool.uv.workspace",
        "x.y",
    ]
    out = replace_array(text, "tool.uv.workspace", "members", ["b"])
    assert out is not None
    assert tomllib.loads(out)["tool"]["uv"]["workspace"]["members"] == ["b"]


def test_replace_array_keeps_crlf_line_endings() -> None:
    text = '[tool.uv.workspace]\r\nmembers = ["a"]\r\nexclude = []\r\n'
    out = replace_array(text, "tool.uv.workspace", "members", ["b", "c"])
    assert (
        out == '[tool.uv.workspace]\r\nmembers = [\r\n    "b",\r\n    "c",\r\n]\r\nexclude = []\r\n'
    )


def test_drop_tables_keeps_the_comment_above_the_next_header() -> None:
    text = "[a]\nx = 1\n\n# about b\n# more\n[b]\ny = 2\n# trailing\n"
    out = drop_tables(text, lambda name: name in ("a", "b"))
    assert out == "# about b\n# more\n"
    assert (
        drop_tables(text, lambda name: name == "a") == "# about b\n# more\n[b]\ny = 2\n# trailing\n"
    )
