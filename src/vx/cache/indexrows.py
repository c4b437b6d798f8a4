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

if TYPE_CHECKING:
    from collections.abc import Sequence

EntryFields = tuple[str, str, ArtifactInfo, int, int, float | None, float | None, int | None]
"""An `Entry` without its key: project, task, artifact, created, last used, and the costs."""

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
