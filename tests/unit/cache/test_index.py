"""The SQLite index: entries, run history, schema resets, corrupt files and concurrent writers."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from vx.cache.archive import ArtifactInfo, Recorded
from vx.cache.index import (
    INDEX_NAME,
    SCHEMA_VERSION,
    Index,
    IndexStats,
    IndexWriteError,
    LogChunk,
    NewEntry,
    open_index,
)
from vx.cache.key import KeyComponent, Kind
from vx.cache.runlog import InvocationRow, RunRow
from vx.events import CacheOutcome, Stream, TaskStatus

SRC = Path(__file__).resolve().parents[3] / "src"

ARTIFACT = ArtifactInfo(
    123,
    "00000000deadbeef",
    (
        Recorded("dist", "dir", 0o755),
        Recorded("dist/a.js", "file", 0o644, 5, "1111111111111111"),
        Recorded("dist/l", "link", target="a.js"),
    ),
)


def test_schema_version_is_pinned() -> None:
    # Bumping it resets every user's index once (never the artifacts): say so in the release.
    assert SCHEMA_VERSION == 4


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def test_an_entry_round_trips_with_its_inputs_and_log(tmp_path: Path) -> None:
    clock = Clock()
    index = open_index(tmp_path, now_ms=clock)
    assert index.notice is None
    inputs = [KeyComponent(Kind.FORMAT, "version", "v1"), KeyComponent(Kind.FILE, "src/a.ts", "bb")]
    log = [LogChunk(Stream.STDOUT, "one\n"), LogChunk(Stream.STDERR, "two\n")]
    index.put_entry(
        "0123456789abcdef",
        project="web",
        task="build",
        artifact=ARTIFACT,
        inputs=inputs,
        log=log,
        duration_ms=12.5,
        cpu_ms=10.0,
        peak_rss_bytes=4096,
    )
    entry = index.get_entry("0123456789abcdef")
    assert entry is not None
    assert (entry.project, entry.task, entry.artifact) == ("web", "build", ARTIFACT)
    assert (entry.created_at_ms, entry.last_used_at_ms) == (1_000, 1_000)
    assert (entry.duration_ms, entry.cpu_ms, entry.peak_rss_bytes) == (12.5, 10.0, 4096)
    assert index.entry_inputs(entry.key) == tuple(inputs)
    assert tuple(index.entry_log(entry.key) or ()) == tuple(log)
    assert index.stats() == IndexStats(1, 123 + 1 + 2 * 5 + 8)  # the artifact, the log block

    clock.now = 5_000
    index.touch([entry.key, "ffffffffffffffff"])
    touched = index.get_entry(entry.key)
    assert touched is not None
    assert (touched.created_at_ms, touched.last_used_at_ms) == (1_000, 5_000)

    index.put_entry(entry.key, project="web", task="build", artifact=ARTIFACT, inputs=inputs[:1])
    assert index.entry_inputs(entry.key) == tuple(inputs[:1])
    assert index.entry_log(entry.key) == ()

    index.drop_entry(entry.key)
    assert index.get_entry(entry.key) is None
    assert index.entry_inputs(entry.key) == ()
    assert index.stats() == IndexStats(0, 0)
    index.close()


def test_entries_written_together_replace_old_rows_and_keep_the_last_of_a_key(
    tmp_path: Path,
) -> None:
    index = open_index(tmp_path, now_ms=Clock())
    old = [KeyComponent(Kind.FORMAT, "version", "v0")]
    index.put_entry("00000000000000aa", project="a", task="build", artifact=ARTIFACT, inputs=old)
    new = [KeyComponent(Kind.FORMAT, "version", "v1")]
    log = [LogChunk(Stream.STDOUT, "b\n")]
    index.put_entries(
        [
            NewEntry("00000000000000aa", "a", "build", ARTIFACT, new),
            NewEntry(
                "00000000000000bb", "b", "build", ARTIFACT, (), [LogChunk(Stream.STDOUT, "x")]
            ),
            NewEntry("00000000000000bb", "b", "build", ARTIFACT, new, log, 3.0),
        ]
    )
    assert index.entry_inputs("00000000000000aa") == tuple(new)
    b = index.get_entry("00000000000000bb")
    assert b is not None
    assert (b.project, b.duration_ms) == ("b", 3.0)
    assert index.entry_inputs("00000000000000bb") == tuple(new)
    assert tuple(index.entry_log("00000000000000bb") or ()) == tuple(log)
    assert index.stats().entries == 2
    index.put_entries([])  # nothing to write opens no transaction
    index.close()


def test_a_refused_write_is_an_os_error_and_leaves_the_index_usable(tmp_path: Path) -> None:
    """A full disk, here a page cap: callers that survive a refused artifact survive this."""
    index = open_index(tmp_path)
    conn = index._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    log = [LogChunk(Stream.STDOUT, os.urandom(100_000).hex())]  # stored compressed: noise
    with pytest.raises(IndexWriteError) as caught:
        index.put_entry("0123456789abcdef", project="p", task="t", artifact=ARTIFACT, log=log)
    assert isinstance(caught.value, OSError)
    assert (caught.value.errno, caught.value.strerror) == (errno.ENOSPC, "database or disk is full")
    assert caught.value.filename == str(tmp_path / INDEX_NAME)
    assert not conn.in_transaction
    assert index.get_entry("0123456789abcdef") is None

    other = open_index(tmp_path)  # the write lock is free: no wait, no "database is locked"
    other.put_entry("fedcba9876543210", project="p", task="t", artifact=ARTIFACT)
    assert index.get_entry("fedcba9876543210") is not None
    other.close()
    index.close()


def test_run_history_is_plain_sql(tmp_path: Path) -> None:
    index = open_index(tmp_path)
    rows = [
        RunRow("r1", "web", "build", TaskStatus.SUCCESS, CacheOutcome.LOCAL, key="k1"),
        RunRow("r1", "web", "test", TaskStatus.FAILED, CacheOutcome.MISS, exit_code=1),
        RunRow("r1", "api", "lint", TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE, timed_out=False),
    ]
    inv = InvocationRow(
        "r1",
        "vx run build test",
        1,
        2,
        1,
        git_branch="main",
        tags=(("team", "web"),),
        tasks=3,
        cache_hits=2,
        failed=1,
    )
    index.record_invocation(inv, rows)
    index.record_runs([RunRow("r2", "web", "build", TaskStatus.SUCCESS, CacheOutcome.MISS)])
    index.close()
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    got = conn.execute(
        "SELECT run_id, project, task, status, cache, cache_hit, exit_code FROM runs ORDER BY id"
    ).fetchall()
    assert got == [
        ("r1", "web", "build", "success", "local", 1, None),
        ("r1", "web", "test", "failed", "miss", 0, 1),
        ("r1", "api", "lint", "success", "up-to-date", 1, None),
        ("r2", "web", "build", "success", "miss", 0, None),
    ]
    header = conn.execute("SELECT command, git_branch, tags, failed FROM invocations").fetchone()
    assert header == ("vx run build test", "main", json.dumps({"team": "web"}), 1)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_a_schema_from_another_version_resets_the_tables_once(tmp_path: Path) -> None:
    index = open_index(tmp_path)
    index.put_entry("0123456789abcdef", project="p", task="t", artifact=ARTIFACT)
    index.close()
    artifact = tmp_path / "0123456789abcdef.tar.zst"
    artifact.write_bytes(b"bytes")
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    conn.execute("UPDATE meta SET value = '999' WHERE name = 'schema_version'")
    conn.execute("CREATE TABLE leftover (x)")
    conn.commit()
    conn.close()

    index = open_index(tmp_path)
    assert (
        index.notice == f"cache index schema changed (v999 → v{SCHEMA_VERSION}); entries were reset"
    )
    assert index.get_entry("0123456789abcdef") is None
    index.close()
    assert artifact.read_bytes() == b"bytes"
    again = open_index(tmp_path)
    assert again.notice is None
    again.close()


def test_an_index_from_before_the_meta_table_is_reset(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    conn.execute("CREATE TABLE entries (hash TEXT)")
    conn.commit()
    conn.close()
    index = open_index(tmp_path)
    assert index.notice is not None
    assert "(v0 → v" in index.notice
    index.close()


@pytest.mark.parametrize(
    "garbage",
    [b"this is not a database, it only sits where one should be" * 100, b"\0" * 4096],
    ids=["text", "zeros"],
)
def test_a_file_that_is_not_a_database_is_moved_aside(tmp_path: Path, garbage: bytes) -> None:
    (tmp_path / INDEX_NAME).write_bytes(garbage)
    index = open_index(tmp_path, now_ms=lambda: 42)
    assert index.notice is not None
    assert "was unreadable" in index.notice
    assert (tmp_path / f"{INDEX_NAME}.corrupt-42").read_bytes() == garbage
    index.put_entry("0123456789abcdef", project="p", task="t", artifact=ARTIFACT)
    assert index.get_entry("0123456789abcdef") is not None
    index.close()


def test_threads_each_get_a_connection_and_lose_nothing(tmp_path: Path) -> None:
    index = open_index(tmp_path)

    def write(t: int) -> None:
        for i in range(50):
            index.put_entry(f"{t:08x}{i:08x}", project="p", task="t", artifact=ARTIFACT)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert index.stats().entries == 200
    index.close()


WRITER = """
import sys
from pathlib import Path
from vx.cache.archive import ArtifactInfo
from vx.cache.index import LogChunk, open_index
from vx.cache.runlog import RunRow
from vx.cache.key import KeyComponent, Kind
from vx.events import CacheOutcome, Stream, TaskStatus
index, tag, go = open_index(Path(sys.argv[1])), int(sys.argv[2]), Path(sys.argv[3])
while not go.exists():
    pass
