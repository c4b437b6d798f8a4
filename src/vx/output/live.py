"""The live status region under the scrollback: its lines, its height, its redraw strings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.output import style as palette
from vx.output.summary import bar_cells, label_row, rule, task_meters
from vx.util.record import Record
from vx.util.words import format_duration

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.ids import TaskId
    from vx.output.style import Style
    from vx.output.summary import Tally

FLOOR_S = 0.030
"""Forced redraws closer together than this coalesce into one trailing draw."""

ERASE_LINE = "\x1b[1A\x1b[2K"
MAX_WORKER_ROWS = 10
TIME_COLUMN = 10


class LiveRegion:
    """Knows how many lines it last drew, so it can take them back; never touches a stream.

    The cursor rests at the start of the line below the region, so erasing is one
    cursor-up and clear-line per line drawn.
    """

    def __init__(self, *, floor_s: float = FLOOR_S) -> None:
        self.floor_s = floor_s
        self.height = 0
        self.last_draw: float | None = None
        self.pending = False

    def erase(self) -> str:
        text = ERASE_LINE * self.height
        self.height = 0
        return text

    def redraw(self, lines: Sequence[str], now: float) -> str:
        text = self.erase() + "".join(line + "\n" for line in lines)
        self.height = len(lines)
        self.last_draw = now
        self.pending = False
        return text

    def due(self, now: float) -> bool:
        """Whether the floor since the last draw has passed."""
        return self.last_draw is None or now - self.last_draw >= self.floor_s


class WorkerSlots:
    """Fixed rows for running tasks: a task keeps its row for its whole life, so nothing jumps."""

    __slots__ = ("count", "overflow", "rows")

    def __init__(self, count: int) -> None:
        self.count = count
        self.rows: list[TaskId | None] = [None] * count
        self.overflow: list[TaskId] = []

    def start(self, task: TaskId) -> None:
        if task in self.rows or task in self.overflow:
            return
        if None in self.rows:
            self.rows[self.rows.index(None)] = task
        else:
            self.overflow.append(task)

    def finish(self, task: TaskId) -> None:
        if task in self.overflow:
            self.overflow.remove(task)
        elif task in self.rows:
            self.rows[self.rows.index(task)] = self.overflow.pop(0) if self.overflow else None

    @property
    def busy(self) -> bool:
        return any(self.rows)


def worker_rows(count: int) -> int:
    return max(1, min(count, MAX_WORKER_ROWS))


def clip(line: str, limit: int | None) -> str:
    """Cut a line to `limit` visible cells, keeping its escapes: a wrapped line breaks the erase."""
    if limit is None:
        return line
    out: list[str] = []
    seen = i = 0
    while i < len(line):
        if line[i] == "\x1b":
            end = line.find("m", i)
            end = len(line) - 1 if end < 0 else end
            out.append(line[i : end + 1])
            i = end + 1
            continue
        if seen == limit:
            return "".join(out) + (palette.RESET if "\x1b" in line else "")
        out.append(line[i])
        seen += 1
        i += 1
    return line


class LiveState(Record):
    """What the region shows at one instant; the renderer builds it, `region_lines` draws it."""

    pins: Sequence[TaskId]
    slots: WorkerSlots
    started_at: Mapping[TaskId, float]
    tally: Tally
    planned: int
    run_started: float


def region_lines(state: LiveState, *, now: float, width: int | None, style: Style) -> list[str]:
    """Blank separator, pinned servers, worker rows, then the meters under a bare `vx` rule."""
    lines = [""]
    running = style.paint("running", palette.ACCENT)
    pin = style.paint("▸", palette.ACCENT)
    lines.extend(f"  {pin} {style.task_id(task)} {running}" for task in state.pins)
    gap = " " * TIME_COLUMN
    for slot in state.slots.rows:
        if slot is None:
            lines.append(f"{gap} {style.dim('idle')}")
            continue
        elapsed = format_duration((now - state.started_at.get(slot, now)) * 1000)
        lines.append(f"{elapsed.rjust(TIME_COLUMN)} {running}  {style.task_id(slot)}")
    if state.slots.overflow:
        lines.append(f"{gap} {style.dim(f'+{len(state.slots.overflow)} more')}")
    cells = bar_cells(width)
    lines.append(rule("vx", cells, style))
    lines += task_meters(state.tally, style, cells=cells, total=state.planned)
    lines.append(label_row("time", format_duration((now - state.run_started) * 1000), style))
    limit = None if width is None else max(width - 1, 1)
    return [clip(line, limit) for line in lines]
