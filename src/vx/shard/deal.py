"""Dealing a plan's tasks onto N shards by expected cost, keeping neighbours together.

Longest first onto the least-loaded shard (LPT), with two pulls toward fewer cross-shard
dependencies: a connected group of tasks that fits in one shard's fair share goes whole, and a
task of a larger group goes to the shard holding most of its already-dealt neighbours when it
still fits there. Pure and deterministic: ties break by task id and shard number, so every
shard that computes the deal from the same inputs gets the same one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.ids import TaskId


class Deal(Record):
    """Which shard (0-based) owns each task, and each shard's expected load in ms."""

    owners: Mapping[TaskId, int]
    loads: tuple[float, ...]

    @property
    def ideal_ms(self) -> float:
        """The load of a perfect split: the total over the shard count."""
        return sum(self.loads) / len(self.loads) if self.loads else 0.0

    def tasks_of(self, shard: int) -> tuple[TaskId, ...]:
        """The tasks shard `shard` (0-based) owns, in id order."""
        return tuple(sorted(t for t, s in self.owners.items() if s == shard))


def deal(
    tasks: Sequence[TaskId],
    costs: Mapping[TaskId, float],
    edges: Mapping[TaskId, Sequence[TaskId]],
    shards: int,
) -> Deal:
    """Deal `tasks` (each with its cost in `costs`) onto `shards` shards.

    `edges` are each task's dependencies among `tasks` (either direction will do: they are
    used as undirected neighbourhoods).
    """
    near = _neighbours(tasks, edges)
    ideal = sum(costs[t] for t in tasks) / shards if shards else 0.0
    units: list[tuple[float, tuple[TaskId, ...]]] = []
    for group in _components(tasks, near):
        weight = sum(costs[t] for t in group)
        if weight <= ideal:
            units.append((weight, group))
        else:
            units.extend((costs[t], (t,)) for t in group)
    units.sort(key=lambda u: (-u[0], u[1][0]))
    loads = [0.0] * shards
    owners: dict[TaskId, int] = {}
    for weight, group in units:
        target = _least_loaded(loads)
        if len(group) == 1:
            pulled = _pull(group[0], near, owners, shards)
            if pulled is not None and loads[pulled] + weight <= ideal:
                target = pulled
        for tid in group:
            owners[tid] = target
        loads[target] += weight
    return Deal(owners, tuple(loads))


def _neighbours(
    tasks: Sequence[TaskId], edges: Mapping[TaskId, Sequence[TaskId]]
) -> dict[TaskId, set[TaskId]]:
    near: dict[TaskId, set[TaskId]] = {t: set() for t in tasks}
    for tid in tasks:
        for dep in edges.get(tid, ()):
            if dep in near and dep != tid:
                near[tid].add(dep)
                near[dep].add(tid)
    return near


def _components(
    tasks: Sequence[TaskId], near: Mapping[TaskId, set[TaskId]]
) -> list[tuple[TaskId, ...]]:
    """The connected groups, each sorted, in the order of their first task."""
    seen: set[TaskId] = set()
    groups: list[tuple[TaskId, ...]] = []
    for start in sorted(tasks):
        if start in seen:
            continue
        seen.add(start)
        stack, group = [start], [start]
        while stack:
            for other in near[stack.pop()]:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
                    group.append(other)
        groups.append(tuple(sorted(group)))
    return groups


def _least_loaded(loads: list[float]) -> int:
    return min(range(len(loads)), key=lambda i: (loads[i], i))


def _pull(
    tid: TaskId, near: Mapping[TaskId, set[TaskId]], owners: Mapping[TaskId, int], shards: int
) -> int | None:
    """The shard holding most of `tid`'s dealt neighbours (the lowest on a tie), if any."""
    counts = [0] * shards
    for other in near[tid]:
        owner = owners.get(other)
        if owner is not None:
            counts[owner] += 1
    best = max(range(shards), key=lambda i: (counts[i], -i))
    return best if counts[best] else None
