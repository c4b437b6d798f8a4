"""`vx run` starts the ready task on the longest remaining path through recorded durations."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
from tests.e2e.cachews import CACHED_BUILD, default_store, query
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

UNCACHED_BUILD = {"dependsOn": ["^build"], "exec": "echo built"}
PROJECTS = ("a-leaf", "b-head", "c-mid", "d-tail")


def leaf_and_chain(task: dict) -> dict:
    """a-leaf stands alone; b-head ← c-mid ← d-tail. a-leaf sorts first, so graph order
    starts it first; both it and b-head are ready when the run starts."""
    return tree(
        {
            "a-leaf": ((), {"build": task}),
            "b-head": ((), {"build": task}),
            "c-mid": (("b-head",), {"build": task}),
            "d-tail": (("c-mid",), {"build": task}),
        }
    )


def edit(store: Path, sql: str, *args: Any) -> None:
    """Change the history by hand, committed: the setup of a run with known durations."""
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        assert conn.execute(sql, args).rowcount > 0


def rows_in_output(out: str) -> list[str]:
    """The projects of the run's task rows, in the order vx printed them."""
    return re.findall(r"^ \S+ +\S+ success +[\w-]+ +([\w-]+)#build(?: · .*)?$", out, re.MULTILINE)


def started_order(store: Path) -> list[str]:
    """The projects of the latest run's rows in the history, by when each started."""
    (run_id,) = query(store, "SELECT run_id FROM invocations ORDER BY started_at DESC LIMIT 1")[0]
    rows = query(store, "SELECT project FROM runs WHERE run_id = ? ORDER BY started_ns", run_id)
    return [project for (project,) in rows]


@pytest.mark.parametrize(
    ("leaf_ms", "link_ms", "expected"),
    [
        # the chain holds 1.2 s of work, the leaf 5 ms: the chain's head goes first, and each
        # link before the leaf as it becomes ready
        (5, 400, ["b-head", "c-mid", "d-tail", "a-leaf"]),
        # the leaf holds more than the whole chain: durations decide, not the count of tasks
        (60_000, 5, ["a-leaf", "b-head", "c-mid", "d-tail"]),
    ],
    ids=["long-chain", "long-leaf"],
)
def test_the_longest_recorded_path_starts_first(
    workspace, vx, tmp_path, leaf_ms, link_ms, expected
):
    root = workspace(leaf_and_chain(UNCACHED_BUILD))
    vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    store = default_store(tmp_path / "home")
    edit(store, "UPDATE runs SET duration_ms = ? WHERE project = 'a-leaf'", leaf_ms)
    edit(store, "UPDATE runs SET duration_ms = ? WHERE project != 'a-leaf'", link_ms)

    r = vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    assert rows_in_output(r.out) == expected, r
    assert started_order(store) == expected


def test_with_no_history_the_chain_with_more_tasks_starts_first(workspace, vx, tmp_path):
    root = workspace(leaf_and_chain(UNCACHED_BUILD))
    r = vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    # Every unknown task weighs the same: b-head heads three, a-leaf one. Once c-mid is done
    # the leaf and d-tail tie, and the graph's order breaks the tie.
    expected = ["b-head", "c-mid", "a-leaf", "d-tail"]
    assert rows_in_output(r.out) == expected, r
    assert started_order(default_store(tmp_path / "home")) == expected


def test_a_task_without_a_record_is_estimated_from_its_namesakes(workspace, vx, tmp_path):
    # d-tail is new to the history: it costs what the other builds cost, not a guess of 1 s.
    root = workspace(leaf_and_chain(UNCACHED_BUILD))
    vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    store = default_store(tmp_path / "home")
    edit(store, "UPDATE runs SET duration_ms = 3000 WHERE project = 'a-leaf'")
    edit(store, "UPDATE runs SET duration_ms = 1200 WHERE project IN ('b-head', 'c-mid')")
    edit(store, "DELETE FROM runs WHERE project = 'd-tail'")
    # the chain: 1200 + 1200 + (the median of 3000, 1200, 1200 = 1200) = 3600 > 3000
    r = vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    assert rows_in_output(r.out) == ["b-head", "a-leaf", "c-mid", "d-tail"], r


def test_after_hits_the_entries_say_what_an_execution_costs(workspace, vx, tmp_path):
    files = leaf_and_chain(CACHED_BUILD) | {f"packages/{p}/src/a.js": "1\n" for p in PROJECTS}
    root = workspace(files)
    vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    store = default_store(tmp_path / "home")
    # The executions say the leaf is slow; the hits after them name entries that say not.
    edit(store, "UPDATE runs SET duration_ms = 60000 WHERE project = 'a-leaf'")
    vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    edit(store, "UPDATE entries SET duration_ms = 5 WHERE project = 'a-leaf'")
    edit(store, "UPDATE entries SET duration_ms = 400 WHERE project != 'a-leaf'")
    for project in PROJECTS:
        (root / f"packages/{project}/src/a.js").write_text("2\n")

    r = vx(["run", "build", "--all", "--concurrency=1"], root).assert_ok()
    assert rows_in_output(r.out) == ["b-head", "c-mid", "d-tail", "a-leaf"], r


def imports_critical(err: str) -> bool:
    """Whether `PYTHONPROFILEIMPORTTIME`'s report on stderr lists the priority module."""
    assert re.search(r"^import time:.*\| vx\.cli\.main$", err, re.MULTILINE), err
    return re.search(r"^import time:.*\|\s+vx\.graph\.critical$", err, re.MULTILINE) is not None


def test_a_run_of_cache_hits_computes_no_priorities(workspace, vx):
    root = workspace(
        leaf_and_chain(CACHED_BUILD) | {f"packages/{p}/src/a.js": "1\n" for p in PROJECTS}
    )
    timed = {"PYTHONPROFILEIMPORTTIME": "1"}
    cold = vx(["run", "build", "--all"], root, env=timed).assert_ok()
    assert imports_critical(cold.err)
    warm = vx(["run", "build", "--all"], root, env=timed).assert_ok()
    assert "4 tasks · all cached" in warm.out, warm
    assert not imports_critical(warm.err)
