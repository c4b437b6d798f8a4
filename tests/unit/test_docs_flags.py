"""The manual names only flags that exist: its flag tables and every `--flag` it spells are
held to the parser's tables (each verb's `COMMAND.flags`, and the foreign-flag rows)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from vx.cli.foreign import ROWS
from vx.cli.parser import Command, Flag, Takes
from vx.cli.verbs import VERBS

REPO = Path(__file__).resolve().parents[2]
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
GLOBAL = {"--help", "--version"}
# Spellings the manual uses to talk about flags in general, not flags of vx.
PLACEHOLDERS = {"--flag", "--formt"}
# Flags of other programs the manual quotes: the tools in package.json scripts (`vx init`
# reads them; docs/init.md), npm's `--omit`, and the build scripts in build/ (docs/install.md).
SCRIPT_FLAGS = {
    *("--outDir", "--out-dir", "--watch", "--prefix", "--workspaces", "--omit"),
    *("--single-run", "--no-watch"),  # a runner told to run once: no server (docs/init.md)
}
BUILD_FLAGS = {"--binary", "--mode", "--folder", "--python-flag"}
# A code span that is another program's command line: its flags are that program's.
OTHER_TOOLS = ("git ", "uv ", "npm ", "pnpm ", "yarn ", "bun ", "pip ", "python", "turbo ", "nx ")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9-]*")
_SPAN = re.compile(r"`([^`\n]+)`")
_VERB_HEADING = re.compile(r"^## vx ([a-z]+)")


def _commands() -> dict[str, Command]:
    out: dict[str, Command] = {}
    for verb in VERBS:
        command = getattr(importlib.import_module(verb.module), "COMMAND", None)
        if command is not None:
            out[verb.name] = command
    return out


COMMANDS = _commands()
KNOWN = {f.name for c in COMMANDS.values() for f in c.flags} | GLOBAL
FOREIGN = {name for row in ROWS for name in row.names}


def _tables(page: Path) -> list[tuple[str | None, int, list[str]]]:
    """(verb section, line, first cells) of each table whose header's first cell is `flag`."""
    verb: str | None = None
    found: list[tuple[str | None, int, list[str]]] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        heading = _VERB_HEADING.match(lines[i])
        if heading:
            verb = heading.group(1)
        elif lines[i].startswith("## "):
            verb = None
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if lines[i].startswith("|") and cells[0].lower() == "flag":
            start, rows = i + 1, []
            i += 2  # past the header and its rule
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i].strip().strip("|").split(" | ")[0].strip())
                i += 1
            found.append((verb, start, rows))
            continue
        i += 1
    return found


TABLES = [(page, *table) for page in PAGES for table in _tables(page)]


def _shape(flag: Flag) -> str:
    """How a table spells the flag's value: ` <x>`, `[=x]`, or nothing."""
    return {Takes.VALUE: "value", Takes.OPTIONAL: "optional"}.get(flag.takes, "switch")


def _spelled(cell: str) -> list[tuple[str, str]]:
    """(flag, shape) for each flag a table's first cell spells: `--a <v>`, `--b[=x]`, `-h`."""
    out: list[tuple[str, str]] = []
    for span in _SPAN.findall(cell):
        name = _FLAG.match(span)
        if name is None:
            continue
        rest = span[name.end() :]
        shape = "optional" if rest.startswith("[=") else "value" if rest.startswith(" ") else ""
        out.append((name.group(0), shape or "switch"))
    return out


def test_the_manual_has_flag_tables() -> None:
    assert any(verb == "run" for _, verb, _, _ in TABLES)


