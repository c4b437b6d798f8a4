"""Selection + graph (+ keys) → RunPlan: everything a run decides before anything executes."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import PlanStatus
from vx.graph.select import forward_targets, surfaced_tasks
from vx.run.forward import append_args
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.events import AffectedReason
    from vx.graph.model import TaskGraph
    from vx.ids import TaskId
    from vx.run.cachespec import CacheAxes
    from vx.run.keys import KeySet
    from vx.run.remote.sharding import ShardPlan
    from vx.workspace.model import Project, TaskDef, Workspace

_WOULD_RUN = frozenset({PlanStatus.MISS, PlanStatus.NO_CACHE})


class PlanNode(Record):
    """One task as this run will treat it.

    `command` is what runs (forwarded args appended on requested tasks), None for a group;
    `surfaced` marks what the output shows as requested (a requested group's real tasks).
    """

    id: TaskId
    project: Project
    task: TaskDef
    command: str | None
    requested: bool
    surfaced: bool
    excluded: bool
    forward: tuple[str, ...]

    @property
    def runs(self) -> bool:
        """The task executes a command in this run."""
        return self.command is not None and not self.excluded


class Prediction(Record):
    """What `plan_run` expects of one task: its cache status, and what it usually costs.

    `p50_ms` is the median of its recent successful executions in the history (hits left
    out), None without any; `affected` is why `--affected` kept it, None otherwise.
    """

    status: PlanStatus
    p50_ms: float | None = None
    affected: AffectedReason | None = None

    @property
    def would_run(self) -> bool:
        """The task would execute its command (a miss or an uncached task)."""
        return self.status in _WOULD_RUN


class Forecast(Record):
    """The run's predicted cost, from the would-run tasks' history.

    `wall_ms` is the longest dependency chain of would-run cost (hits and tasks without
    history weigh nothing), `work_ms` their sum, `unknown` how many would-run tasks have no
    history, and `critical_path` the would-run tasks with history on that chain,
    dependencies first. All are lower bounds when `unknown` is not 0.
    """

    wall_ms: float
    work_ms: float
    unknown: int
    critical_path: tuple[TaskId, ...]


class RunPlan(Record):
    """The frozen plan: graph, nodes in a stable topological order, and the projects covered.

    `keys` is every task's cache key once the plan has been keyed (`plan_run`, `prepare_run`).
    `plan_run` also predicts: each task's `predictions` under the cache `axes` the options
    resolve to, and the `forecast` (None when the history could not be read). `notes` are
    what selection wants said: a `[<ref>]` filter that left nothing to run, a task name no
    project it chose declares. `reasons` says why `--affected` kept each requested task.
    `shards` is the digest and deal of a `--shard` plan (`plan_run` under `--dry --shard`).
    """

    workspace: Workspace
    graph: TaskGraph
    nodes: Mapping[TaskId, PlanNode]
    order: tuple[TaskId, ...]
    projects_in_run: int
    keys: KeySet | None = None
    predictions: Mapping[TaskId, Prediction] | None = None
    forecast: Forecast | None = None
    axes: CacheAxes | None = None
    notes: tuple[str, ...] = ()
    reasons: Mapping[TaskId, AffectedReason] | None = None
    shards: ShardPlan | None = None

    def real(self) -> tuple[PlanNode, ...]:
        """The nodes that are work (no groups), in order: what rows and counters speak of."""
        return tuple(n for tid in self.order if not (n := self.nodes[tid]).task.is_group)


def make_plan(ws: Workspace, graph: TaskGraph, forward: tuple[str, ...] = ()) -> RunPlan:
    """Freeze what runs: commands with their forwarded args, what is shown as requested."""
    takes_args = forward_targets(graph, forward)
    surfaced = surfaced_tasks(graph)
    nodes: dict[TaskId, PlanNode] = {}
    for tid, node in graph.nodes.items():
        spec = node.task.exec_spec
        args = forward if tid in takes_args else ()
        command = None if spec is None else append_args(spec.command, args)
        nodes[tid] = PlanNode(
            id=tid,
            project=node.project,
            task=node.task,
            command=command,
            requested=tid in graph.requested,
            surfaced=tid in surfaced,
            excluded=tid in graph.excluded,
            forward=args,
        )
    order = graph.topo_order()
    projects = {n.project.name for n in nodes.values()}
    return RunPlan(ws, graph, MappingProxyType(nodes), order, len(projects))
