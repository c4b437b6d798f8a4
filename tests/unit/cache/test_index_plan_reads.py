"""What a plan reads from `cache.db`: executed durations, through an index opened read-only."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from vx.cache.archive import ArtifactInfo
from vx.cache.index import INDEX_NAME, IndexWriteError, open_index, read_index
from vx.cache.runlog import RunRow
from vx.events import CacheOutcome, TaskStatus

if TYPE_CHECKING:
    from pathlib import Path

OK, FAIL = TaskStatus.SUCCESS, TaskStatus.FAILED
MISS, LOCAL, NONE = CacheOutcome.MISS, CacheOutcome.LOCAL, CacheOutcome.NO_CACHE


def row(
    run: str, status: TaskStatus, cache: CacheOutcome, ms: float, task: str = "build"
) -> RunRow:
    return RunRow(run, "a", task, status, cache, duration_ms=ms)


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([], None),
        # newest first, every successful execution in the window
        ([row("r1", OK, MISS, 50), row("r2", OK, MISS, 70)], (70.0, 50.0)),
        # hits say nothing about executing, whatever entry they restored
        ([row("r1", OK, MISS, 50), row("r2", OK, LOCAL, 1)], (50.0,)),
        # failures may have stopped early
        ([row("r1", OK, MISS, 50), row("r2", FAIL, MISS, 2)], (50.0,)),
        # an uncached task's executions count
        ([row("r1", OK, NONE, 9), row("r2", OK, NONE, 11)], (11.0, 9.0)),
        ([row("r1", OK, LOCAL, 3)], None),
        # another task of the project is another task
        ([row("r1", OK, MISS, 50, task="lint")], None),
    ],
)
def test_executed_durations(tmp_path: Path, history: list[RunRow], expected) -> None:
    index = open_index(tmp_path)
    if history:
        index.record_runs(history)
    got = index.executed_durations([("a", "build")])
    assert got == ({} if expected is None else {("a", "build"): expected})
    index.close()


def test_executed_durations_read_only_the_newest_rows(tmp_path: Path) -> None:
    index = open_index(tmp_path)
    index.record_runs([row("r0", OK, MISS, 50)])
    index.record_runs(row(f"r{i}", OK, LOCAL, 1) for i in range(1, 8))
    assert index.executed_durations([("a", "build")]) == {("a", "build"): (50.0,)}
    index.record_runs([row("r8", OK, LOCAL, 1)])
    assert index.executed_durations([("a", "build")]) == {}
    index.close()


def test_read_index_reads_and_refuses_every_write(tmp_path: Path) -> None:
    index = open_index(tmp_path)
    index.put_entry("k1", project="a", task="build", artifact=ArtifactInfo(1, "0" * 16, ()))
    index.record_runs([row("r1", OK, MISS, 40)])
    index.close()
    before = (tmp_path / INDEX_NAME).read_bytes()

    reader = read_index(tmp_path)
    assert reader is not None
    entry = reader.get_entry("k1")
    assert entry is not None
    assert entry.task == "build"
    assert reader.executed_durations([("a", "build")]) == {("a", "build"): (40.0,)}
    with pytest.raises(IndexWriteError):
        reader.record_runs([row("r2", OK, MISS, 1)])
    with pytest.raises(IndexWriteError):
        reader.drop_entry("k1")
    reader.close()
    assert (tmp_path / INDEX_NAME).read_bytes() == before


def test_read_index_without_a_readable_index_is_none(tmp_path: Path) -> None:
    assert read_index(tmp_path) is None
    assert not (tmp_path / INDEX_NAME).exists()
    (tmp_path / INDEX_NAME).write_bytes(b"not a database at all, not even close" * 40)
    assert read_index(tmp_path) is None
    other = tmp_path / "other"
    open_index(other).close()
    with closing(sqlite3.connect(other / INDEX_NAME)) as conn, conn:
        conn.execute("UPDATE meta SET value = '999' WHERE name = 'schema_version'")
    assert read_index(other) is None
