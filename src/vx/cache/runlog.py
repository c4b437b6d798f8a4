"""The run history's SQL in `cache.db`: the `runs` and `invocations` tables and every question
asked of them (what ran, how long a task takes, which keys passed and failed).

`RunLog` is mixed into `cache.index.Index`, so one connection per thread and one write
transaction serve the entries and the history alike; the schema version stays the index's.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from vx.cache.indexrows import invocation_from_row, run_from_row
from vx.events import EMPTY_OUTPUTS, NOT_SAVED, CacheOutcome, TaskStatus
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from contextlib import AbstractContextManager

    from vx.cache.key import KeyComponent

_HITS = (CacheOutcome.LOCAL, CacheOutcome.REMOTE, CacheOutcome.UP_TO_DATE)
_PAIRS_PER_QUERY = 400
"""Two variables a pair: under the 999 that SQLite builds before 3.32 allow a statement."""
_RECENT_ROWS = 8
"""How many of a task's newest `runs` rows `recent_durations` and `executed_durations` read."""
_FOREVER = float("inf")

RUN_SCHEMA = (
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL,
        project TEXT NOT NULL, task TEXT NOT NULL, status TEXT NOT NULL, exit_code INTEGER,
        key TEXT, cache TEXT NOT NULL, cache_hit INTEGER NOT NULL,
        duration_ms REAL NOT NULL, cpu_ms REAL, peak_rss_bytes INTEGER,
        started_ns INTEGER, ended_ns INTEGER, attempts INTEGER NOT NULL,
        timed_out INTEGER NOT NULL, blocked_by TEXT, reason TEXT,
        tainted INTEGER NOT NULL DEFAULT 0)""",
    "CREATE INDEX runs_by_run ON runs (run_id)",
    "CREATE INDEX runs_by_task ON runs (project, task)",
    """CREATE TABLE run_audits (
        run_id TEXT NOT NULL, project TEXT NOT NULL, task TEXT NOT NULL, report TEXT NOT NULL,
        PRIMARY KEY (run_id, project, task))""",
    """CREATE TABLE invocations (
        run_id TEXT PRIMARY KEY, command TEXT NOT NULL,
        started_at INTEGER NOT NULL, ended_at INTEGER NOT NULL, exit_code INTEGER NOT NULL,
        git_branch TEXT, git_sha TEXT, ci_provider TEXT, tags TEXT NOT NULL,
        tasks INTEGER NOT NULL, cache_hits INTEGER NOT NULL,
        failed INTEGER NOT NULL, skipped INTEGER NOT NULL)""",
)


class RunRow(Record):
    """One task of one run, executed or replayed (`runs`)."""

    run_id: str
    project: str
    task: str
    status: TaskStatus
    cache: CacheOutcome
    key: str | None = None
    exit_code: int | None = None
    duration_ms: float = 0.0
    cpu_ms: float | None = None
    peak_rss_bytes: int | None = None
    started_ns: int | None = None
    ended_ns: int | None = None
    attempts: int = 1
    timed_out: bool = False
    blocked_by: str | None = None
    reason: str | None = None
    tainted: bool = False
    """Executed behind a failed or excluded dependency: kept, never judged flaky."""


class AuditRow(Record):
    """One task's audit in one run (`run_audits`): the report as JSON (`vx.audit.report`)."""

    project: str
    task: str
    report: str


class InvocationRow(Record):
    """One run's header (`invocations`): what was typed, where, and how it went."""

    run_id: str
    command: str
    started_at_ms: int
    ended_at_ms: int
    exit_code: int
    git_branch: str | None = None
    git_sha: str | None = None
    ci_provider: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    tasks: int = 0
    cache_hits: int = 0
    failed: int = 0
    skipped: int = 0


