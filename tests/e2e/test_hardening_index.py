"""A damaged `cache.db` and a full disk cost the cache, never the run (issue 8, item 4).

Each test damages a real index the way bit rot, a crash or another tool would, then runs vx:
no stack, the damaged rows are misses and are dropped, a corrupt file is moved aside for the
next run, and the runs after that hit again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
from tests.e2e.cachews import entry_keys
from tests.e2e.runws import tree

from vx.cache.index import SCHEMA_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.conftest import VxResult

OUTS = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}
BUILD = "mkdir -p dist && cp src/index.txt dist/out.txt && echo built $VX_RUN_TASK"
NAMES = ("a", "b", "c")


def cached_workspace(workspace: Callable[..., Path], *, fail: str | None = None) -> Path:
    """Three packages with a cached build each; `fail` names one whose build exits 1."""
    packages: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {}
    for name in NAMES:
        command = f"{BUILD} && exit 1" if name == fail else BUILD
        packages[name] = ((), {"build": {"exec": command, "cache": OUTS}})
    return workspace(tree(packages))


def run(vx: Callable[..., VxResult], root: Path, store: Path, *extra: str) -> VxResult:
    return vx(
        ["run", "build", "--all", "--cache-dir", str(store), "--format", "json", *extra], root
    )


def statuses(r: VxResult) -> dict[str, str]:
    return {row["id"]: row["status"] for row in r.json()["tasks"]}


def keys_of(r: VxResult) -> dict[str, str]:
    return {row["id"]: row["hash"] for row in r.json()["tasks"]}


def vx_lines(r: VxResult) -> list[str]:
    """What vx said on stderr besides its report of the run: notices and errors."""
    return [line for line in r.err.splitlines() if line.startswith(("[vx]", "vx:", "VX_E_"))]


def settle(store: Path) -> None:
    """Fold the WAL into the file, so damage done to the file is what the next run reads."""
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def edit(store: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        for sql, args in statements:
            conn.execute(sql, args)
    settle(store)


def all_hit_after(vx: Callable[..., VxResult], root: Path, store: Path) -> None:
    """With every output gone, the run after the damaged one restores everything."""
    for name in NAMES:
        shutil.rmtree(root / "packages" / name / "dist", ignore_errors=True)
    r = run(vx, root, store).assert_ok()
    assert {statuses(r)[f"{name}#build"] for name in NAMES} == {"cache-hit"}, repr(r)
    assert vx_lines(r) == [], repr(r)
    for name in NAMES:
        assert (root / "packages" / name / "dist/out.txt").read_text() == f"{name}\n"
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


# ---------------------------------------------------------------------------------------------
# rotten rows: one entry is a miss, is dropped, and is saved again

ROTTEN: dict[str, str] = {
    "bad-json-manifest": 'UPDATE entries SET manifest = \'[["dist/out.txt", "f"\' WHERE key = ?',
    "short-manifest-row": 'UPDATE entries SET manifest = \'[["dist/out.txt", "f"]]\' WHERE key = ?',
    "unknown-stream": "UPDATE entry_log SET data = x'00070100000061' WHERE key = ?",
    "text-for-a-number": "UPDATE entries SET size = 'large' WHERE key = ?",
    "null-for-a-number": "UPDATE entries SET duration_ms = 'slow' WHERE key = ?",
    "non-utf8-log": "UPDATE entry_log SET data = x'00000400000066FF80FE' WHERE key = ?",
    "not-a-zstd-frame": "UPDATE entry_log SET data = x'01FFFFFFFF' WHERE key = ?",
    "non-utf8-manifest": "UPDATE entries SET manifest = CAST(X'5BFF5D' AS TEXT) WHERE key = ?",
}


@pytest.mark.parametrize("damage", sorted(ROTTEN))
def test_a_rotten_row_is_a_miss_that_is_dropped(workspace, vx, tmp_path, damage):
    root = cached_workspace(workspace)
    store = tmp_path / "store"
    first = run(vx, root, store).assert_ok()
    keys = keys_of(first)
    rotten = keys["a#build"]
    edit(store, (ROTTEN[damage], (rotten,)))
    shutil.rmtree(root / "packages/a/dist")

    r = run(vx, root, store).assert_ok()
    assert "Traceback" not in r.err
    assert statuses(r) == {"a#build": "success", "b#build": "cache-hit", "c#build": "cache-hit"}
    assert len(vx_lines(r)) <= 1, repr(r)  # at most the line that says the entry is unreadable
    assert (root / "packages/a/dist/out.txt").read_text() == "a\n"
    assert entry_keys(store) == set(keys.values())  # dropped, then saved whole again
    all_hit_after(vx, root, store)


# ---------------------------------------------------------------------------------------------
# a table gone: the file is damaged, set aside at the end of the run, and the next starts afresh


@pytest.mark.parametrize("table", ["entries", "entry_log", "entry_inputs", "runs"])
def test_a_missing_table_sets_the_index_aside(workspace, vx, tmp_path, table):
    """a#build's source changes, so the run saves (and records) as well as probes: each
    table is met whichever it is."""
    root = cached_workspace(workspace)
    store = tmp_path / "store"
    run(vx, root, store).assert_ok()
    edit(store, (f"DROP TABLE {table}", ()))
    for name in NAMES:
        shutil.rmtree(root / "packages" / name / "dist")
    source = root / "packages/a/src/index.txt"
    source.write_text("changed\n")

    r = run(vx, root, store).assert_ok()
    assert "Traceback" not in r.err
    assert set(statuses(r).values()) <= {"success", "cache-hit"}
    assert statuses(r)["a#build"] == "success"
    assert (root / "packages/a/dist/out.txt").read_text() == "changed\n"
    for name in NAMES[1:]:
        assert (root / "packages" / name / "dist/out.txt").read_text() == f"{name}\n"
    lines = vx_lines(r)
    assert 1 <= len(lines) <= 2, repr(r)  # the damage met (a skipped save), then where it went
    aside = sorted(p.name for p in store.glob("cache.db.corrupt-*") if "-wal" not in p.name)
    assert len(aside) == 1, sorted(p.name for p in store.iterdir())
    assert aside[0] in r.err
    assert table in r.err  # sqlite's own words name what is missing

    source.write_text("a\n")
    again = run(vx, root, store).assert_ok()
    assert vx_lines(again) == [], repr(again)
    all_hit_after(vx, root, store)


def test_a_missing_meta_table_resets_the_index(workspace, vx, tmp_path):
    """Without `meta` there is no schema version: the tables are reset, the archives stay."""
    root = cached_workspace(workspace)
    store = tmp_path / "store"
    run(vx, root, store).assert_ok()
    edit(store, ("DROP TABLE meta", ()))

    r = run(vx, root, store).assert_ok()
    assert "Traceback" not in r.err
    assert vx_lines(r) == [
        f"[vx] cache index schema changed (v0 → v{SCHEMA_VERSION}); entries were reset"
    ]
    assert set(statuses(r).values()) == {"success"}
    all_hit_after(vx, root, store)


# ---------------------------------------------------------------------------------------------
# garbled pages: "database disk image is malformed"


def garble_page(store: Path, *, table: str | None) -> None:
    """Overwrite one page of cache.db with junk: the root page of `table`, or the page in the
    middle of the file. Page 1 (the file's header and the schema) is left alone, so the file
    still opens."""
    settle(store)
    path = store / "cache.db"
    with closing(sqlite3.connect(path)) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        if table is None:
            page = max(2, pages // 2 + 1)
        else:
            (page,) = conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
            ).fetchone()
    assert page >= 2
    with path.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(bytes([0xA5, 0x3C, 0xFF, 0x00, 0x7E]) * (size // 5))


@pytest.mark.parametrize("where", ["entries", "entry_log", "entry_inputs", "runs", "middle"])
def test_a_garbled_page_is_moved_aside_and_the_run_goes_on(workspace, vx, tmp_path, where):
    """As with a missing table, a#build's source changes so the run reads, saves and records."""
    root = cached_workspace(workspace)
    store = tmp_path / "store"
    first = run(vx, root, store).assert_ok()
    for _ in range(3):  # some history, so the file has more pages than tables
        run(vx, root, store, "--force").assert_ok()
    garble_page(store, table=None if where == "middle" else where)
    for name in NAMES:
        shutil.rmtree(root / "packages" / name / "dist")
    source = root / "packages/a/src/index.txt"
    source.write_text("changed\n")

    r = run(vx, root, store).assert_ok()
    assert "Traceback" not in r.err
    assert set(statuses(r).values()) <= {"success", "cache-hit"}
    assert (root / "packages/a/dist/out.txt").read_text() == "changed\n"
    for name in NAMES[1:]:
        assert (root / "packages" / name / "dist/out.txt").read_text() == f"{name}\n"
    assert 1 <= len(vx_lines(r)) <= 2, repr(r)
    assert "malformed" in r.err
    assert len([p for p in store.glob("cache.db.corrupt-*") if "-wal" not in p.name]) == 1

    source.write_text("a\n")
    again = run(vx, root, store).assert_ok()
    assert "Traceback" not in again.err
    assert vx_lines(again) == [], repr(again)
    assert keys_of(again) == keys_of(first)
    all_hit_after(vx, root, store)


GARBLE = """import os, sqlite3, sys
if not os.path.exists(sys.argv[2]):
    sys.exit(0)
os.unlink(sys.argv[2])
conn = sqlite3.connect(sys.argv[1])
size = conn.execute("PRAGMA page_size").fetchone()[0]
page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
conn.close()
with open(sys.argv[1], "r+b") as f:
    f.seek((page - 1) * size)
    f.write(bytes(range(255, -1, -1)) * (size // 256))
"""


def test_a_page_garbled_while_the_run_is_going_is_moved_aside(workspace, vx, tmp_path):
    """The index opened fine; a task garbles it before the others save: the saves are
    skipped with one line, the file is moved aside at the end, the next run starts afresh."""
    store = tmp_path / "store"
    once = tmp_path / "garble-once"
    garbler = f'python3 garble.py "{store}/cache.db" "{once}"'
    packages: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
        "rot": ((), {"build": {"exec": garbler}}),
    }
    for name in NAMES:
        build = {"dependsOn": ["rot#build"], "exec": BUILD, "cache": OUTS}
        packages[name] = ((), {"build": build})
    files = tree(packages)
    files["packages/rot/garble.py"] = GARBLE
    root = workspace(files)
    run(vx, root, store, "--cache=local:").assert_ok()  # an index with its tables, no entries
    settle(store)
    once.write_text("")

    r = run(vx, root, store).assert_ok()
    assert not once.exists()
    assert "Traceback" not in r.err
    assert statuses(r) == dict.fromkeys(["rot#build", *(f"{n}#build" for n in NAMES)], "success")
    assert 1 <= len(vx_lines(r)) <= 2, repr(r)  # the damage met, then where the file went
    assert "malformed" in r.err
    assert len([p for p in store.glob("cache.db.corrupt-*") if "-wal" not in p.name]) == 1

    again = run(vx, root, store).assert_ok()
    assert "Traceback" not in again.err
    assert vx_lines(again) == [], repr(again)
    assert set(statuses(again).values()) == {"success"}  # nothing was saved into the bad file
    all_hit_after(vx, root, store)


