"""The visibility table: every cell of the manual's table, looked up and then rendered."""

from __future__ import annotations

import io

import pytest

from vx.events import (
    CacheOutcome,
    PlannedTask,
    RunFinished,
    RunStarted,
    Stream,
    TaskFinished,
    TaskOutput,
    TaskStarted,
    TaskStatus,
)
from vx.ids import TaskId
from vx.output.console import Console
from vx.output.render import Renderer, RenderSettings
from vx.output.rows import format_row
from vx.output.style import Style
from vx.output.visibility import (
    VISIBILITY,
    Column,
    Flow,
    Kind,
    OutputLogs,
    Shape,
    column_for,
    kind_of,
)

# The manual's table, as printed there.
SPEC_TABLE = """\
| Outcome                | focused (requested task) | focused (dependency)      | broad                     | CI / `full`                  |
| ---------------------- | ------------------------ | ------------------------- | ------------------------- | ---------------------------- |
| executed               | frame                    | silent                    | one-liner                 | frame                        |
| restored-local/-remote | frame                    | silent                    | silent                    | frame, or one-liner if quiet |
| up-to-date             | frame                    | silent                    | silent                    | frame, or one-liner if quiet |
| failed                 | frame                    | one-liner + frame replays | one-liner + frame replays | frame                        |
| skipped                | one-liner                | one-liner                 | one-liner                 | one-liner                    |
"""

COLUMNS = (Column.REQUESTED, Column.DEPENDENCY, Column.BROAD, Column.FULL)


def spec_cells():
    rows = [line.strip("|").split("|") for line in SPEC_TABLE.splitlines()[2:]]
    for row in rows:
        kind, *shapes = (cell.strip() for cell in row)
        for column, shape in zip(COLUMNS, shapes, strict=True):
            yield Kind(kind), column, Shape(shape)


CELLS = list(spec_cells())


@pytest.mark.parametrize(("kind", "column", "shape"), CELLS)
def test_the_table_holds_every_cell_of_the_manual(kind, column, shape):
    assert VISIBILITY[(kind, column)] is shape


def test_every_kind_has_a_shape_in_every_column():
    assert len(VISIBILITY) == len(Kind) * len(Column)


@pytest.mark.parametrize(
    ("flow", "logs", "requested", "column"),
    [
        (Flow.FOCUSED, None, True, Column.REQUESTED),
        (Flow.FOCUSED, None, False, Column.DEPENDENCY),
        (Flow.BROAD, None, True, Column.BROAD),
        (Flow.BROAD, None, False, Column.BROAD),
        (Flow.CI, None, True, Column.FULL),
        (Flow.CI, None, False, Column.FULL),
        (Flow.FOCUSED, OutputLogs.FULL, True, Column.FULL),
        (Flow.CI, OutputLogs.ERRORS_ONLY, True, Column.ERRORS_ONLY),
        (Flow.BROAD, OutputLogs.HASH_ONLY, False, Column.HASH_ONLY),
        (Flow.CI, OutputLogs.NONE, False, Column.NONE),
    ],
)
def test_output_logs_beats_the_flow_and_ci_reads_as_full(flow, logs, requested, column):
    assert column_for(flow, logs, requested=requested) is column


T = TaskId("app", "build")
OTHER = TaskId("app", "lint")
KEY = "0123456789abcdef"


def events_for(kind, *, wrote):
    out = [TaskOutput(T, Stream.STDOUT, "hello\n")] if wrote else []
    started = [TaskStarted(T, "make")]
    match kind:
        case Kind.EXECUTED:
            return [
                *started,
                *out,
                TaskFinished(T, TaskStatus.SUCCESS, CacheOutcome.MISS, 10, key=KEY),
            ]
        case Kind.RESTORED:
            return [*out, TaskFinished(T, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 2, key=KEY)]
        case Kind.UP_TO_DATE:
            return [*out, TaskFinished(T, TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE, 1, key=KEY)]
        case Kind.FAILED:
            return [
                *started,
                *out,
                TaskFinished(T, TaskStatus.FAILED, CacheOutcome.MISS, 10, exit_code=1),
            ]
        case _:
            return [TaskFinished(T, TaskStatus.SKIPPED, CacheOutcome.MISS, blocked_by=OTHER)]


def settings_for(column):
    flow = {
        Column.REQUESTED: Flow.FOCUSED,
        Column.DEPENDENCY: Flow.FOCUSED,
        Column.BROAD: Flow.BROAD,
    }
    return RenderSettings(
        flow=flow.get(column, Flow.CI),
        output_logs=None,
        verbosity=0,
        github_actions=False,
        version="0.0.0",
    )


def render_cell(kind, column, *, wrote):
    """What the task printed when it finished, and what the run's end added above the footer."""
    stream = io.StringIO()
    out = Console(stream, env={}, is_tty=False, width=None)
    err = Console(io.StringIO(), env={}, is_tty=False, width=None)
    renderer = Renderer(out, err, settings_for(column), clock=lambda: 0.0)
    requested = column is not Column.DEPENDENCY
    # Two requested tasks, so the requested column buffers its frames instead of streaming one.
    planned = (
        PlannedTask(T, "make", requested=requested, cached=True),
        PlannedTask(OTHER, "lint", requested=requested),
    )
    renderer.handle(RunStarted("run", planned, 1, 1, 2))
    events = events_for(kind, wrote=wrote)
    for event in events:
        renderer.handle(event)
    at_finish = stream.getvalue()
    renderer.handle(RunFinished(0, 20))
    at_end = stream.getvalue()[len(at_finish) :].split("─ vx 0.0.0")[0]
    return at_finish, at_end.strip("\n"), format_row(events[-1], Style(color=False)) + "\n"


def is_frame(text):
    return text.startswith("┌─ app#build") and "└─ app#build" in text


# A skipped task never ran, so it has no variant that wrote something.
RENDER_CASES = [
    (kind, column, shape, wrote)
    for kind, column, shape in CELLS
    for wrote in (True, False)
    if not (kind is Kind.SKIPPED and wrote)
]


@pytest.mark.parametrize(("kind", "column", "shape", "wrote"), RENDER_CASES)
def test_every_cell_renders_its_shape(kind, column, shape, wrote):
    at_finish, at_end, row = render_cell(kind, column, wrote=wrote)
    if shape is Shape.FRAME_UNLESS_QUIET:
        shape = Shape.FRAME if wrote else Shape.ONE_LINER
    if shape is Shape.SILENT:
        assert (at_finish, at_end) == ("", "")
    elif shape is Shape.ONE_LINER:
        assert (at_finish, at_end) == (row, "")
    elif shape is Shape.FRAME:
        assert is_frame(at_finish)
        assert at_end == ""
    else:
        assert at_finish == row
        assert is_frame(at_end)


def test_kind_of_reads_status_then_cache():
    assert kind_of(TaskFinished(T, TaskStatus.SUCCESS, CacheOutcome.REMOTE)) is Kind.RESTORED
    assert kind_of(TaskFinished(T, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE)) is Kind.EXECUTED
    assert kind_of(TaskFinished(T, TaskStatus.NOT_RUN, CacheOutcome.MISS)) is Kind.NOT_RUN
    assert kind_of(TaskFinished(T, TaskStatus.RUNNING, CacheOutcome.NO_CACHE)) is Kind.RUNNING