for i in range(200):
    key = f"{tag:08x}{i:08x}"
    index.put_entry(
        key, project="p", task="t", artifact=ArtifactInfo(i, key),
        inputs=[KeyComponent(Kind.FILE, f"f{n}", key) for n in range(5)],
        log=[LogChunk(Stream.STDOUT, key)],
    )
    index.touch([key])
    index.record_runs([RunRow(key, "p", "t", TaskStatus.SUCCESS, CacheOutcome.MISS, key=key)])
"""


def _python(script: str, *args: object) -> subprocess.Popen[str]:
    """`script` in a fresh interpreter that imports this checkout's vx, its stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_writer_processes_lose_no_entry_and_never_see_a_lock(tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [_python(WRITER, tmp_path, tag, go) for tag in (1, 2)]
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "locked" not in err
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    assert conn.execute("SELECT count(*) FROM entries").fetchone() == (400,)
    assert conn.execute("SELECT count(*) FROM entry_inputs").fetchone() == (2000,)
    assert conn.execute("SELECT count(*) FROM runs").fetchone() == (400,)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


OPENER = """
import sys
from pathlib import Path
from vx.cache.index import open_index
go = Path(sys.argv[2])
Path(sys.argv[3]).touch()
while not go.exists():
    pass
open_index(Path(sys.argv[1])).close()
"""


