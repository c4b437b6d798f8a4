"""Narrow TOML text edits keep every line they do not mean to change."""

from __future__ import annotations

import tomllib

from vx.workspace.tomltext import drop_key, drop_tables, replace_array, spans

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
