"""Flaky tasks: one cache key that failed after it had passed, or a pass that took a retry.

Only outcomes on a key count, so a task without a `cache` block (whose key says nothing of
its inputs) is never judged; a failure on a key that never passed is a break, and the first
pass after only failures a recovery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vx.events import TaskStatus

if TYPE_CHECKING:
    from collections.abc import Iterable

HISTORY_MS = 30 * 86_400_000
"""How far back flakiness is judged: what a cache typically keeps."""

Outcome = tuple[str, str, str, str, int]
"""`(project, task, key, status, attempts)`, oldest first: `Index.key_outcomes`' rows."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """The outcomes on record for one key: passes, failures (failed attempts of a retried
    pass included), and whether they show a flake."""

    passes: int
    failures: int
    flaky: bool


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


def judge_key(outcomes: Iterable[tuple[str, int]]) -> KeyRecord:
    """`(status, attempts)` of one key, oldest first → its record."""
    passes = failures = 0
    passed = flaky = False
    for status, attempts in outcomes:
        if status == TaskStatus.SUCCESS:
            passes += 1
            failures += max(0, attempts - 1)
            flaky = flaky or attempts > 1
            passed = True
        elif status == TaskStatus.FAILED:
            failures += 1
            flaky = flaky or passed
    return KeyRecord(passes, failures, flaky)


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