def test_processes_opening_a_new_index_together_all_get_it(tmp_path: Path) -> None:
    # The switch to WAL answers "database is locked" at once, without the busy handler, to a
    # process that races another's switch; before the retry about one opener in four failed.
    for round_ in range(12):
        cache, go = tmp_path / f"c{round_}", tmp_path / f"go{round_}"
        ready = [tmp_path / f"ready{round_}.{n}" for n in range(3)]
        procs = [_python(OPENER, cache, go, flag) for flag in ready]
        while not all(flag.exists() for flag in ready):
            time.sleep(0.001)
        go.touch()
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        conn = sqlite3.connect(cache / INDEX_NAME)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        conn.close()


def _saved(tmp_path: Path, count: int = 3) -> list[str]:
    index = open_index(tmp_path)
    keys = [f"{i:016x}" for i in range(count)]
    for key in keys:
        index.put_entry(
            key,
            project="p",
            task="t",
            artifact=ARTIFACT,
            log=[LogChunk(Stream.STDOUT, "out\n"), LogChunk(Stream.STDERR, "err\n")],
        )
    index.close()
    return keys


def _sql(tmp_path: Path, *statements: str) -> None:
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _count(tmp_path: Path, table: str, key: str) -> int:
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    (n,) = conn.execute(f"SELECT count(*) FROM {table} WHERE key = ?", (key,)).fetchone()  # noqa: S608
    conn.close()
    return int(n)


UNCHECKED = (
    # the same columns without NOT NULL, so a test can store the NULLs a rotten page can hold
    "CREATE TABLE e2 AS SELECT * FROM entries",
    "DROP TABLE entries",
    "ALTER TABLE e2 RENAME TO entries",
    "CREATE TABLE s2 AS SELECT * FROM entry_log",
    "DROP TABLE entry_log",
    "ALTER TABLE s2 RENAME TO entry_log",
)


