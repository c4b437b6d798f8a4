"""What a plan predicts: each task's cache status and usual cost, and the run's forecast.

The status answers the questions a run's cache would (`LocalCache.cached`, `predicted_hit`)
under the same axes, from an index opened for reading only, so `--dry` says what the next run
does and writes nothing. Pure over its inputs: the entry probe and the history come in.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import PlanStatus
from vx.graph.critical import critical_path, longest_remaining, median
from vx.run.deferral import deferred_servers
from vx.run.plan import Forecast, Prediction

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.ids import TaskId
    from vx.run.cachespec import CacheAxes
    from vx.run.keys import KeySet
    from vx.run.plan import PlanNode, RunPlan


def status_of(
    node: PlanNode, key: str, axes: CacheAxes, has_entry: Callable[[str], bool]
) -> PlanStatus:
    """The task's predicted status: what the scheduler and executor would make of it."""
    if node.excluded:
        return PlanStatus.EXCLUDED
    if node.task.is_group:
        return PlanStatus.GROUP
    if node.task.cache_spec is None or not axes.answers:
        return PlanStatus.NO_CACHE
    if axes.local_read and has_entry(key):
        return PlanStatus.HIT_LOCAL
    return PlanStatus.MISS


def predict(
    plan: RunPlan,
    keys: KeySet,
    axes: CacheAxes,
    *,
    has_entry: Callable[[str], bool],
    history: Mapping[tuple[str, str], tuple[float, ...]] | None,
) -> RunPlan:
    """The plan with its predictions, forecast and axes filled in.

    `history` holds each task's recent successful execution times (ms); None when it could not
    be read, and then the plan carries no forecast. Every real task with history gets its
    p50, hits and excluded tasks included; the forecast counts only the would-run ones. A
    server only predicted hits depend on is `NOT_STARTED`, as the run would leave it.
    """

    seen = history or {}
    predictions: dict[TaskId, Prediction] = {}
    for tid in plan.order:
        node = plan.nodes[tid]
        status = status_of(node, keys.keys[tid], axes, has_entry)
        times = seen.get((tid.project, tid.task)) if status is not PlanStatus.GROUP else None
        why = plan.reasons.get(tid) if plan.reasons is not None else None
        predictions[tid] = Prediction(status, median(list(times)) if times else None, why)
    hits = {t for t, p in predictions.items() if p.status is PlanStatus.HIT_LOCAL}
    for tid in deferred_servers(plan, hits.__contains__):
        predictions[tid] = predictions[tid]._replace(status=PlanStatus.NOT_STARTED)
    frozen = MappingProxyType(predictions)
    outlook = None if history is None else forecast(plan, frozen)
    return plan._replace(keys=keys, predictions=frozen, forecast=outlook, axes=axes)


def forecast(plan: RunPlan, predictions: Mapping[TaskId, Prediction]) -> Forecast:
    """Wall (longest chain of would-run cost), total work, the unknowns, and that chain."""
    cost: dict[TaskId, float] = {}
    unknown = 0
    for tid, guess in predictions.items():
        if not guess.would_run:
            continue
        if guess.p50_ms is None:
            unknown += 1
        else:
            cost[tid] = guess.p50_ms
    chains = longest_remaining(plan.order, plan.graph.deps, cost)
    wall = max(chains.values(), default=0.0)
    return Forecast(
        wall,
        sum(cost.values(), 0.0),
        unknown,
        critical_path(plan.order, plan.graph.dependents, chains, cost),
    )
