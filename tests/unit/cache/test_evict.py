"""Prune on a real store: age, size, orphans, temps, rows without artifacts, dry equals real."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from vx.cache.archive import ArtifactInfo
from vx.cache.evict import (
    HOUR_MS,
    Policy,
    apply_prune,
    apply_retention,
    dry_result,
    list_cache,
    plan_prune,
    retention_due,
)
from vx.cache.index import open_index
from vx.run import warm

if TYPE_CHECKING:
    from pathlib import Path

NOW_MS = 1_900_000_000_000
DAY_MS = 24 * HOUR_MS


def key(i: int) -> str:
    return f"{i:016x}"


def add_entry(store: Path, i: int, *, size: int, used_ms: int, artifact: bool = True) -> str:
    """An index row used at `used_ms`, with (or without) its artifact of `size` bytes."""
    k = key(i)
    index = open_index(store)
    try:
        index.put_entry(k, project="p", task=f"t{i}", artifact=ArtifactInfo(size, "0" * 16, ()))
    finally:
        index.close()
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        conn.execute("UPDATE entries SET last_used_at = ? WHERE key = ?", (used_ms, k))
    if artifact:
        write_file(store / f"{k}.tar.zst", size, used_ms)
    return k


def write_file(path: Path, size: int, mtime_ms: int) -> None:
    path.write_bytes(b"x" * size)
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))


def plan(store: Path, policy: Policy) -> list[str]:
    index = open_index(store)
    try:
        return sorted(v.name for v in plan_prune(list_cache(store, index), policy, NOW_MS).victims)
    finally:
        index.close()


def prune(store: Path, policy: Policy) -> tuple[int, int, int, int]:
    index = open_index(store)
    try:
        r = apply_prune(plan_prune(list_cache(store, index), policy, NOW_MS), store, index)
    finally:
        index.close()
    return r.evicted, r.bytes_freed, r.orphans, r.orphan_bytes


def remaining(store: Path) -> tuple[set[str], set[str]]:
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        rows = {r[0] for r in conn.execute("SELECT key FROM entries")}
    return rows, {p.name for p in store.iterdir() if p.name != "cache.db" and "-wal" not in p.name}


def test_age_takes_entries_unused_for_longer_and_keeps_the_rest(tmp_path: Path) -> None:
    old = add_entry(tmp_path, 1, size=100, used_ms=NOW_MS - 40 * DAY_MS)
    young = add_entry(tmp_path, 2, size=200, used_ms=NOW_MS - 2 * DAY_MS)
    assert prune(tmp_path, Policy(older_than_ms=30 * DAY_MS)) == (1, 100, 0, 0)
    rows, files = remaining(tmp_path)
    assert rows == {young}
    assert f"{old}.tar.zst" not in files
    assert f"{young}.tar.zst" in files


def test_size_evicts_least_recently_used_until_under_the_cap(tmp_path: Path) -> None:
    a = add_entry(tmp_path, 1, size=100, used_ms=NOW_MS - 3 * DAY_MS)
    b = add_entry(tmp_path, 2, size=100, used_ms=NOW_MS - 2 * DAY_MS)
    c = add_entry(tmp_path, 3, size=100, used_ms=NOW_MS - 1 * DAY_MS)
    assert plan(tmp_path, Policy(max_bytes=150)) == [a, b]
    assert prune(tmp_path, Policy(max_bytes=150)) == (2, 200, 0, 0)
    assert remaining(tmp_path)[0] == {c}


def test_age_runs_before_size(tmp_path: Path) -> None:
    old = add_entry(tmp_path, 1, size=10, used_ms=NOW_MS - 10 * DAY_MS)
    big = add_entry(tmp_path, 2, size=500, used_ms=NOW_MS - 2 * DAY_MS)
    add_entry(tmp_path, 3, size=100, used_ms=NOW_MS - 1 * DAY_MS)
    assert plan(tmp_path, Policy(older_than_ms=7 * DAY_MS, max_bytes=200)) == [old, big]


def test_orphans_and_temps_only_by_the_names_vx_writes(tmp_path: Path) -> None:
    add_entry(tmp_path, 1, size=10, used_ms=NOW_MS)
    write_file(tmp_path / f"{key(9)}.tar.zst", 30, NOW_MS - 40 * DAY_MS)  # row-less, old
    write_file(tmp_path / f"{key(8)}.tar.zst", 30, NOW_MS - 10 * 60_000)  # row-less, a save now
    write_file(tmp_path / f"{key(7)}.tar.zst.tmp-ab_cd123", 7, NOW_MS - 2 * HOUR_MS)
    write_file(tmp_path / f"{key(6)}.tar.zst.tmp-ab_cd123", 7, NOW_MS - 60_000)  # in flight
    for foreign in ("release.tar.zst", f"{key(0xAB).upper()}.tar.zst", f"{key(4)}.tar.zst.bak"):
        write_file(tmp_path / foreign, 5, NOW_MS - 90 * DAY_MS)
    assert prune(tmp_path, Policy(older_than_ms=30 * DAY_MS)) == (0, 0, 2, 37)
    _, files = remaining(tmp_path)
    assert f"{key(9)}.tar.zst" not in files
    assert f"{key(7)}.tar.zst.tmp-ab_cd123" not in files
    assert {f"{key(8)}.tar.zst", f"{key(6)}.tar.zst.tmp-ab_cd123", "release.tar.zst"} <= files
    assert {f"{key(0xAB).upper()}.tar.zst", f"{key(4)}.tar.zst.bak"} <= files


def test_a_row_less_artifact_faces_the_policy_by_its_file_time_plus_an_hour(
    tmp_path: Path,
) -> None:
    write_file(tmp_path / f"{key(9)}.tar.zst", 30, NOW_MS - 5 * DAY_MS)
    open_index(tmp_path).close()
    assert plan(tmp_path, Policy(older_than_ms=30 * DAY_MS)) == []
    assert plan(tmp_path, Policy(max_bytes=10)) == [f"{key(9)}.tar.zst"]


def test_rows_without_artifacts_are_dropped_and_count_no_bytes(tmp_path: Path) -> None:
    gone = add_entry(tmp_path, 1, size=1000, used_ms=NOW_MS - 2 * DAY_MS, artifact=False)
    fresh = add_entry(tmp_path, 2, size=1000, used_ms=NOW_MS - 60_000, artifact=False)
    kept = add_entry(tmp_path, 3, size=100, used_ms=NOW_MS - 3 * DAY_MS)
    # 1100 bytes of rows, but only 100 on disk: the cap is already met.
    assert prune(tmp_path, Policy(max_bytes=150)) == (1, 0, 0, 0)
    assert remaining(tmp_path)[0] == {fresh, kept}
    assert gone not in remaining(tmp_path)[0]


def test_dry_run_names_exactly_what_the_real_prune_takes(tmp_path: Path) -> None:
    for i in range(6):
        add_entry(tmp_path, i, size=100 * (i + 1), used_ms=NOW_MS - (10 - i) * DAY_MS)
    add_entry(tmp_path, 20, size=50, used_ms=NOW_MS - 9 * DAY_MS, artifact=False)
    write_file(tmp_path / f"{key(30)}.tar.zst", 60, NOW_MS - 20 * DAY_MS)
    write_file(tmp_path / f"{key(31)}.tar.zst.tmp-zzzzzzzz", 6, NOW_MS - 3 * HOUR_MS)
    policy = Policy(older_than_ms=8 * DAY_MS, max_bytes=1000)
    before_rows, before_files = remaining(tmp_path)
    index = open_index(tmp_path)
    named = plan_prune(list_cache(tmp_path, index), policy, NOW_MS)
    index.close()
    assert remaining(tmp_path) == (before_rows, before_files)
    dry = dry_result(named)
    evicted, freed, orphans, orphan_bytes = prune(tmp_path, policy)
    assert (dry.evicted, dry.bytes_freed, dry.orphans, dry.orphan_bytes) == (
        evicted,
        freed,
        orphans,
        orphan_bytes,
    )
    rows, files = remaining(tmp_path)
    assert before_rows - rows == {v.name for v in named.of("entry", "missing")}
    assert before_files - files == {
        *(f"{v.name}.tar.zst" for v in named.of("entry")),
        *(v.name for v in named.of("orphan", "temp")),
    }


def test_an_entry_used_after_the_plan_keeps_its_row_and_artifact(tmp_path: Path) -> None:
    k = add_entry(tmp_path, 1, size=100, used_ms=NOW_MS - 40 * DAY_MS)
    index = open_index(tmp_path)
    try:
        named = plan_prune(list_cache(tmp_path, index), Policy(older_than_ms=DAY_MS), NOW_MS)
        index.touch([k])
        result = apply_prune(named, tmp_path, index)
    finally:
        index.close()
    assert result.evicted == 0
    assert remaining(tmp_path) == ({k}, {f"{k}.tar.zst"})


@pytest.mark.parametrize(
    ("stamp_age_ms", "over", "due"),
    [(None, False, True), (2 * HOUR_MS, False, True), (60_000, False, False), (60_000, True, True)],
)
def test_retention_is_due_when_over_the_policy_or_an_hour_after_the_last_pass(
    tmp_path: Path, stamp_age_ms: int | None, *, over: bool, due: bool
) -> None:
    add_entry(tmp_path, 1, size=500 if over else 50, used_ms=NOW_MS - 60_000)
    if stamp_age_ms is not None:
        write_file(tmp_path / "retention.stamp", 0, NOW_MS - stamp_age_ms)
    index = open_index(tmp_path)
    try:
        assert (
            retention_due(tmp_path, Policy(max_bytes=100), index, clock=lambda: NOW_MS / 1000)
            is due
        )
    finally:
        index.close()


def test_a_retention_pass_stamps_the_store(tmp_path: Path) -> None:
    add_entry(tmp_path, 1, size=500, used_ms=NOW_MS - 60_000)
    index = open_index(tmp_path)
    try:
        result = apply_retention(
            tmp_path, Policy(max_bytes=100), index, clock=lambda: NOW_MS / 1000
        )
    finally:
        index.close()
    assert result.evicted == 1
    assert (tmp_path / "retention.stamp").is_file()


def test_the_warm_path_checks_the_stamp_prune_writes() -> None:
    from vx.cache.evict import STAMP_NAME

    assert warm._RETENTION_STAMP == STAMP_NAME
