"""Which persistent servers a run defers: those only predicted cache hits depend on.

A dev server exists for what talks to it; a dependant that restores from the cache talks to
nothing, so a server no one requested, whose every dependant is predicted a local hit, is not
started up front. The scheduler starts it late if a dependant's restore misses after all
(`vx.run.scheduler`), and `--dry` shows it `not started` (`vx.run.predict`): one rule for both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.ids import TaskId
    from vx.run.plan import RunPlan

NOT_STARTED_REASON = "not started: every dependant restored from the cache"


def deferred_servers(plan: RunPlan, hit: Callable[[TaskId], bool]) -> frozenset[TaskId]:
    """The unrequested persistent tasks with at least one dependant, each of them a `hit`."""
    deferred: set[TaskId] = set()
    for tid in plan.order:
        node = plan.nodes[tid]
        spec = node.task.exec_spec
        if spec is None or not spec.persistent or node.surfaced or node.excluded:
            continue
        dependants = plan.graph.dependents.get(tid, ())
        if dependants and all(hit(d) for d in dependants):
            deferred.add(tid)
    return frozenset(deferred)