class RunLog:
    """The history half of `Index`: it reads and writes through the index's connection."""

    if TYPE_CHECKING:
        off: str | None

        def _conn(self) -> sqlite3.Connection: ...
        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _damaged(self, err: sqlite3.DatabaseError) -> bool: ...
        def entry_inputs(self, key: str) -> tuple[KeyComponent, ...]: ...

    def record_runs(self, rows: Iterable[RunRow]) -> None:
        with self._write() as tx:
            _insert_runs(tx, rows)

    def record_invocation(
        self,
        invocation: InvocationRow,
        rows: Iterable[RunRow] = (),
        audits: Iterable[AuditRow] = (),
    ) -> None:
        """A run's header, its task rows and their audits, written together at the run's end."""
        inv = invocation
        with self._write() as tx:
            tx.execute(
                "INSERT OR REPLACE INTO invocations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *(inv.run_id, inv.command, inv.started_at_ms, inv.ended_at_ms, inv.exit_code),
                    *(inv.git_branch, inv.git_sha, inv.ci_provider, json.dumps(dict(inv.tags))),
                    *(inv.tasks, inv.cache_hits, inv.failed, inv.skipped),
                ),
            )
            _insert_runs(tx, rows)
            tx.executemany(
                "INSERT OR REPLACE INTO run_audits VALUES (?, ?, ?, ?)",
                ((inv.run_id, a.project, a.task, a.report) for a in audits),
            )

    def run_audits(self, run_id: str) -> list[AuditRow]:
        """The audits a run recorded, one per audited task."""
        rows = self._conn().execute(
            "SELECT project, task, report FROM run_audits WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [AuditRow(str(p), str(t), str(r)) for p, t, r in rows]

    def latest_audits(self) -> list[AuditRow]:
        """Each task's newest audit, from whichever run made it (what `vx audit` reads)."""
        rows = self._conn().execute(
            "SELECT project, task, report FROM run_audits AS a WHERE rowid = (SELECT max(rowid)"
            " FROM run_audits AS b WHERE b.project = a.project AND b.task = a.task)"
            " ORDER BY project, task"
        )
        return [AuditRow(str(p), str(t), str(r)) for p, t, r in rows]

    def finish_invocation(self, run_id: str, *, exit_code: int, ended_at_ms: int) -> None:
        """A run's verdict changed after its rows were written: a held server ended it."""
        with self._write() as tx:
            tx.execute(
                "UPDATE invocations SET exit_code = ?, ended_at = ? WHERE run_id = ?",
                (exit_code, ended_at_ms, run_id),
            )

    def recent_durations(self, ids: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Each (project, task)'s duration in ms the last time it succeeded: what it may cost now.

        The scheduler's estimate, so it reads little: a task's newest `_RECENT_ROWS` rows through
        `runs_by_task`, however long the history. An execution gives its own duration; a hit
        gives its entry's, which is what the producing execution took (a restore's time says
        nothing about the command's). Failures are left out, as they may have stopped early. A
        task with no such row is absent, and so is a value that is no duration (SQLite keeps
        whatever a hand-edited row holds).
        """
        out: dict[tuple[str, str], float] = {}
        rows = self._per_pair(
            ids,
            "SELECT project, task, (SELECT ms FROM (SELECT r.id AS id, r.status AS status,"  # noqa: S608
            " CASE WHEN r.cache_hit = 0 THEN r.duration_ms ELSE (SELECT e.duration_ms"
            " FROM entries AS e WHERE e.key = r.key) END AS ms FROM runs AS r"
            " WHERE r.project = want.project AND r.task = want.task"
            f" ORDER BY r.id DESC LIMIT {_RECENT_ROWS})"
            " WHERE status = ? AND ms IS NOT NULL ORDER BY id DESC LIMIT 1) FROM want",
            str(TaskStatus.SUCCESS),
        )
        for project, task, ms in rows:
            if isinstance(ms, (int, float)) and 0 <= ms < _FOREVER:
                out[str(project), str(task)] = float(ms)
        return out

    def _per_pair(
        self, ids: Iterable[tuple[str, str]], select: str, *params: str
    ) -> Iterator[tuple[object, ...]]:
        """The rows of `select`, which reads its (project, task) pairs from `want`, over `ids`
        in chunks small enough for SQLite's limit on bound variables."""
        wanted = list(dict.fromkeys(ids))
        conn = self._conn()
        for start in range(0, len(wanted), _PAIRS_PER_QUERY):
            chunk = wanted[start : start + _PAIRS_PER_QUERY]
            values = ", ".join(["(?, ?)"] * len(chunk))
            yield from conn.execute(
                f"WITH want(project, task) AS (VALUES {values}) {select}",
                (*(part for pair in chunk for part in pair), *params),
            )

    def executed_durations(
        self, ids: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[float, ...]]:
        """Each (project, task)'s successful executions among its newest runs, newest first, ms.

        What a plan's `~p50` is taken over: `recent_durations`' window through `runs_by_task`,
        hits left out (a restore says nothing about what executing costs) and failures too. A
        task that never executed successfully in that window is absent.
        """
        out: dict[tuple[str, str], list[float]] = {}
        rows = self._per_pair(
            ids,
            # The window is "ids from the task's Nth newest on": a range over `runs_by_task`.
            # (`r.id IN (… LIMIT n)` reads the same rows but SQLite re-runs the subquery per
            # candidate row: 0.5 s for 1000 tasks against 3 ms this way.)
            "SELECT r.project, r.task, r.duration_ms FROM want CROSS JOIN runs AS r"  # noqa: S608
            " ON r.project = want.project AND r.task = want.task AND r.id >= coalesce("
            "(SELECT id FROM runs WHERE project = want.project AND task = want.task"
            f" ORDER BY id DESC LIMIT 1 OFFSET {_RECENT_ROWS - 1}), 0)"
            " WHERE r.status = ? AND r.cache_hit = 0 ORDER BY r.id DESC",
            str(TaskStatus.SUCCESS),
        )
        for project, task, ms in rows:
            if isinstance(ms, (int, float)) and 0 <= ms < _FOREVER:
                out.setdefault((str(project), str(task)), []).append(float(ms))
        return {pair: tuple(values) for pair, values in out.items()}

    def task_runs_since(self, since_ms: int) -> tuple[int, int, int]:
        """Task runs of invocations started at or after `since_ms`: (runs, hits, restored)."""
        row = (
            self._conn()
            .execute(
                "SELECT count(*), coalesce(sum(r.cache_hit), 0),"
                " coalesce(sum(r.cache IN (?, ?)), 0) FROM runs AS r"
                " JOIN invocations AS i ON i.run_id = r.run_id WHERE i.started_at >= ?",
                (str(CacheOutcome.LOCAL), str(CacheOutcome.REMOTE), since_ms),
            )
            .fetchone()
        )
        return int(row[0]), int(row[1]), int(row[2])

    def empty_outputs_since(self, since_ms: int) -> list[str]:
        """`project#task` of each task whose newest successful execution, in an invocation
        started at or after `since_ms`, is marked `EMPTY_OUTPUTS`: its outputs matched nothing."""
        rows = (
            self._conn()
            .execute(
                "SELECT r.project, r.task FROM runs AS r"
                " JOIN invocations AS i ON i.run_id = r.run_id"
                " WHERE i.started_at >= ? AND r.reason = ? AND r.id = (SELECT max(x.id)"
                " FROM runs AS x WHERE x.project = r.project AND x.task = r.task"
                " AND x.status = ? AND x.cache_hit = 0) ORDER BY r.project, r.task",
                (since_ms, EMPTY_OUTPUTS, str(TaskStatus.SUCCESS)),
            )
            .fetchall()
        )
        return [f"{p}#{t}" for p, t in rows]

    def key_outcomes(
        self, since_ms: int, task: tuple[str, str, str] | None = None
    ) -> list[tuple[str, str, str, str, int]]:
        """Passes and failures on record per task key, oldest first, for flaky judgement.

        Rows `(project, task, key, status, attempts)` of runs since `since_ms` that succeeded
        (a hit included) or failed on a key, leaving out tainted ones (run past a failed or
        excluded dependency, on inputs the key does not describe); `task`, a
        `(project, task, key)`, narrows to that one key through `runs_by_task` (a run judging
        a task as it finishes).
        """
        sql = (
            "SELECT r.project, r.task, r.key, r.status, r.attempts FROM runs AS r"
            " JOIN invocations AS i ON i.run_id = r.run_id"
            " WHERE i.started_at >= ? AND r.key IS NOT NULL AND r.status IN (?, ?)"
            " AND r.tainted = 0"
        )
        args: list[object] = [since_ms, str(TaskStatus.SUCCESS), str(TaskStatus.FAILED)]
        if task is not None:
            sql += " AND r.project = ? AND r.task = ? AND r.key = ?"
            args += list(task)
        rows = self._history(sql + " ORDER BY r.id", args)
        return [
            (str(p), str(t), str(k), str(s), a if type(a) is int and a > 0 else 1)
            for p, t, k, s, a in rows
        ]

    def last_entry_inputs(self, project: str, task: str) -> tuple[KeyComponent, ...] | None:
        """The components of the newest key the task ran on that still has an entry: what a
        miss is compared with. None when no recorded run of it left one (its first run).

        Walks the task's rows through `runs_by_task`, newest first, and stops at the first
        key with an entry; the rows of the run under way are not written yet.
        """
        if self.off is not None:
            return None
        try:
            row = (
                self._conn()
                .execute(
                    "SELECT r.key FROM runs AS r WHERE r.project = ? AND r.task = ?"
                    " AND r.key IS NOT NULL AND EXISTS (SELECT 1 FROM entries AS e"
                    " WHERE e.key = r.key) ORDER BY r.id DESC LIMIT 1",
                    (project, task),
                )
                .fetchone()
            )
        except sqlite3.DatabaseError as err:
            self._damaged(err)
            return None
        if row is None or not isinstance(row[0], str):
            return None
        return self.entry_inputs(row[0])

    def kept_before(self, project: str, task: str) -> bool:
        """Whether a recorded run of the task succeeded on the cache (executed and saved, or
        hit): an entry held its key once, so with none now a prune or eviction took it."""
        if self.off is not None:
            return False
        try:
            row = (
                self._conn()
                .execute(
                    "SELECT 1 FROM runs WHERE project = ? AND task = ? AND status = ?"
                    " AND cache IN (?, ?, ?, ?) AND tainted = 0"
                    " AND (reason IS NULL OR reason != ?) LIMIT 1",
                    (
                        *(project, task, str(TaskStatus.SUCCESS), str(CacheOutcome.MISS)),
                        *(*_HITS, NOT_SAVED),
                    ),
                )
                .fetchone()
            )
        except sqlite3.DatabaseError as err:
            self._damaged(err)
            return False
        return row is not None

    def invocations(
        self, *, limit: int, failed: bool = False, prefix: str = ""
    ) -> list[InvocationRow]:
        """Recorded runs, newest first (the order they were recorded, not their clocks);
        `failed` keeps those that exited non-zero, `prefix` those whose id starts with it."""
        rows = self._history(
            "SELECT run_id, command, started_at, ended_at, exit_code, git_branch, git_sha,"
            " ci_provider, tags, tasks, cache_hits, failed, skipped FROM invocations"
            " WHERE run_id >= ? AND run_id < ? AND (? = 0 OR exit_code != 0)"
            " ORDER BY rowid DESC LIMIT ?",
            (prefix, prefix + "\uffff", int(failed), limit),
        )
        return _invocations(rows)

    def run_rows(self, run_id: str) -> list[RunRow]:
        """One run's task rows, in the order they finished."""
        rows = self._history(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ? ORDER BY id",  # noqa: S608
            (run_id,),
        )
        return _run_rows(rows)

    def task_runs(self, project: str, task: str, *, limit: int) -> list[tuple[RunRow, int]]:
        """The task's newest rows with their run's start (ms), newest first, through
        `runs_by_task`."""
        rows = self._history(
            f"SELECT {_RUN_COLUMNS}, (SELECT i.started_at FROM invocations AS i"  # noqa: S608
            " WHERE i.run_id = runs.run_id) FROM runs WHERE project = ? AND task = ?"
            " ORDER BY id DESC LIMIT ?",
            (project, task, limit),
        )
        out = []
        for row in rows:
            started = row[-1] if type(row[-1]) is int else 0
            out += [(run, started) for run in _run_rows([row[:-1]])]
        return out

    def _history(self, sql: str, params: Sequence[object]) -> list[tuple[object, ...]]:
        """The rows of a history query; none when the tables do not read (a table gone, a
        rotten page): what `vx last`, `vx why` and `vx info` show of a damaged history is a
        shorter one, never a stack. A run meets the damage on its own reads and writes."""
        try:
            return self._conn().execute(sql, params).fetchall()
        except sqlite3.DatabaseError:
            return []

    def task_ids(self) -> list[tuple[str, str]]:
        """Every (project, task) any recorded run holds: what a name is resolved against."""
        rows = self._history("SELECT DISTINCT project, task FROM runs ORDER BY 1, 2", ())
        return [(p, t) for p, t in rows if isinstance(p, str) and isinstance(t, str)]


_RUN_COLUMNS = (
    "run_id, project, task, status, cache, key, exit_code, duration_ms, cpu_ms,"
    " peak_rss_bytes, started_ns, ended_ns, attempts, timed_out, blocked_by, reason, tainted"
)


def _run_rows(rows: Iterable[Sequence[object]]) -> list[RunRow]:
    """The rows that read as vx wrote them (`run_from_row`); the rest are left out."""
    return [RunRow(*v) for v in map(run_from_row, rows) if v is not None]  # type: ignore[arg-type]


def _invocations(rows: Iterable[Sequence[object]]) -> list[InvocationRow]:
    return [
        InvocationRow(*v)  # type: ignore[arg-type]
        for v in map(invocation_from_row, rows)
        if v is not None
    ]


def _insert_runs(tx: sqlite3.Connection, rows: Iterable[RunRow]) -> None:
    tx.executemany(
        "INSERT INTO runs (run_id, project, task, status, exit_code, key, cache, cache_hit,"
        " duration_ms, cpu_ms, peak_rss_bytes, started_ns, ended_ns, attempts, timed_out,"
        " blocked_by, reason, tainted)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                *(r.run_id, r.project, r.task, str(r.status), r.exit_code, r.key, str(r.cache)),
                *(int(r.cache in _HITS), r.duration_ms, r.cpu_ms, r.peak_rss_bytes),
                *(r.started_ns, r.ended_ns, r.attempts, int(r.timed_out), r.blocked_by, r.reason),
                int(r.tainted),
            )
            for r in rows
        ),
    )
