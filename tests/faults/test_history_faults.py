"""A corpus of damaged run histories through `vx last`, `vx why` and `vx info`: never a stack.

The history is real (runs of a real workspace); each variant then damages a copy of its
`cache.db`: a table dropped, a status or cache outcome vx never writes, text in a number
column, tags that are not JSON. The verbs answer, or refuse in one line; a damaged row is
left out, so a history with one bad row reads as a shorter one.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from tests.conftest import make_git_workspace, run_vx

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

FILES = {
    "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
    "vx.workspace.json": {"cacheDir": ".cache"},
    ".gitignore": ".cache/\n",
    "packages/a/package.json": {"name": "a"},
    "packages/a/vx.config.json": {"tasks": {"build": {"exec": "echo built", "cache": {}}}},
}
DAMAGE = {
    "no-runs": "DROP TABLE runs",
    "no-invocations": "DROP TABLE invocations",
    "no-entry-inputs": "DROP TABLE entry_inputs",
    "no-entries": "DROP TABLE entries",
    "no-meta": "DROP TABLE meta",
    "bogus-status": "UPDATE runs SET status = 'bogus'",
    "bogus-cache": "UPDATE runs SET cache = 'bogus'",
    "text-duration": "UPDATE runs SET duration_ms = 'slow'",
    "text-attempts": "UPDATE runs SET attempts = 'x'",
    "text-exit-code": "UPDATE runs SET exit_code = 'z'",
    "text-started-ns": "UPDATE runs SET started_ns = 'x'",
    "number-key": "UPDATE runs SET key = 5",
    "blob-reason": "UPDATE runs SET reason = x'ff'",
    "text-started-at": "UPDATE invocations SET started_at = 'x'",
    "text-invocation-exit": "UPDATE invocations SET exit_code = 'x'",
    "text-tasks": "UPDATE invocations SET tasks = 'x'",
    "blob-command": "UPDATE invocations SET command = x'00ff'",
    "tags-not-json": "UPDATE invocations SET tags = '[['",
    "tags-deep": "UPDATE invocations SET tags = '" + "[" * 100_000 + "'",
}
VERBS = (
    ["last"],
    ["last", "--list"],
    ["last", "--format", "json"],
    ["last", "--log", "a#build"],
    ["why", "a#build"],
    ["why", "build", "--format", "json"],
    ["info"],
)


def _history(tmp_path: Path) -> tuple[Path, Path]:
    root = make_git_workspace(tmp_path / "ws", FILES)
    run_vx(["run", "build", "--all"], root).assert_ok()
    run_vx(["run", "build", "--all", "--force"], root).assert_ok()
    return root, root / ".cache" / "cache.db"


def _damage(db: Path, good: Path, sql: str) -> None:
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    shutil.copyfile(good, db)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(sql)


def test_damaged_histories_read_as_shorter_ones(tmp_path: Path) -> None:
    root, db = _history(tmp_path)
    good = tmp_path / "good.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(db, good)
    wrong: dict[str, str] = {}
    for name, sql in DAMAGE.items():
        _damage(db, good, sql)
        for verb in VERBS:
            r = run_vx(verb, root, timeout=60)
            said = f"{name} (vx {' '.join(verb)})"
            if "Traceback" in r.out + r.err or r.code not in (0, 1):
                wrong[said] = f"exit {r.code}: {r.err[-300:]}"
            elif r.code == 1 and len(r.err.splitlines()) != 1 and "json" not in verb:
                wrong[said] = f"{len(r.err.splitlines())} lines: {r.err[:300]}"
    print(f"damaged histories: {len(DAMAGE)} damages, {len(VERBS)} verbs; wrong: {sorted(wrong)}")
    assert wrong == {}


def test_one_rotten_row_leaves_the_rest_of_the_history(tmp_path: Path) -> None:
    root, db = _history(tmp_path)
    with closing(sqlite3.connect(db)) as conn, conn:
        (newest,) = conn.execute("SELECT max(rowid) FROM invocations").fetchone()
        conn.execute("UPDATE invocations SET started_at = 'x' WHERE rowid = ?", (newest,))
        conn.execute("UPDATE runs SET status = 'bogus' WHERE id = (SELECT max(id) FROM runs)")
    listed = run_vx(["last", "--list"], root).assert_ok()
    assert listed.out.count("vx run build --all") == 1, listed.out
    why = run_vx(["why", "a#build"], root).assert_ok()
    assert "Traceback" not in why.err
