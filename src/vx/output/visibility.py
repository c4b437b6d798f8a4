"""What prints for each task, by the run's flow and output mode: the visibility table."""

from __future__ import annotations

from enum import StrEnum

from vx.events import CacheOutcome, TaskFinished, TaskStatus


class Flow(StrEnum):
    """The intent a run's invocation reveals; CI wins over the other two."""

    FOCUSED = "focused"
    BROAD = "broad"
    CI = "ci"


class OutputLogs(StrEnum):
    """`--output-logs`: an explicit override of what the flow would print."""

    FULL = "full"
    ERRORS_ONLY = "errors-only"
    HASH_ONLY = "hash-only"
    NONE = "none"


class Column(StrEnum):
    """Which column of the table a task reads from."""

    REQUESTED = "focused (requested task)"
    DEPENDENCY = "focused (dependency)"
    BROAD = "broad"
    FULL = "CI / full"
    ERRORS_ONLY = "errors-only"
    HASH_ONLY = "hash-only"
    NONE = "none"


class Kind(StrEnum):
    """A task's outcome as the table tells them apart."""

    EXECUTED = "executed"
    RESTORED = "restored-local/-remote"
    UP_TO_DATE = "up-to-date"
    FAILED = "failed"
    SKIPPED = "skipped"
    ABORTED = "aborted"
    NOT_RUN = "not run"
    RUNNING = "running"


class Shape(StrEnum):
    """What prints: the table's fixed vocabulary, plus the hash-only line."""

    SILENT = "silent"
    ONE_LINER = "one-liner"
    FRAME = "frame"
    FRAME_UNLESS_QUIET = "frame, or one-liner if quiet"
    ONE_LINER_THEN_FRAME = "one-liner + frame replays"
    HASH_LINE = "hash line"


def kind_of(finished: TaskFinished) -> Kind:
    status = finished.status
    if status is not TaskStatus.SUCCESS:
        return Kind(status.value)
    if finished.cache in {CacheOutcome.LOCAL, CacheOutcome.REMOTE}:
        return Kind.RESTORED
    if finished.cache is CacheOutcome.UP_TO_DATE:
        return Kind.UP_TO_DATE
    return Kind.EXECUTED


_S, _1, _F = Shape.SILENT, Shape.ONE_LINER, Shape.FRAME
_FQ, _1F = Shape.FRAME_UNLESS_QUIET, Shape.ONE_LINER_THEN_FRAME

_ORDER = (
    Kind.EXECUTED,
    Kind.RESTORED,
    Kind.UP_TO_DATE,
    Kind.FAILED,
    Kind.SKIPPED,
    Kind.ABORTED,
    Kind.NOT_RUN,
    Kind.RUNNING,
)
_COLUMNS: dict[Column, tuple[Shape, ...]] = {
    #                  exec restored fresh failed skipped aborted not-run running
    Column.REQUESTED: (_F, _F, _F, _F, _1, _FQ, _1, _F),
    Column.DEPENDENCY: (_S, _S, _S, _1F, _1, _1, _1, _S),
    Column.BROAD: (_1, _S, _S, _1F, _1, _1, _1, _1),
    Column.FULL: (_F, _FQ, _FQ, _F, _1, _FQ, _1, _F),
    Column.ERRORS_ONLY: (_S, _S, _S, _F, _1, _1, _1, _S),
    Column.HASH_ONLY: (Shape.HASH_LINE,) * len(_ORDER),
    Column.NONE: (_S,) * len(_ORDER),
}

VISIBILITY: dict[tuple[Kind, Column], Shape] = {
    (kind, column): shapes[i]
    for column, shapes in _COLUMNS.items()
    for i, kind in enumerate(_ORDER)
}
"""The table: an aborted task that printed keeps its frame where frames are shown; a server
still up at the end reads like an executed task; skips and stop rows always get a row."""

_EXPLICIT = {
    OutputLogs.FULL: Column.FULL,
    OutputLogs.ERRORS_ONLY: Column.ERRORS_ONLY,
    OutputLogs.HASH_ONLY: Column.HASH_ONLY,
    OutputLogs.NONE: Column.NONE,
}


def column_for(flow: Flow, output_logs: OutputLogs | None, *, requested: bool) -> Column:
    """An explicit `--output-logs` beats the flow; CI reads as `full`."""
    if output_logs is not None:
        return _EXPLICIT[output_logs]
    if flow is Flow.CI:
        return Column.FULL
    if flow is Flow.BROAD:
        return Column.BROAD
    return Column.REQUESTED if requested else Column.DEPENDENCY


def shape_for(finished: TaskFinished, column: Column) -> Shape:
    return VISIBILITY[(kind_of(finished), column)]
