"""RunOutcome: what a run did, light enough for a replayed warm run to build without the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.events import TaskFinished
    from vx.ids import TaskId
    from vx.run.plan import RunPlan


class RunOutcome(Record):
    """What the run did: its verdict, each task's final word, and its wall-clock span.

    `plan` is what ran, for a summary document; a replayed warm run has none.
    """

    run_id: str
    exit_code: int
    signal: int | None
    finished: tuple[TaskFinished, ...]
    started_at: float
    ended_at: float
    wall_ms: float
    spans: Mapping[TaskId, tuple[int, int]]
    failure_logs: Mapping[TaskId, str]
    plan: RunPlan | None = None
