"""Reading `cache.db` rows back as vx wrote them, since the file can rot under a run.

SQLite keeps whatever a cell holds (text in an INTEGER column, bytes in a TEXT one, a NULL
where a crash left one), so every field an index read hands on is checked here first; a row
that fails is a miss for the caller, never an exception in the middle of a run.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, TypeGuard

from vx.cache.manifest import ArtifactInfo
from vx.events import CacheOutcome, TaskStatus

if TYPE_CHECKING:
    from collections.abc import Sequence

EntryFields = tuple[str, str, ArtifactInfo, int, int, float | None, float | None, int | None]
"""An `Entry` without its key: project, task, artifact, created, last used, and the costs."""

_STATUSES = {str(s): s for s in TaskStatus}
_OUTCOMES = {str(c): c for c in CacheOutcome}
_ROTTEN_MANIFEST = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    json.JSONDecodeError,
    RecursionError,
)
"""What parsing a manifest vx did not write raises (RecursionError: JSON nested too deep)."""


def primary_code(err: sqlite3.Error) -> int | None:
    """SQLite's primary result code for `err`; None for an error the sqlite3 module raised
    itself, such as a TEXT cell that is not UTF-8."""
    code = getattr(err, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def _count(value: object) -> TypeGuard[int]:
    return type(value) is int and value >= 0


def _cost(value: object) -> TypeGuard[float | None]:
    return value is None or type(value) in (int, float)


def entry_from_row(row: Sequence[object]) -> EntryFields | None:
    """An `entries` row (project, task, size, digest, manifest, created_at, last_used_at,
    duration_ms, cpu_ms, peak_rss_bytes) as typed fields; None when any is not what vx
    writes there, the manifest included."""
    if len(row) != 10:
        return None
    project, task, size, digest, manifest, created, used, duration, cpu, rss = row
    if not (isinstance(project, str) and isinstance(task, str) and isinstance(digest, str)):
        return None
    if not (isinstance(manifest, str) and _count(size) and _count(created) and _count(used)):
        return None
    if not (_cost(duration) and _cost(cpu) and (rss is None or _count(rss))):
        return None
    try:
        recorded = ArtifactInfo.parse_manifest(manifest)
    except _ROTTEN_MANIFEST:
        return None
    artifact = ArtifactInfo(size, digest, recorded)
    return project, task, artifact, created, used, duration, cpu, rss


def _text(value: object) -> TypeGuard[str | None]:
    return value is None or isinstance(value, str)


def _whole(value: object) -> TypeGuard[int | None]:
    return value is None or type(value) is int


def run_from_row(row: Sequence[object]) -> list[object] | None:
    """A `runs` row (`_RUN_COLUMNS` in `index`) with its status and cache as enums; None when
    a cell holds what vx never writes there (a hand edit, a rotten page): the history is then
    read without that row, as a shorter one."""
    if len(row) != 17:
        return None
    out = list(row)
    run_id, project, task, status, cache, key, exit_code, duration = row[:8]
    if not (isinstance(run_id, str) and isinstance(project, str) and isinstance(task, str)):
        return None
    if status not in _STATUSES or cache not in _OUTCOMES:
        return None
    out[3], out[4] = _STATUSES[str(status)], _OUTCOMES[str(cache)]
    if not (_text(key) and _whole(exit_code) and type(duration) in (int, float)):
        return None
    cpu, rss, started, ended, attempts, timed_out, blocked_by, reason, tainted = row[8:]
    if not (_cost(cpu) and _whole(rss) and _whole(started) and _whole(ended)):
        return None
    if not (_count(attempts) and _whole(timed_out) and _whole(tainted)):
        return None
    if not (_text(blocked_by) and _text(reason)):
        return None
    out[13], out[16] = bool(timed_out), bool(tainted)
    return out


def invocation_from_row(row: Sequence[object]) -> list[object] | None:
    """An `invocations` row with its tags as pairs; None, as for `run_from_row`, when a cell
    holds what vx never writes there. Tags that do not read are none."""
    if len(row) != 13:
        return None
    out = list(row)
    run_id, command, started, ended, exit_code, branch, sha, ci, tags = row[:9]
    if not (isinstance(run_id, str) and isinstance(command, str)):
        return None
    if not (_count(started) and _count(ended) and type(exit_code) is int):
        return None
    if not (_text(branch) and _text(sha) and _text(ci)) or not all(map(_count, row[9:])):
        return None
    try:
        pairs = json.loads(str(tags))
        out[8] = tuple((str(k), str(v)) for k, v in pairs.items())
    except (ValueError, AttributeError, RecursionError):
        out[8] = ()
    return out


def damaged_schema(conn: sqlite3.Connection, schema: Sequence[str]) -> bool:
    """Whether a table `schema` creates is missing from `conn`, or has other columns.

    Asked only after vx's own SQL failed with a plain error: that SQL is fixed, so a table or
    column gone (someone's DROP, a rotten schema page) is the one way it can.
    """
    with closing(sqlite3.connect(":memory:")) as scratch:
        for statement in schema:
            scratch.execute(statement)
        want = _columns(scratch)
    found = _columns(conn)
    return any(found.get(table) != columns for table, columns in want.items())


def _columns(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    tables = [
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {
        table: tuple(
            str(col[1])
            for col in conn.execute(f'PRAGMA table_info("{table.replace(chr(34), chr(34) * 2)}")')
        )
        for table in tables
    }
