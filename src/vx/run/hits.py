"""A cache hit, and the events it becomes: its recorded log replayed, then its `TaskFinished`.

The executor (one hit inside a run) and the warm replay (a run of hits replayed whole) both
go through `emit_hit`, so a hit's rows, logs, outcome and duration read the same on either
path. Kept apart from the cache seam (`run/caching.py`) so the warm path imports only this.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from vx.events import CacheOutcome, TaskFinished, TaskOutput, TaskStatus
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vx.events import Event, Stream
    from vx.ids import TaskId


class Hit(Record):
    """A usable entry for a task's key, with what its producing run recorded."""

    key: str
    log: Iterable[tuple[Stream, str]]
    """Read once, as it is replayed: a stored log streams from the index a block at a time."""
    duration_ms: float
    cpu_ms: float | None
    remote: bool = False  # the entry came from the remote layer this run


def hit_outcome(hit: Hit, *, restored: bool) -> CacheOutcome:
    """A remote hit says so whether or not it wrote outputs; a local one, whether it did."""
    if hit.remote:
        return CacheOutcome.REMOTE
    return CacheOutcome.LOCAL if restored else CacheOutcome.UP_TO_DATE


def emit_hit(
    emit: Callable[[Event], None],
    tid: TaskId,
    hit: Hit,
    *,
    restored: bool,
    started: float,
    clock: Callable[[], float] = time.monotonic,
) -> TaskFinished:
    """Replay the hit's log, then finish the task; its duration runs from `started` (on
    `clock`) to now: what taking the hit cost this run, the restore included."""
    for stream, text in hit.log:
        emit(TaskOutput(tid, stream, text))
    done = TaskFinished(
        tid,
        TaskStatus.SUCCESS,
        hit_outcome(hit, restored=restored),
        duration_ms=(clock() - started) * 1000,
        exit_code=0,
        key=hit.key,
        saved_ms=hit.duration_ms,
        restored=restored,
        stored_cpu_ms=hit.cpu_ms,
    )
    emit(done)
    return done
