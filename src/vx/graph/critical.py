"""Critical-path priorities: how long the work behind each task will keep the run going.

The scheduler starts, among the tasks ready at a moment, the one heading the longest chain of
expected work to the end of the run: a leaf that starts first while a long chain waits leaves
a worker idle at the end. Pure, ids and milliseconds only, so it is tested without a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.ids import TaskId

UNKNOWN_MS = 1000.0
"""The estimate when nothing in the run has a recorded duration. Every executing task then
weighs the same, so the longest chain is the one with the most tasks to execute."""


def estimate_costs(
    executing: Iterable[TaskId], known: Mapping[TaskId, float]
) -> dict[TaskId, float]:
    """Each executing task's expected duration in ms: the recorded one, else an estimate.

    A task with no record costs the median of the recorded durations of this run's tasks of
    the same name (a new package's `build` is likelier to cost what the other builds do than
    what a `lint` does), else the median of every recorded duration in the run, else
    `UNKNOWN_MS`. Medians, so one outlier does not decide the estimate.
    """
    tasks = list(dict.fromkeys(executing))
    recorded = {tid: known[tid] for tid in tasks if tid in known}
    by_name: dict[str, list[float]] = {}
    for tid, ms in recorded.items():
        by_name.setdefault(tid.task, []).append(ms)
    overall = median(list(recorded.values())) if recorded else UNKNOWN_MS
    name_medians = {name: median(values) for name, values in by_name.items()}
    return {
        tid: recorded[tid] if tid in recorded else name_medians.get(tid.task, overall)
        for tid in tasks
    }


def longest_remaining(
    order: Sequence[TaskId],
    deps: Mapping[TaskId, Sequence[TaskId]],
    cost: Mapping[TaskId, float],
) -> dict[TaskId, float]:
    """Each id's cost plus the costliest chain of its dependants: its start-to-finish path.

    `order` is topological (dependencies first), so one walk from its end sees every
    dependant before the ids it depends on. An id without a cost (a group, a restore, an
    excluded task) weighs nothing and still carries the chains behind it.
    """
    after: dict[TaskId, float] = {}
    priority: dict[TaskId, float] = {}
    for tid in reversed(order):
        mine = cost.get(tid, 0.0) + after.get(tid, 0.0)
        priority[tid] = mine
        for dep in deps.get(tid, ()):
            if mine > after.get(dep, 0.0):
                after[dep] = mine
    return priority


def critical_path(
    order: Sequence[TaskId],
    dependents: Mapping[TaskId, Sequence[TaskId]],
    chains: Mapping[TaskId, float],
    cost: Mapping[TaskId, float],
) -> tuple[TaskId, ...]:
    """The chain `longest_remaining` measured as longest, dependencies first.

    It starts at the first id in `order` whose chain is the longest and follows the costliest
    dependant each time; only the ids that carry a cost are kept (a group on the chain is not
    work). Empty when nothing costs anything.
    """
    wall = max(chains.values(), default=0.0)
    if wall <= 0:
        return ()
    here: TaskId | None = next(t for t in order if chains.get(t, 0.0) == wall)
    path: list[TaskId] = []
    while here is not None:
        if here in cost:
            path.append(here)
        after = dependents.get(here, ())
        best = max(after, key=lambda t: chains.get(t, 0.0), default=None)
        here = best if best is not None and chains.get(best, 0.0) > 0 else None
    return tuple(path)


def median(values: list[float]) -> float:
    """The middle of `values` (the mean of the two middles for an even count); not empty."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
