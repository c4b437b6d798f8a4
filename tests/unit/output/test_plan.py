"""`--dry`'s text, `--dry=json`'s document and `--graph`'s DOT, compared whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from vx.events import AffectedReason, PlanStatus
from vx.ids import TaskId
from vx.output.plan import PlanForecast, PlanRow, PlanView, plan_document, plan_dot, plan_text

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "schemas/plan.json").read_text())
KEY = "0123456789abcdef"

ROWS = (
    PlanRow("lib#build", "lib", "build", "compile", KEY, PlanStatus.HIT_LOCAL, (), 1200.0),
    PlanRow("lib#gen", "lib", "gen", None, KEY, PlanStatus.EXCLUDED, ()),
    PlanRow("app#lint", "app", "lint", None, KEY, PlanStatus.NO_CACHE, (), 30.0),
    PlanRow(
        "app#build",
        "app",
        "build",
        None,
        KEY,
        PlanStatus.MISS,
        ("lib#build", "lib#gen"),
        2500.0,
        AffectedReason(
            "input", "packages/app/src/a.ts changed (an input)", (TaskId("lib", "build"),)
        ),
    ),
    PlanRow("app#test", "app", "test", None, KEY, PlanStatus.MISS, ("app#build",)),
    PlanRow("app#ci", "app", "ci", None, KEY, PlanStatus.GROUP, ("app#lint", "app#test")),
)
FORECAST = PlanForecast(2500.0, 2530.0, 1, ("app#build",))


def test_the_text_view() -> None:
    view = PlanView(ROWS, FORECAST, reads=True, writes=True)
    assert plan_text(view, color=False) == (
        "planned (nothing runs):\n"
        "  ◉  lib#build  cache hit (local)          0123456789abcdef\n"
        "  ◌  lib#gen    excluded — not run, keyed  0123456789abcdef\n"
        "  ·  app#lint   no cache — would exec      0123456789abcdef  ~30ms\n"
        "  ▶  app#build  cache miss — would exec    0123456789abcdef  ~2.50s\n"
        "                affected: packages/app/src/a.ts changed (an input), via lib#build\n"
        "  ▶  app#test   cache miss — would exec    0123456789abcdef\n"
        "\n"
        "5 tasks planned: 1 cache hit, 3 would run, 1 excluded\n"
        "predicted: ~2.50s wall · ~2.53s total execution · 1 task without history (+?)\n"
    )


@pytest.mark.parametrize(
    ("reads", "writes", "line"),
    [
        (False, True, "cache reads off: every cached task would execute, and be saved"),
        (True, False, "cache writes off: what executes would not be saved"),
        (False, False, "cache off: nothing would be restored or saved"),
    ],
)
def test_the_text_says_which_cache_axes_are_off(reads: bool, writes: bool, line: str) -> None:
    rows = (PlanRow("a#build", "a", "build", None, KEY, PlanStatus.MISS, ()),)
    text = plan_text(PlanView(rows, None, reads=reads, writes=writes), color=False)
    assert text.splitlines()[-1] == line


def test_no_predicted_line_without_history_of_what_would_run() -> None:
    rows = (
        PlanRow("a#build", "a", "build", None, KEY, PlanStatus.HIT_LOCAL, (), 90.0),
        PlanRow("a#test", "a", "test", None, KEY, PlanStatus.MISS, ("a#build",)),
    )
    text = plan_text(
        PlanView(rows, PlanForecast(0, 0, 1, ()), reads=True, writes=True), color=False
    )
    assert text.splitlines()[-1] == "2 tasks planned: 1 cache hit, 1 would run"
    assert "~90ms" not in text  # a hit's p50 is the JSON's, not the text's


def test_colour_paints_only_the_glyph() -> None:
    rows = (PlanRow("a#build", "a", "build", None, KEY, PlanStatus.MISS, ()),)
    line = plan_text(PlanView(rows, None, reads=True, writes=True), color=True).splitlines()[1]
    assert line.startswith("  \x1b[38;2;249;115;22m▶\x1b[0m  a#build")


def test_the_json_document_validates_and_carries_every_field() -> None:
    doc = plan_document(PlanView(ROWS, FORECAST, reads=False, writes=True))
    Draft202012Validator(SCHEMA).validate(doc)
    assert doc["tasks"][0] == {
        "id": "lib#build",
        "project": "lib",
        "task": "build",
        "description": "compile",
        "hash": KEY,
        "cacheStatus": "hit-local",
        "deps": [],
        "p50Ms": 1200.0,
    }
    assert doc["tasks"][3]["affected"] == {
        "kind": "input",
        "change": "packages/app/src/a.ts changed (an input)",
        "via": ["lib#build"],
    }
    assert [t["cacheStatus"] for t in doc["tasks"]] == [
        "hit-local",
        "excluded",
        "no-cache",
        "miss",
        "miss",
        "group",
    ]
    assert doc["cache"] == {"read": False, "write": True}
    assert doc["predicted"] == {
        "wallMs": 2500.0,
        "workMs": 2530.0,
        "unknownCount": 1,
        "criticalPath": ["app#build"],
    }
    assert "predicted" not in plan_document(PlanView(ROWS, None, reads=True, writes=True))


def test_the_dot_view() -> None:
    rows = (
        *ROWS,
        PlanRow('odd"name#x', 'odd"name', "x", None, KEY, PlanStatus.MISS, ()),
    )
    assert plan_dot(PlanView(rows, None, reads=True, writes=True)) == (
        "digraph vx {\n"
        "  rankdir=LR;\n"
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];\n'
        '  "lib#build" [label="lib#build\\nhit-local", fillcolor=green];\n'
        '  "lib#gen" [label="lib#gen\\nexcluded", fillcolor=white, style="rounded,filled,dashed"];\n'
        '  "app#lint" [label="app#lint\\nno-cache", fillcolor=gray];\n'
        '  "app#build" [label="app#build\\nmiss", fillcolor=orange];\n'
        '  "app#test" [label="app#test\\nmiss", fillcolor=orange];\n'
        '  "app#ci" [label="app#ci\\ngroup", fillcolor=fuchsia];\n'
        '  "odd\\"name#x" [label="odd\\"name#x\\nmiss", fillcolor=orange];\n'
        '  "app#build" -> "lib#build";\n'
        '  "app#build" -> "lib#gen";\n'
        '  "app#test" -> "app#build";\n'
        '  "app#ci" -> "app#lint";\n'
        '  "app#ci" -> "app#test";\n'
        "}\n"
    )
