"""Flaky tasks: one cache key that failed after it had passed, or a pass that took a retry.

Only outcomes on a key count, so a task without a `cache` block (whose key says nothing of
its inputs) is never judged; a failure on a key that never passed is a break, and the first
pass after only failures a recovery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vx.cache.outcomes import HISTORY_MS, judge_key

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vx.cache.outcomes import KeyRecord

__all__ = ["HISTORY_MS", "FlakyTask", "flaky_tasks", "judge_key"]

Outcome = tuple[str, str, str, str, int]
"""`(project, task, key, status, attempts)`, oldest first: `Index.key_outcomes`' rows."""


@dataclass(frozen=True, slots=True)
class FlakyTask:
    """A task `vx info` lists: how many of its keys flaked and the outcomes over those keys."""

    project: str
    task: str
    keys: int
    passes: int
    failures: int

    @property
    def task_id(self) -> str:
        return f"{self.project}#{self.task}"


def flaky_tasks(rows: Iterable[Outcome]) -> tuple[FlakyTask, ...]:
    """Every task with a flaky key, most failures first, then by id."""
    by_key: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
    for project, task, key, status, attempts in rows:
        by_key.setdefault((project, task, key), []).append((status, attempts))
    per_task: dict[tuple[str, str], list[KeyRecord]] = {}
    for (project, task, _), outcomes in by_key.items():
        record = judge_key(outcomes)
        if record.flaky:
            per_task.setdefault((project, task), []).append(record)
    found = [
        FlakyTask(
            project,
            task,
            len(records),
            sum(r.passes for r in records),
            sum(r.failures for r in records),
        )
        for (project, task), records in per_task.items()
    ]
    return tuple(sorted(found, key=lambda f: (-f.failures, f.task_id)))
