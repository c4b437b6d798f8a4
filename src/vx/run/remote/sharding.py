"""A sharded run's part of the plan: the digest, the deal, and the cut this shard executes.

Every shard keys and predicts the whole plan, deals its tasks with `vx.shard.deal` and keeps
the tasks it owns with everything they depend on. A dependency another shard owns stays in
the cut, marked to be awaited from the shared remote cache rather than executed here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import PlanStatus
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cache.remote.base import RemoteCache
    from vx.ids import TaskId
    from vx.run.cachespec import CacheAxes
    from vx.run.plan import RunPlan
    from vx.run.prepare import RunOptions
    from vx.shard.deal import Deal
    from vx.shard.spec import ShardSpec

RESTORE_MS = 50.0
"""What a predicted hit weighs in the deal: a restore, not its command's duration."""


class ShardPlan(Record):
    """The whole plan's digest and deal, as every shard of the run computes them."""

    spec: ShardSpec
    digest: str
    deal: Deal


class ShardCut(Record):
    """What this shard runs: `plan` holds its tasks and their dependencies; `awaited` maps
    each dependency another shard owns to that shard's label (`3/4`); `owned` counts the
    tasks dealt to this one."""

    plan: RunPlan
    awaited: Mapping[TaskId, str]
    owned: int


def shard_plan(plan: RunPlan, spec: ShardSpec, options: RunOptions) -> ShardPlan:
    """Digest and deal a keyed, predicted plan (what `plan_run`'s predictions give)."""
    from vx.shard.deal import deal
    from vx.shard.digest import plan_digest

    if plan.keys is None or plan.predictions is None:
        raise AssertionError("a shard plan needs the keys and predictions")
    keys = plan.keys.keys
    digest = plan_digest(
        ((t, keys[t], plan.nodes[t].runs) for t in plan.order),
        shards=spec.total,
        flags=_flags(options),
    )
    dealt = [t for t in plan.order if plan.nodes[t].runs]
    edges = {t: plan.graph.run_deps(t) for t in dealt}
    return ShardPlan(spec, digest, deal(dealt, costs(plan, dealt), edges, spec.total))


def _flags(options: RunOptions) -> list[str]:
    """The flags that change what a shard does with a task it was dealt."""
    return [
        f"force={int(options.force)}",
        f"no-cache={int(options.no_cache)}",
        f"cache={options.cache or ''}",
    ]


def costs(plan: RunPlan, tasks: list[TaskId]) -> dict[TaskId, float]:
    """Each task's expected cost: a restore for a predicted hit, else its history's p50, else
    the estimate the scheduler makes for a task without history."""
    from vx.graph.critical import estimate_costs

    guesses = plan.predictions or {}
    known = {t: p for t in tasks if (g := guesses.get(t)) and (p := g.p50_ms) is not None}
    estimated = estimate_costs(tasks, known)
    hit = PlanStatus.HIT_LOCAL
    return {
        t: RESTORE_MS if (g := guesses.get(t)) and g.status is hit else estimated[t] for t in tasks
    }


def settle_shard(
    spec: ShardSpec,
    options: RunOptions,
    plan: RunPlan,
    axes: CacheAxes,
    *,
    history: Mapping[tuple[str, str], tuple[float, ...]] | None,
    entries: set[str],
    remote: RemoteCache | None,
) -> tuple[ShardCut, list[str]]:
    """Deal the keyed plan, settle the digest and deal with the run's other shards through
    the remote cache's record, and cut this shard's part; the notices to print with it.

    Raises UserError when the run's record holds another digest.
    """
    from vx.cache.remote.base import RemoteError, Untrusted
    from vx.run.predict import predict
    from vx.shard.claim import settle

    if plan.keys is None:
        raise AssertionError("a shard is cut from a keyed plan")
    predicted = predict(plan, plan.keys, axes, has_entry=entries.__contains__, history=history)
    sharded = shard_plan(predicted, spec, options)
    owners = sharded.deal.owners
    notes: list[str] = []
    record = ""
    if remote is None:
        notes.append(
            f"shard {spec.label}: no remote cache, so the shards neither compare plans nor"
            " share outputs: this one runs every dependency its tasks need"
        )
    elif spec.run_id is None:
        notes.append(
            f"shard {spec.label}: no run id (GITHUB_RUN_ID, CI_PIPELINE_ID, CIRCLE_WORKFLOW_ID"
            " or --shard-run), so the shards' plans are not compared"
        )
    else:
        try:
            claim = settle(remote, spec, sharded.digest, owners)
        except (RemoteError, Untrusted) as err:
            notes.append(
                f"shard {spec.label}: {remote.label} could not keep the run's record ({err}),"
                " so the shards' plans are not compared"
            )
        else:
            owners = claim.owners
            record = (
                f" (recorded for run {spec.run_id})"
                if claim.first
                else f" (matches run {spec.run_id}'s record)"
            )
    part = cut(plan, spec, owners)
    if remote is None or not axes.remote_read:
        part = part._replace(awaited=MappingProxyType({}))
    dealt = len(sharded.deal.owners)
    notes.insert(
        0,
        f"shard {spec.label} · plan digest {sharded.digest}{record} · {part.owned} of {dealt} tasks"
        f" dealt here, {len(part.awaited)} awaited from other shards",
    )
    return part, notes


def cut(plan: RunPlan, spec: ShardSpec, owners: Mapping[TaskId, int]) -> ShardCut:
    """Shard `spec`'s tasks under `owners` (0-based), with what they depend on."""
    me = spec.number - 1
    mine = [t for t, s in owners.items() if s == me]
    keep = plan.graph.upstream(mine)
    awaited = {
        t: f"{owners[t] + 1}/{spec.total}"
        for t in keep
        if t in owners and owners[t] != me and plan.nodes[t].task.cache_spec is not None
    }
    part = plan._replace(
        graph=plan.graph.subgraph(keep),
        nodes=MappingProxyType({t: n for t, n in plan.nodes.items() if t in keep}),
        order=tuple(t for t in plan.order if t in keep),
        projects_in_run=len({t.project for t in keep}),
    )
    return ShardCut(part, MappingProxyType(awaited), len(mine))
