"""The task graph: frozen nodes, their dependency and dependant edges, what was asked for."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.graph import algo
from vx.util.record import Frozen, Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from vx.ids import TaskId
    from vx.workspace.model import Project, TaskDef


class TaskNode(Record):
    """One task of the graph, with the project it belongs to."""

    id: TaskId
    project: Project
    task: TaskDef

    @property
    def is_group(self) -> bool:
        """Runs nothing: it stands for its dependencies."""
        return self.task.is_group


class TaskGraph(Frozen):
    """Every task a run needs, with its edges in both directions (each tuple sorted).

    `requested` holds the tasks the user asked for (forwarded args reach only these).
    `excluded` holds the tasks `--exclude-dependencies` dropped: they stay in the graph so
    their keys, and those of tasks behind them, are the ones a full run derives, but they
    run nothing and order like a group — done when their own dependencies are.
    """

    __slots__ = ("dependents", "deps", "excluded", "nodes", "requested")
    nodes: Mapping[TaskId, TaskNode]
    deps: Mapping[TaskId, tuple[TaskId, ...]]
    dependents: Mapping[TaskId, tuple[TaskId, ...]]
    requested: frozenset[TaskId]
    excluded: frozenset[TaskId]

    def __init__(
        self,
        nodes: Mapping[TaskId, TaskNode],
        deps: Mapping[TaskId, tuple[TaskId, ...]],
        dependents: Mapping[TaskId, tuple[TaskId, ...]],
        requested: frozenset[TaskId],
        excluded: frozenset[TaskId] = frozenset(),
    ) -> None:
        ids = nodes.keys()
        if not (len(deps) == len(dependents) == len(ids)):
            raise ValueError("every node needs a deps and a dependents entry")
        if not (requested <= ids and excluded <= ids):
            raise ValueError("requested and excluded tasks must be nodes")
        if requested & excluded:
            raise ValueError("a requested task cannot be excluded")
        self._init(
            nodes=nodes, deps=deps, dependents=dependents, requested=requested, excluded=excluded
        )

    @classmethod
    def create(
        cls,
        nodes: Mapping[TaskId, TaskNode],
        deps: Mapping[TaskId, Iterable[TaskId]],
        requested: Iterable[TaskId],
        excluded: Iterable[TaskId] = (),
    ) -> TaskGraph:
        """Freeze a graph: sort every edge list and derive the dependants."""
        sorted_deps = {
            tid: tuple(sorted(set(deps[tid]), key=algo.sort_key))
            for tid in sorted(nodes, key=algo.sort_key)
        }
        return cls(
            nodes=MappingProxyType({tid: nodes[tid] for tid in sorted_deps}),
            deps=MappingProxyType(sorted_deps),
            dependents=MappingProxyType(algo.reverse(sorted_deps)),
            requested=frozenset(requested),
            excluded=frozenset(excluded),
        )

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, tid: object) -> bool:
        return tid in self.nodes

    def topo_order(self) -> tuple[TaskId, ...]:
        """Dependencies first; ties broken by id, so the order is stable."""
        return algo.topo_order(self.deps)

    def is_group(self, tid: TaskId) -> bool:
        """The task runs no command of its own."""
        return self.nodes[tid].task.is_group

    def runs(self, tid: TaskId) -> bool:
        """The task executes a command in this run: a real task not dropped by exclusion."""
        return not self.nodes[tid].task.is_group and tid not in self.excluded

    def real_deps(self, tid: TaskId) -> tuple[TaskId, ...]:
        """The nearest real tasks below `tid`, seen through groups."""
        return algo.nearest(self.deps, tid, self.is_group)

    def run_deps(self, tid: TaskId) -> tuple[TaskId, ...]:
        """The nearest tasks below `tid` that execute, seen through groups and excluded tasks."""
        return algo.nearest(self.deps, tid, lambda t: not self.runs(t))

    def upstream(self, ids: Iterable[TaskId]) -> frozenset[TaskId]:
        """`ids` and everything they depend on, directly or not."""
        return algo.closure(self.deps, ids)

    def downstream(self, ids: Iterable[TaskId]) -> frozenset[TaskId]:
        """`ids` and everything that depends on them, directly or not."""
        return algo.closure(self.dependents, ids)

    def subgraph(self, keep: Iterable[TaskId]) -> TaskGraph:
        """The graph cut down to `keep`, with the edges between kept tasks."""
        kept = frozenset(keep) & self.nodes.keys()
        return TaskGraph.create(
            nodes={tid: self.nodes[tid] for tid in kept},
            deps=algo.subgraph(self.deps, kept),
            requested=self.requested & kept,
            excluded=self.excluded & kept,
        )
