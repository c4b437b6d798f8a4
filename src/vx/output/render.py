"""The event sink of a run: routes each event to a frame, a row, the live region or the footer."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from vx.events import (
    Notice,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskOutput,
    TaskReady,
    TaskStarted,
    TaskStatus,
)
from vx.output.console import AnsiStripper
from vx.output.frame import (
    frame_close,
    live_open,
    render_frame,
    withheld_line,
    wrote_something,
)
from vx.output.live import LiveRegion, LiveState, WorkerSlots, region_lines, worker_rows
from vx.output.rows import format_hash_line, format_row, outcome_word
from vx.output.style import Style
from vx.output.summary import Tally, footer, gha_error, gha_fence, gha_group
from vx.output.visibility import Column, Flow, OutputLogs, Shape, column_for, shape_for
from vx.util.record import Record
from vx.util.words import format_duration

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.events import Event, PlannedTask
    from vx.ids import TaskId
    from vx.output.console import Console
    from vx.output.frame import Chunk

__all__ = ["Flow", "OutputLogs", "RenderSettings", "Renderer"]

_QUIET_AFTER_FOOTER = frozenset({Column.ERRORS_ONLY, Column.HASH_ONLY, Column.NONE})


class RenderSettings(Record):
    """What the CLI resolved about how a run prints; `output_logs=None` lets the flow decide."""

    flow: Flow
    output_logs: OutputLogs | None
    verbosity: int
    github_actions: bool
    version: str


class _Task:
    __slots__ = ("chunks", "command", "started_at", "stripper")

    def __init__(self) -> None:
        self.command: str | None = None
        self.started_at: float | None = None
        self.chunks: list[Chunk] = []
        self.stripper: AnsiStripper | None = None


class Renderer:
    """Turns a run's events into what the terminal shows; the caller serializes `handle` and `tick`.

    Frames, rows and the footer go to `out`, notices to `err`. On a terminal (and not in CI)
    a live region sits under the scrollback; it is erased before every ordinary write and
    redrawn at most once per floor, so `tick` must be called regularly while the run lasts.
    While an interactive task holds the terminal the region stays away: a redraw would land
    under its prompt, and the next erase would take the prompt and the answer with it.
    """

    def __init__(
        self,
        out: Console,
        err: Console,
        settings: RenderSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        stop_token: str | None = None,
    ) -> None:
        self._out = out
        self._err = err
        self._settings = settings
        self._style = Style(out.color)
        self._clock = clock
        self._token = stop_token or (_fresh_token() if settings.github_actions else "")
        self._planned: dict[TaskId, PlannedTask] = {}
        self._tasks: dict[TaskId, _Task] = {}
        self._tally = Tally()
        self._finished: list[TaskFinished] = []
        self._held: list[str] = []
        self._single_requested = False
        self._live_owner: TaskId | None = None
        self._live_open = False
        self._live_wrote = False
        self._live_tail = ""
        self._region = LiveRegion()
        self._region_on = (
            out.is_tty and settings.flow is not Flow.CI and not settings.github_actions
        )
        self._slots = WorkerSlots(1)
        self._workers = 1
        self._cache_label = "local cache"
        self._lent_to: TaskId | None = None
        self._pins: list[TaskId] = []
        self._run_started = clock()
        self._tail = ""
        self._done = False
        self._serving: set[TaskId] = set()
        self._partial: dict[TaskId, str] = {}
        self._above_footer: list[str] = []

    def handle(self, event: Event) -> None:
        match event:
            case TaskOutput():
                self._on_output(event)
            case TaskFinished():
                self._on_finished(event)
            case TaskStarted():
                self._on_started(event)
            case TaskReady():
                if event.id not in self._pins:
                    self._pins.append(event.id)
                self._changed()
            case Notice():
                self._on_notice(event)
            case RunStarted():
                self._on_run_started(event)
            case RunFinished():
                self._on_run_finished(event)

    def above_footer(self, text: str) -> None:
        """Print `text` just above the footer (a `--report`): nothing comes below the footer."""
        self._above_footer.append(text)

    def tick(self, now: float) -> None:
        """Redraw the live region if something changed or a task's clock moved, floor permitting."""
        if not self._region_on or self._lent_to is not None:
            return
        if not (self._region.pending or self._slots.busy):
            return
        if self._region.due(now):
            self._out.write(self._region.redraw(self._region_lines(now), now))

    def close(self) -> None:
        """Take the live region back and finish any half line a server left after the footer."""
        if self._region.height:
            self._out.write(self._region.erase())
        self._region_on = False
        for task, rest in list(self._partial.items()):
            if rest:
                self._server_line(task, rest)
        self._partial.clear()

    # events

    def _on_run_started(self, event: RunStarted) -> None:
        self._planned = {t.id: t for t in event.tasks}
        real = [t for t in event.tasks if not t.group]
        self._tally.planned = len(real)
        self._tally.projects_in_run = event.projects_in_run
        self._tally.projects_total = event.projects_total
        self._single_requested = sum(1 for t in real if t.requested) == 1
        self._slots = WorkerSlots(worker_rows(event.concurrency))
        self._workers = event.concurrency
        self._cache_label = event.cache_label
        self._run_started = self._clock()
        self._changed()

    def _on_started(self, event: TaskStarted) -> None:
        task = self._task(event.id)
        if event.attempt > 1 and event.id != self._live_owner:
            task.chunks.clear()
        task.command = event.command
        if task.started_at is None:
            task.started_at = self._clock()
        if self._streams_live(event.id):
            self._open_live(event)
            return
        self._slots.start(event.id)
        planned = self._planned.get(event.id)
        if planned is not None and planned.interactive:
            self._lent_to = event.id
            if self._region.height:
                self._out.write(self._region.erase())
                self._region.pending = True
            return
        self._changed()

    def _on_output(self, event: TaskOutput) -> None:
        task = self._task(event.id)
        text = event.text
        if not self._out.color:
            task.stripper = task.stripper or AnsiStripper()
            text = task.stripper.feed(text)
        if self._done or event.id in self._serving:
            self._after_footer(event.id, text)
        elif self._live_open and event.id == self._live_owner:
            if text:
                self._live_wrote = True
                self._live_tail = text[-1]
                self._write(text)
        else:
            task.chunks.append((event.stream, text))

    def _on_finished(self, event: TaskFinished) -> None:
        task = self._task(event.id)
        self._slots.finish(event.id)
        if event.id == self._lent_to:
            self._lent_to = None
        planned = self._planned.get(event.id)
        if planned is not None and planned.group:
            return
        if self._done:
            rest = self._partial.pop(event.id, "")
            if rest:
                self._server_line(event.id, rest)
            return
        self._tally.add(event)
        self._finished.append(event)
        if event.status is TaskStatus.RUNNING:
            self._serving.add(event.id)
        if self._live_open and event.id == self._live_owner:
            self._close_live(event)
        else:
            self._show(event, task)
        task.chunks = []
        self._changed()

    def _on_notice(self, event: Notice) -> None:
        if self._region.height:
            self._out.write(self._region.erase())
            self._region.pending = True
        self._err.write(event.text if event.text.endswith("\n") else event.text + "\n")
        self._changed()

    def _on_run_finished(self, event: RunFinished) -> None:
        if self._done:
            return
        if self._region.height:
            self._out.write(self._region.erase())
        self._region_on = False
        for block in self._held:
            self._write(self._blank_before() + block)
        self._held.clear()
        if self._settings.verbosity >= 1 and self._finished:
            table = sorted(self._finished, key=lambda f: f.id)
            rows = "".join(format_row(f, self._style) + "\n" for f in table)
            self._write(self._blank_before() + rows)
        for text in self._above_footer:
            self._write(self._blank_before() + text)
        s = self._settings
        text = footer(
            self._tally,
            version=s.version,
            workers=self._workers,
            cache_label=self._cache_label,
            wall_ms=event.wall_ms,
            width=self._out.width,
            style=self._style,
        )
        self._write(self._blank_before() + text)
        self._done = True

    # what one finished task prints

    def _column(self, task: TaskId) -> Column:
        planned = self._planned.get(task)
        requested = planned.requested if planned is not None else False
        return column_for(self._settings.flow, self._settings.output_logs, requested=requested)

    def _streams_live(self, task: TaskId) -> bool:
        return (
            self._single_requested
            and self._live_owner is None
            and not self._done
            and self._column(task) is Column.REQUESTED
        )

    def _show(self, event: TaskFinished, task: _Task) -> None:
        column = self._column(event.id)
        shape = shape_for(event, column)
        if shape is Shape.FRAME_UNLESS_QUIET:
            shape = Shape.FRAME if wrote_something(task.chunks) else Shape.ONE_LINER
        if shape is Shape.ONE_LINER or shape is Shape.ONE_LINER_THEN_FRAME:
            self._write(format_row(event, self._style) + "\n")
        if shape is Shape.HASH_LINE:
            self._write(format_hash_line(event, self._style) + "\n")
        if shape is Shape.FRAME:
            self._write(self._blank_before() + self._block(event, task, column))
        if shape is Shape.ONE_LINER_THEN_FRAME:
            self._held.append(self._block(event, task, column))

    def _block(self, event: TaskFinished, task: _Task, column: Column) -> str:
        planned = self._planned.get(event.id)
        text = render_frame(
            event,
            command=task.command,
            chunks=task.chunks,
            style=self._style,
            persistent=planned is not None and planned.persistent,
        )
        text += "\n"
        if not self._settings.github_actions:
            return text
        fenced = gha_fence(text, self._token)
        if column is not Column.FULL:
            return fenced
        if event.status is TaskStatus.FAILED:
            return gha_error(str(event.id), outcome_word(event)) + fenced
        title = f"{event.id} ({outcome_word(event)} {format_duration(event.duration_ms)})"
        return gha_group(title, fenced)

    # the live frame of a lone requested task

    def _open_live(self, event: TaskStarted) -> None:
        if self._region.height:
            self._out.write(self._region.erase())
        self._region_on = False
        self._live_owner = event.id
        self._live_open = True
        planned = self._planned.get(event.id)
        persistent = planned is not None and planned.persistent
        opening = live_open(event.id, event.command, self._style, persistent=persistent)
        if self._settings.github_actions:
            opening = f"::stop-commands::{self._token}\n{opening}"
        self._write(self._blank_before() + opening)

    def _close_live(self, event: TaskFinished) -> None:
        planned = self._planned.get(event.id)
        persistent = planned is not None and planned.persistent
        text = ""
        if self._live_wrote:
            text = ("" if self._live_tail == "\n" else "\n") + "\n"
        if event.withheld:
            text += withheld_line(event.withheld, self._style) + "\n\n"
        text += frame_close(event, self._style, persistent=persistent) + "\n\n"
        if self._settings.github_actions:
            text += f"::{self._token}::\n"
        self._live_open = False
        self._write(text)

    # servers after the footer

    def _after_footer(self, task: TaskId, text: str) -> None:
        """A server the run holds: the lone live one streams raw, the others line by line."""
        if self._column(task) in _QUIET_AFTER_FOOTER or not text:
            return
        if task == self._live_owner:
            self._write(text)
            return
        lines = (self._partial.pop(task, "") + text).split("\n")
        self._partial[task] = lines.pop()
        for line in lines:
            self._server_line(task, line)

    def _server_line(self, task: TaskId, line: str) -> None:
        text = f"{self._style.task_id(task)} {self._style.dim('│')} {line}\n"
        if self._settings.github_actions:
            text = gha_fence(text, self._token)
        self._write(text)

    # writing

    def _task(self, task: TaskId) -> _Task:
        found = self._tasks.get(task)
        if found is None:
            found = self._tasks[task] = _Task()
        return found

    def _blank_before(self) -> str:
        """The blank line that keeps a block apart from whatever printed last."""
        if not self._tail or self._tail.endswith("\n\n"):
            return ""
        return "\n" if self._tail.endswith("\n") else "\n\n"

    def _write(self, text: str) -> None:
        """An ordinary write: take the live region back, write, redraw it if the floor allows."""
        if not text:
            return
        self._tail = (self._tail + text)[-2:]
        erase = self._region.erase()
        if self._region_on:
            self._region.pending = True
        self._out.write(erase + text + self._draw_if_due())

    def _changed(self) -> None:
        if not self._region_on:
            return
        self._region.pending = True
        self._out.write(self._draw_if_due())

    def _draw_if_due(self) -> str:
        now = self._clock()
        if self._lent_to is not None:
            return ""
        if not (self._region_on and self._region.pending and self._region.due(now)):
            return ""
        return self._region.redraw(self._region_lines(now), now)

    def _region_lines(self, now: float) -> list[str]:
        state = LiveState(
            pins=self._pins,
            slots=self._slots,
            started_at={
                t: at
                for t in self._slots.rows
                if t is not None and (at := self._tasks[t].started_at) is not None
            },
            tally=self._tally,
            planned=self._tally.planned,
            run_started=self._run_started,
        )
        return region_lines(state, now=now, width=self._out.width, style=self._style)


def _fresh_token() -> str:
    """An unguessable `::stop-commands::` token, so a task cannot end the fence itself."""
    import secrets

    return secrets.token_hex(16)