@pytest.mark.parametrize(
    "rot",
    [
        "manifest = '{bad'",
        "manifest = 'null'",
        'manifest = \'[["dist/a.js", "f"]]\'',
        "manifest = '" + "[" * 100_000 + "'",
        "manifest = CAST(x'ff' AS TEXT)",
        "manifest = x'5b5d'",
        "manifest = NULL",
        "manifest = '{}'",
        "manifest = '{\"dist/a.js\": 1}'",
        'manifest = \'[["dist/a.js", "x", "t"]]\'',
        'manifest = \'[["dist/a.js", "f", "420", 1, "d"]]\'',
        'manifest = \'[["dist/a.js", "f", 420, 1, "d", "extra"]]\'',
        "size = 'abc'",
        "size = -1",
        "size = 1.5",
        "size = NULL",
        "digest = NULL",
        "project = NULL",
        "task = CAST(x'c3' AS TEXT)",
        "created_at = 'yesterday'",
        "last_used_at = NULL",
        "duration_ms = 'slow'",
        "cpu_ms = x'00'",
        "peak_rss_bytes = 2.5",
    ],
)
def test_a_rotten_entry_row_is_a_miss_and_is_dropped(tmp_path: Path, rot: str) -> None:
    keys = _saved(tmp_path)
    _sql(tmp_path, *UNCHECKED, f"UPDATE entries SET {rot} WHERE key = '{keys[1]}'")  # noqa: S608
    index = open_index(tmp_path)
    assert index.get_entry(keys[1]) is None
    assert index.off is None
    assert index.get_entry(keys[0]) is not None
    assert index.get_entry(keys[2]) is not None
    index.close()
    assert _count(tmp_path, "entries", keys[1]) == 0
    assert _count(tmp_path, "entry_log", keys[1]) == 0


@pytest.mark.parametrize("rot", ["size = -1", "manifest = '{}'", "digest = NULL", "cpu_ms = x'00'"])
def test_a_plan_reads_entries_together_as_get_entry_would_and_drops_nothing(
    tmp_path: Path, rot: str
) -> None:
    keys = _saved(tmp_path)
    _sql(tmp_path, *UNCHECKED, f"UPDATE entries SET {rot} WHERE key = '{keys[1]}'")  # noqa: S608
    index = open_index(tmp_path)
    assert index.readable_entries([*keys, "0" * 16]) == {keys[0], keys[2]}
    index.close()
    assert _count(tmp_path, "entries", keys[1]) == 1


@pytest.mark.parametrize("rot", ["size = -1", "manifest = '{}'", "digest = NULL", "cpu_ms = x'00'"])
def test_entries_read_together_are_what_get_entry_gives_one_by_one(
    tmp_path: Path, rot: str
) -> None:
    keys = _saved(tmp_path)
    _sql(tmp_path, *UNCHECKED, f"UPDATE entries SET {rot} WHERE key = '{keys[1]}'")  # noqa: S608
    index = open_index(tmp_path)
    one_by_one = {k: index.get_entry(k) for k in (keys[0], keys[2])}
    assert index.get_entries([*keys, "0" * 16]) == one_by_one
    index.close()
    assert _count(tmp_path, "entries", keys[1]) == 0, "a rotten row is dropped, as get_entry does"


@pytest.mark.parametrize(
    "rot",
    [
        "data = 'out'",  # text, not a block
        "data = NULL",
        "data = x''",
        "data = x'07'",  # a form vx never writes
        "data = x'0107'",  # not a zstd frame
        "data = x'000004'",  # a record header cut short
        "data = x'00070100000061'",  # a stream vx never writes
        "data = x'000009000000616263'",  # a record longer than its block
        "data = x'00000400000066ff80fe'",  # not UTF-8
        "seq = 7",  # a block with a gap before it still reads: nothing is lost
    ],
)
def test_a_rotten_log_row_makes_its_entry_a_miss(tmp_path: Path, rot: str) -> None:
    keys = _saved(tmp_path)
    _sql(tmp_path, *UNCHECKED, f"UPDATE entry_log SET {rot} WHERE key = '{keys[1]}' AND seq = 0")  # noqa: S608
    index = open_index(tmp_path)
    if rot == "seq = 7":
        assert [c.text for c in index.entry_log(keys[1]) or ()] == ["out\n", "err\n"]
        index.close()
        return
    assert index.entry_log(keys[1]) is None
    assert tuple(index.entry_log(keys[0]) or ()) == (
        LogChunk(Stream.STDOUT, "out\n"),
        LogChunk(Stream.STDERR, "err\n"),
    )
    index.close()
    assert _count(tmp_path, "entries", keys[1]) == 0


