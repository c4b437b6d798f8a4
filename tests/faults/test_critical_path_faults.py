"""Hostile run histories: the ready-task order may suffer, the run never does.

The scheduler ranks ready tasks by durations read from `cache.db`'s `runs` table, a file
anyone can edit. Whatever it holds (text, blobs, negative or infinite numbers, a table gone
or reshaped), every task still runs once, after its dependencies, and vx prints no stack.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from tests.e2e.cachews import default_store, statuses
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

TASK = {"dependsOn": ["^build"], "exec": "echo built"}
WORKSPACE = tree(
    {
        "a-leaf": ((), {"build": TASK}),
        "b-head": ((), {"build": TASK}),
        "c-mid": (("b-head",), {"build": TASK}),
        "d-tail": (("c-mid",), {"build": TASK}),
        "e-fan": (("b-head",), {"build": TASK}),
    }
)
ALL = {f"{p}#build" for p in ("a-leaf", "b-head", "c-mid", "d-tail", "e-fan")}

# SQL run against the first run's history; a REAL column keeps whatever it is handed.
HOSTILE = {
    "text": ["UPDATE runs SET duration_ms = 'forever'"],
    "blob": ["UPDATE runs SET duration_ms = x'00ff00'"],
    "negative": ["UPDATE runs SET duration_ms = -1e6 WHERE project != 'a-leaf'"],
    "infinite": ["UPDATE runs SET duration_ms = 9e999 WHERE project = 'a-leaf'"],
    "minus-infinite": ["UPDATE runs SET duration_ms = -9e999"],
    "sum-overflows": ["UPDATE runs SET duration_ms = 1.7e308"],
    "zero": ["UPDATE runs SET duration_ms = 0"],
    "mixed-hostile": [
        "UPDATE runs SET duration_ms = 'x' WHERE project = 'b-head'",
        "UPDATE runs SET duration_ms = 9e999 WHERE project = 'c-mid'",
        "UPDATE runs SET duration_ms = -3 WHERE project = 'd-tail'",
    ],
    "statuses-garbled": ["UPDATE runs SET status = 'maybe', cache_hit = 7"],
    "table-dropped": ["DROP TABLE runs"],
    "table-reshaped": ["DROP TABLE runs", "CREATE TABLE runs (id INTEGER PRIMARY KEY, x BLOB)"],
    "index-dropped": ["DROP INDEX runs_by_task"],
    "history-rows-flood": [
        (
            "INSERT INTO runs (run_id, project, task, status, cache, cache_hit, duration_ms,"
            " attempts, timed_out) SELECT 'old', 'b-head', 'build', 'success', 'local', 1, 1,"
            " 1, 0 FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
            " WHERE i < 20000) SELECT i FROM n)"
        )
    ],
}


def edit(store: Path, statements: list[str]) -> None:
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        for sql in statements:
            conn.execute(sql)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_history_changes_no_result(workspace, vx, tmp_path, case):
    root = workspace(WORKSPACE)
    vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    edit(default_store(tmp_path / "home"), HOSTILE[case])

    r = vx(["run", "build", "--all", "--concurrency=1", "--format=json"], root)
    assert "Traceback" not in r.err, r
    # A history missing its table is damage: the index is set aside and the run's own
    # verdict stands, whatever the order could not learn from it.
    r.assert_ok()
    assert statuses(r) == dict.fromkeys(ALL, "success")
    rows = {row["id"]: row for row in r.json()["tasks"]}
    for dep, dependant in [("b-head", "c-mid"), ("c-mid", "d-tail"), ("b-head", "e-fan")]:
        ended = int(rows[f"{dep}#build"]["wallclockEndNs"])
        assert int(rows[f"{dependant}#build"]["wallclockStartNs"]) >= ended, r
