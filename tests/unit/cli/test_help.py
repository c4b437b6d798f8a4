"""The verb table, each verb's flag table and the help built from them agree."""

from __future__ import annotations

import importlib
import re

import pytest

from vx.cli import verbs
from vx.cli.help import overview, painted, verb_page
from vx.cli.parser import Command

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
NAMES = [v.name for v in verbs.VERBS]


@pytest.mark.parametrize("name", NAMES)
def test_a_verb_module_keeps_the_protocol(name):
    verb = verbs.find(name)
    module = importlib.import_module(verb.module)
    assert isinstance(module.COMMAND, Command)
    assert module.COMMAND.verb == name
    assert callable(module.resolve)
    assert callable(module.execute)


@pytest.mark.parametrize("name", NAMES)
def test_the_synopsis_shows_exactly_the_flags_of_the_table(name):
    """A synopsis spells every flag, or says [OPTIONS] and leaves them to the page's table."""
    verb = verbs.find(name)
    command = importlib.import_module(verb.module).COMMAND
    shown = {f for line in verb.synopsis for f in FLAG.findall(line)}
    table = {f.name for f in command.flags}
    if any("[OPTIONS]" in line for line in verb.synopsis):
        assert shown <= table
    else:
        assert shown == table
    assert all(line.startswith(f"vx {name}") for line in verb.synopsis)


@pytest.mark.parametrize("name", NAMES)
def test_a_verb_page_opens_with_its_usage_and_ends_with_the_pointer(name):
    verb = verbs.find(name)
    page = verb_page(name)
    assert page.startswith("Usage:\n" + "".join(f"  {s}\n" for s in verb.synopsis))
    assert page.endswith("\nFull reference: vx help\n")
    assert "  -h, --help" in page
    for flag in importlib.import_module(verb.module).COMMAND.flags:
        assert f"\n  {flag.usage}  " in page or f"\n  {flag.usage}\n" in page


def test_the_overview_lists_every_verb():
    page = overview()
    for verb in verbs.VERBS:
        for line in verb.synopsis:
            assert f"\n  {line}\n" in page
        assert re.search(rf"\n  {verb.name} +{re.escape(verb.summary)}\n", page)


@pytest.mark.parametrize("page", [overview(), *(verb_page(n) for n in NAMES)])
def test_paint_changes_colour_only(page):
    assert ANSI.sub("", painted(page)) == page


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Usage:", "\x1b[1mUsage:\x1b[0m"),
        ("Exit codes:", "\x1b[1mExit codes:\x1b[0m"),
        (
            "  vx show [TARGET] [--format pretty|json]",
            "  \x1b[36mvx show\x1b[0m [TARGET] [\x1b[36m--format\x1b[0m pretty|json]",
        ),
        ("  -h, --help  print", "  \x1b[36m-h\x1b[0m, \x1b[36m--help\x1b[0m  print"),
        ("Full reference: vx help", "Full reference: \x1b[36mvx help\x1b[0m"),
        ("  in-place and vx's own", "  in-place and vx's own"),
        ("  vx --version", "  \x1b[36mvx\x1b[0m \x1b[36m--version\x1b[0m"),
    ],
)
def test_what_gets_painted(line, expected):
    assert painted(line) == expected