def test_a_page_found_corrupt_after_open_turns_the_index_off_until_it_is_moved_aside(
    tmp_path: Path,
) -> None:
    keys = _saved(tmp_path, 40)
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with (tmp_path / INDEX_NAME).open("r+b") as db:
        db.seek((root - 1) * page)
        db.write(b"\xff" * page)

    index = open_index(tmp_path, now_ms=lambda: 77)
    assert index.notice is None  # the damage is not where opening looks
    other_run = sqlite3.connect(tmp_path / INDEX_NAME)  # holds the -wal open past our close
    other_run.execute("SELECT count(*) FROM meta").fetchone()
    assert index.get_entry(keys[0]) is None
    why = index.off
    assert why is not None
    assert why.startswith(f"cache index {tmp_path / INDEX_NAME} is damaged (")
    assert why.endswith("the file moves to cache.db.corrupt-77 when it ends")
    assert index.get_entry(keys[1]) is None
    assert index.entry_log(keys[1]) is None
    with pytest.raises(IndexWriteError):
        index.put_entry("ffffffffffffffff", project="p", task="t", artifact=ARTIFACT)
    assert index.announce() == why
    assert index.announce() is None  # one line per run

    assert index.recover() is None  # told already
    assert index.off is None
    assert (tmp_path / f"{INDEX_NAME}.corrupt-77").exists()
    assert (tmp_path / f"{INDEX_NAME}.corrupt-77-wal").exists()  # its pages go with it
    other_run.close()
    index.record_runs([RunRow("r1", "p", "t", TaskStatus.SUCCESS, CacheOutcome.MISS)])
    index.put_entry(keys[0], project="p", task="t", artifact=ARTIFACT)
    assert index.get_entry(keys[0]) is not None
    index.close()
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


@pytest.mark.parametrize(
    "damage",
    [
        "DROP TABLE entries",
        "DROP TABLE entry_log",
        "DROP TABLE entry_inputs",
        "ALTER TABLE entries DROP COLUMN cpu_ms",
        "ALTER TABLE entries ADD COLUMN extra TEXT",
        "ALTER TABLE entries RENAME TO old_entries",
    ],
)
def test_a_table_or_column_gone_is_damage(tmp_path: Path, damage: str) -> None:
    """Met by a read or by the next save; either way the rest of the run goes without."""
    keys = _saved(tmp_path)
    _sql(tmp_path, damage)
    index = open_index(tmp_path, now_ms=lambda: 5)
    assert index.notice is None
    if index.get_entry(keys[0]) is not None and index.entry_log(keys[0]) is not None:
        with pytest.raises(IndexWriteError):
            index.put_entry(keys[0], project="p", task="t", artifact=ARTIFACT)
    assert index.off is not None
    assert index.get_entry(keys[1]) is None
    damage_text = index._damage
    assert index.recover() == (
        f"cache index {tmp_path / INDEX_NAME} was damaged ({damage_text}); "
        "moved it to cache.db.corrupt-5 and started an empty one"
    )
    assert index.off is None
    assert (tmp_path / f"{INDEX_NAME}.corrupt-5").exists()
    index.put_entry(keys[0], project="p", task="t", artifact=ARTIFACT)
    assert index.get_entry(keys[0]) is not None
    index.close()


def test_a_missing_history_table_met_by_a_write_is_damage(tmp_path: Path) -> None:
    _saved(tmp_path)
    _sql(tmp_path, "ALTER TABLE runs DROP COLUMN reason")
    index = open_index(tmp_path, now_ms=lambda: 9)
    row = RunRow("r1", "p", "t", TaskStatus.SUCCESS, CacheOutcome.MISS)
    with pytest.raises(IndexWriteError) as caught:
        index.record_runs([row])
    assert "has no column named reason" in str(caught.value)
    assert index.off is not None
    assert index.recover() is not None
    index.record_runs([row])
    index.close()
    assert (tmp_path / f"{INDEX_NAME}.corrupt-9").exists()


def test_a_file_another_run_already_replaced_is_not_moved_aside(tmp_path: Path) -> None:
    """Two runs sharing a directory both meet the damage: the second must not move aside the
    fresh index the first one started."""
    keys = _saved(tmp_path)
    _sql(tmp_path, "DROP TABLE entry_log")
    first, second = open_index(tmp_path, now_ms=lambda: 1), open_index(tmp_path, now_ms=lambda: 2)
    assert first.entry_log(keys[0]) is None
    assert second.entry_log(keys[0]) is None
    assert first.recover() is not None
    first.put_entry(keys[0], project="p", task="t", artifact=ARTIFACT)
    second.recover()
    assert not (tmp_path / f"{INDEX_NAME}.corrupt-2").exists()
    assert first.get_entry(keys[0]) is not None
    assert second.get_entry(keys[0]) is not None
    first.close()
    second.close()


def test_an_index_off_from_the_start_answers_nothing() -> None:
    index = Index.unusable(Path("/nowhere") / INDEX_NAME, "the disk said no")
    assert (index.notice, index.off) == ("the disk said no", "the disk said no")
    assert index.get_entry("0123456789abcdef") is None
    assert index.entry_log("0123456789abcdef") is None
    assert index.entry_inputs("0123456789abcdef") == ()
    assert index.announce() is None  # its notice is the one line
    with pytest.raises(IndexWriteError):
        index.touch(["0123456789abcdef"])
    assert index.recover() is None
    index.close()