# ---------------------------------------------------------------------------------------------
# a disk already full when the run starts


def mount_tmpfs(where: Path, size: str) -> bool:
    """Mount a tmpfs on `where`; False where this user may not."""
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@contextlib.contextmanager
def small_disk(where: Path) -> Iterator[Path]:
    where.mkdir()
    if not mount_tmpfs(where, "1m"):
        pytest.skip("filling a disk needs a tmpfs of its own: run as root where mount works")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def fill(disk: Path) -> Path:
    """Write until the disk refuses another byte; the filler, to free the disk again."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, bytes(4096))
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x")
    finally:
        os.close(fd)
    assert os.statvfs(disk).f_bavail == 0
    return filler


@pytest.mark.parametrize("history", ["new-cache", "existing-cache"])
@pytest.mark.parametrize("fail", [None, "b"], ids=["tasks-pass", "a-task-fails"])
def test_a_disk_full_at_the_start_runs_without_the_cache(workspace, vx, tmp_path, history, fail):
    root = cached_workspace(workspace, fail=fail)
    with small_disk(tmp_path / "disk") as disk:
        store = disk / "cache"
        if history == "existing-cache":
            run(vx, root, store)
            for name in NAMES:
                shutil.rmtree(root / "packages" / name / "dist", ignore_errors=True)
            (root / "packages/a/src/index.txt").write_text("a\n")  # touch nothing in the keys
        filler = fill(disk)

        r = run(vx, root, store)
        assert r.code == (1 if fail else 0), repr(r)
        assert "Traceback" not in r.err
        lines = vx_lines(r)
        assert len(lines) == 1, repr(r)
        assert len([line for line in r.err.splitlines() if "VX_E_FS" in line]) == 1, repr(r)
        assert "VX_E_FS" in lines[0]
        assert str(store / "cache.db") in lines[0]
        want = {f"{n}#build": "failed" if n == fail else "success" for n in NAMES}
        assert statuses(r) == want  # every task ran: nothing was restored
        for name in NAMES:
            assert (root / "packages" / name / "dist/out.txt").read_text() == f"{name}\n"

        filler.unlink()  # room again: the cache works as before
        run(vx, root, store)
        if fail is None:
            all_hit_after(vx, root, store)
        else:
            r = run(vx, root, store).assert_code(1)
            assert statuses(r)["a#build"] == "cache-hit"
            assert vx_lines(r) == [], repr(r)