@pytest.mark.parametrize(
    ("page", "verb", "line", "cells"),
    TABLES,
    ids=[f"{p.name}:{line}" for p, _, line, _ in TABLES],
)
def test_each_flag_table_is_its_verbs_table(
    page: Path, verb: str | None, line: int, cells: list[str]
) -> None:
    assert verb in COMMANDS, f"{page.name}:{line}: a flag table outside a `## vx <verb>` section"
    flags = {f.name: f for f in COMMANDS[verb].flags}
    listed: set[str] = set()
    for cell in cells:
        for name, shape in _spelled(cell):
            if name in GLOBAL:
                continue
            assert name in flags, f"{page.name}:{line}: vx {verb} has no flag {name}"
            assert shape == _shape(flags[name]), (
                f"{page.name}:{line}: {name} is documented as a {shape} flag, but the parser "
                f"reads it as a {_shape(flags[name])} one"
            )
            listed.add(name)
    missing = sorted(set(flags) - listed)
    assert not missing, f"{page.name}:{line}: the table lacks vx {verb}'s {', '.join(missing)}"


def _mentions() -> list[tuple[str, int, str, str]]:
    out: list[tuple[str, int, str, str]] = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for span in _SPAN.findall(line):
                if span.startswith(OTHER_TOOLS):
                    continue
                own = span.split(" -- ", 1)[0]  # after ` -- ` the words are the task's
                out.extend((page.name, number, flag, span) for flag in _FLAG.findall(own))
    return out


def test_every_flag_the_manual_spells_exists() -> None:
    unknown = [
        f"{page}:{number}: {flag} (in `{span}`)"
        for page, number, flag, span in _mentions()
        if flag not in KNOWN | FOREIGN | PLACEHOLDERS | SCRIPT_FLAGS | BUILD_FLAGS
        and _kebab(flag) not in FOREIGN  # Nx's camelCase spellings are their kebab rows
    ]
    assert not unknown, "the manual names flags vx does not have:\n" + "\n".join(unknown)


def _kebab(flag: str) -> str:
    return "--" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", flag[2:]).lower()


def test_the_check_catches_an_invented_flag(tmp_path: Path) -> None:
    """The parse itself: a table row and a prose span naming flags the parser lacks."""
    page = tmp_path / "x.md"
    page.write_text(
        "## vx run\n\n| flag | what |\n| --- | --- |\n| `--teleport <where>` | nothing |\n",
        encoding="utf-8",
    )
    ((verb, _, cells),) = _tables(page)
    assert (verb, _spelled(cells[0])) == ("run", [("--teleport", "value")])
    assert "--teleport" not in KNOWN | FOREIGN


def _field_rows(page: Path) -> list[tuple[int, str]]:
    """(line, field) of each row of the config tables: header `| field | type…` or `| field |
    format…`, whose first cell is a backticked field name or dotted path."""
    rows: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"\| field \| (type|format) \|", line):
            inside = True
            continue
        if not line.startswith("|"):
            inside = False
        elif inside and not line.startswith("| ---"):
            cell = line.strip("|").split(" | ")[0].strip()
            rows.extend((number, name) for name in _SPAN.findall(cell))
    return rows


def test_every_config_field_the_manual_lists_is_read_and_every_one_read_is_listed() -> None:
    from vx.workspace import config_root as root
    from vx.workspace import config_schema as schema

    read = {
        schema.SCHEMA_KEY,
        *schema.PROJECT_FIELDS,
        *schema.TASK_FIELDS,
        *schema.EXEC_FIELDS,
        *schema.ENV_FIELDS,
        *schema.CACHE_FIELDS,
        *root.WORKSPACE_FIELDS,
        *root.RETENTION_FIELDS,
        *(f"inputs.{f}" for f in schema.INPUT_FIELDS),
        *(f"outputs.{f}" for f in schema.OUTPUT_FIELDS),
        *(f"allow.{f}" for f in schema.ALLOW_FIELDS),
    }
    listed = _field_rows(REPO / "docs" / "config.md")
    unknown = [f"config.md:{n}: {name}" for n, name in listed if name not in read]
    assert not unknown, "config.md lists fields vx does not read:\n" + "\n".join(unknown)
    shown = {name for _, name in listed}
    assert set(root.WORKSPACE_FIELDS) <= shown
    assert {f"inputs.{f}" for f in schema.INPUT_FIELDS} <= shown
    assert set(schema.EXEC_FIELDS) | set(schema.ENV_FIELDS) <= shown
