"""`Index.recent_durations`: what the history says each task took when it last executed."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from vx.cache.archive import ArtifactInfo
from vx.cache.index import INDEX_NAME, open_index
from vx.cache.runlog import RunRow
from vx.events import CacheOutcome, TaskStatus

if TYPE_CHECKING:
    from pathlib import Path

OK, FAIL = TaskStatus.SUCCESS, TaskStatus.FAILED
MISS, LOCAL, NONE = CacheOutcome.MISS, CacheOutcome.LOCAL, CacheOutcome.NO_CACHE


def row(
    run: str,
    project: str,
    task: str,
    status: TaskStatus,
    cache: CacheOutcome,
    ms: float,
    key: str | None = None,
) -> RunRow:
    return RunRow(run, project, task, status, cache, duration_ms=ms, key=key)


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([], None),
        # the latest successful execution wins over older ones
        ([row("r1", "a", "build", OK, MISS, 50), row("r2", "a", "build", OK, MISS, 70)], 70),
        # a hit's own time says nothing about the command ...
        ([row("r1", "a", "build", OK, MISS, 50), row("r2", "a", "build", OK, LOCAL, 1)], 50),
        # ... but the entry it restored keeps what the producing execution took
        (
            [row("r1", "a", "build", OK, MISS, 50), row("r2", "a", "build", OK, LOCAL, 1, "e1")],
            30,
        ),
        # nor does a failure, which may have stopped early
        ([row("r1", "a", "build", OK, MISS, 50), row("r2", "a", "build", FAIL, MISS, 2)], 50),
        # an uncached task's executions count
        ([row("r1", "a", "build", OK, NONE, 9)], 9),
        # only ever hit or failed: unknown
        ([row("r1", "a", "build", OK, LOCAL, 3), row("r2", "a", "build", FAIL, MISS, 4)], None),
        # another project's task of the same name is another task
        ([row("r1", "b", "build", OK, MISS, 50)], None),
    ],
)
def test_the_latest_successful_execution(tmp_path: Path, history, expected) -> None:
    index = open_index(tmp_path)
    index.put_entry(
        "e1", project="a", task="build", artifact=ArtifactInfo(1, "0" * 16, ()), duration_ms=30
    )
    if history:
        index.record_runs(history)
    got = index.recent_durations([("a", "build")])
    assert got == ({} if expected is None else {("a", "build"): float(expected)})
    index.close()


def test_a_task_is_read_only_as_far_back_as_its_newest_rows(tmp_path: Path) -> None:
    # However long a history grows, a task costs a bounded read: past its newest few rows
    # (here all failures) the duration is unknown and the scheduler estimates it.
    index = open_index(tmp_path)
    index.record_runs([row("r0", "a", "build", OK, MISS, 50), row("r0", "b", "build", OK, MISS, 9)])
    index.record_runs(row(f"r{i}", "a", "build", FAIL, MISS, 1) for i in range(1, 8))
    assert index.recent_durations([("a", "build")]) == {("a", "build"): 50.0}
    index.record_runs([row("r8", "a", "build", FAIL, MISS, 1)])
    assert index.recent_durations([("a", "build"), ("b", "build")]) == {("b", "build"): 9.0}
    index.close()


def test_many_ids_are_answered_and_duplicates_once(tmp_path: Path) -> None:
    index = open_index(tmp_path)
    n = 1234  # more ids than one statement takes
    index.record_runs(row("r1", f"p{i}", "build", OK, MISS, i) for i in range(0, n, 2))
    ids = [(f"p{i}", "build") for i in range(n)]
    got = index.recent_durations([*ids, *ids[:10]])
    assert got == {(f"p{i}", "build"): float(i) for i in range(0, n, 2)}
    assert index.recent_durations([]) == {}
    index.close()


@pytest.mark.parametrize(
    "value",
    ["'slow'", "x'00ff'", "-5", "9e999", "-9e999"],
    ids=["text", "blob", "negative", "infinite", "minus-infinite"],
)
def test_a_hand_edited_value_that_is_no_duration_is_unknown(tmp_path: Path, value: str) -> None:
    index = open_index(tmp_path)
    index.record_runs([row("r1", "a", "build", OK, MISS, 50), row("r2", "b", "build", OK, MISS, 8)])
    index.close()
    with closing(sqlite3.connect(tmp_path / INDEX_NAME)) as conn, conn:
        conn.execute(f"UPDATE runs SET duration_ms = {value} WHERE project = 'a'")  # noqa: S608
    index = open_index(tmp_path)
    assert index.recent_durations([("a", "build"), ("b", "build")]) == {("b", "build"): 8.0}
    index.close()
