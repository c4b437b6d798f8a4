"""The history questions a run asks beside its cache: why a task missed, whether it is flaky,
and what each task cost when it last succeeded (the scheduler's order).

They read `cache.db`'s run history and entries through the run's one `Index`, but they are
no part of probing, restoring or saving, so the cache seam (`run/caching.py`) does not carry
them. Each answer degrades to "unknown" when the history cannot be read.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from vx.cache.index import Index
    from vx.events import MissReason
    from vx.ids import TaskId
    from vx.run.keys import KeySet


class TaskHistory:
    """The run's history questions, over the index the run's cache opened."""

    def __init__(
        self,
        index: Index,
        keys: KeySet,
        *,
        cached: Callable[[TaskId], bool],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.index = index
        self.keys = keys
        self.cached = cached
        """Whether the run's cache answers for a task: only then has its key a history."""
        self.clock = clock

    def miss_reason(self, tid: TaskId) -> MissReason | None:
        """The first component of the task's key that moved since the newest entry any run of
        it left, read from the index's `entry_inputs`; with no entry left, `pruned` when a
        run of it did save or hit one, else `first run`.

        Asked only of a task about to execute, so an all-hit run never pays for it.
        """
        if not self.cached(tid):
            return None
        import sqlite3  # already loaded by the index; named here for its error type

        from vx.cache.diff import diff_components
        from vx.events import MissReason

        try:
            before = self.index.last_entry_inputs(tid.project, tid.task)
        except sqlite3.Error:
            return None
        if before is None:
            gone = self.index.kept_before(tid.project, tid.task)
            return MissReason("pruned" if gone else "first run")
        changes = diff_components(before, self.keys.components[tid])
        if not changes:
            return MissReason("same key")
        first = changes[0]
        return MissReason(str(first.kind), first.name, first.how)

    def flaky(self, tid: TaskId, status: str, attempts: int) -> tuple[int, int] | None:
        """`(passes, failures)` on record for the task's key, this run included, when the run
        that just executed it showed it flaky; None otherwise or when uncached.

        One query through `runs_by_task`; a history that cannot be read judges nothing. This
        run's own row is not written yet, so it is added here.
        """
        key = self.keys.keys.get(tid)
        if key is None or not self.cached(tid) or self.index.off is not None:
            return None
        import sqlite3  # already loaded by the index; named here for its error type

        from vx.cache.outcomes import HISTORY_MS, judge_run

        since = int(self.clock() * 1000) - HISTORY_MS
        try:
            rows = self.index.key_outcomes(since, (tid.project, tid.task, key))
        except sqlite3.Error:
            return None
        record = judge_run(((s, a) for *_, s, a in rows), status, attempts)
        return (record.passes, record.failures) if record.flaky else None

    def durations(self, ids: Sequence[TaskId]) -> Mapping[TaskId, float]:
        """The history's last successful execution time of each task (ms), where known.

        Read whatever the cache axes say: the history is written on every run, `--no-cache`
        and `--force` included. It only orders the ready tasks (critical path first), so a
        history that cannot be read costs the order, not the run.
        """
        import sqlite3  # already loaded by the index; named here for its error type

        try:
            found = self.index.recent_durations((t.project, t.task) for t in ids)
        except sqlite3.Error:
            return {}
        return {t: found[t.project, t.task] for t in ids if (t.project, t.task) in found}
