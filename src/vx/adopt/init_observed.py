"""What `vx init --observe` found, laid into the task drafts init renders: a cache block
written as a field, or the reason a task stays uncached, in place of the cache TODO."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.adopt.init_tasks import CACHE_REASON
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.adopt.init_tasks import TaskDraft


class Observation(Record):
    """What `vx init --observe` made of one task: the cache block it wrote from the trace, or
    why the task stays uncached."""

    block: Mapping[str, object] | None
    reason: str | None = None


def with_observed(
    tasks: tuple[TaskDraft, ...],
    rel_dir: str,
    observed: Mapping[tuple[str, str], Observation],
) -> tuple[TaskDraft, ...]:
    """Tasks with what `--observe` found: its cache block, or why there is none, in place of
    the cache TODO and its guessed block."""
    out = []
    for task in tasks:
        seen = observed.get((rel_dir, task.name))
        if seen is not None:
            todos = tuple(t for t in task.todos if t.reason != CACHE_REASON)
            task = task._replace(  # noqa: PLW2901 - the same task, with what was seen
                cache=seen.block, uncached=seen.reason, outputs=None, todos=todos
            )
        out.append(task)
    return tuple(out)
