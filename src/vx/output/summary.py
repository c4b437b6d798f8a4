"""The footer (projects, tasks and cache meters; info, time, result) and GitHub Actions framing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.events import CacheOutcome, TaskStatus
from vx.output import style as palette
from vx.util.record import Record
from vx.util.words import format_duration

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vx.events import TaskFinished
    from vx.output.style import RGB, Style

BAR_CELLS = 50
LABEL_WIDTH = 12
FULL_CELL = "▰"
EMPTY_CELL = "▱"


class Segment(Record):
    """One class of a meter: its legend word, how many it holds, and its hue."""

    word: str
    amount: int
    hue: RGB | None


class Tally:
    """What the run's tasks came to, as the meters and the result row count them.

    Aborted and not-run tasks never reached the cache and stay out of every total; a server
    still running when the run ends counts as a success, one the run never started (only hits
    depended on it) as `not started`, out of the totals too.
    """

    __slots__ = (
        "cache",
        "executed_ms",
        "idle",
        "planned",
        "projects_in_run",
        "projects_total",
        "saved_ms",
        "status",
    )

    def __init__(
        self, *, planned: int = 0, projects_in_run: int = 0, projects_total: int = 0
    ) -> None:
        self.planned = planned
        self.projects_in_run = projects_in_run
        self.projects_total = projects_total
        self.status: dict[TaskStatus, int] = {}
        self.cache: dict[CacheOutcome, int] = {}
        self.executed_ms: list[float] = []
        self.saved_ms = 0.0
        self.idle = 0

    def add(self, finished: TaskFinished) -> None:
        if finished.not_started:
            self.idle += 1
            return
        status = finished.status
        if status is TaskStatus.RUNNING:
            status = TaskStatus.SUCCESS
        self.status[status] = self.status.get(status, 0) + 1
        if status not in {TaskStatus.SUCCESS, TaskStatus.FAILED}:
            return
        self.cache[finished.cache] = self.cache.get(finished.cache, 0) + 1
        hit = finished.cache in {CacheOutcome.LOCAL, CacheOutcome.REMOTE, CacheOutcome.UP_TO_DATE}
        if hit:
            self.saved_ms += finished.saved_ms
        elif finished.status is not TaskStatus.RUNNING:
            self.executed_ms.append(finished.duration_ms)

    def count(self, status: TaskStatus) -> int:
        return self.status.get(status, 0)

    @property
    def counted(self) -> int:
        counted = (TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.SKIPPED)
        return sum(self.count(s) for s in counted)

    def task_segments(self) -> list[Segment]:
        return [
            Segment("failed", self.count(TaskStatus.FAILED), palette.ERROR),
            Segment("success", self.count(TaskStatus.SUCCESS), palette.SUCCESS),
            Segment("skipped", self.count(TaskStatus.SKIPPED), palette.WARN),
        ]

    def cache_segments(self) -> list[Segment]:
        hues = {
            CacheOutcome.MISS: palette.MISS,
            CacheOutcome.NO_CACHE: palette.NO_CACHE,
            CacheOutcome.UP_TO_DATE: palette.FRESH,
            CacheOutcome.LOCAL: palette.LOCAL,
            CacheOutcome.REMOTE: palette.REMOTE,
        }
        segments = [Segment(c.value, self.cache.get(c, 0), hue) for c, hue in hues.items()]
        segments.append(Segment("skipped", self.count(TaskStatus.SKIPPED), palette.WARN))
        return segments


def allocate(counts: Sequence[int], total: int, cells: int) -> list[int]:
    """Cells per class by largest remainder; whatever the counts leave of `total` stays empty.

    A class with any member gets at least one cell, so one failure in a thousand still shows.
    """
    if total <= 0:
        return [0] * len(counts)
    shares = [c * cells / total for c in counts]
    given = [int(s) for s in shares]
    empty_share = (total - sum(counts)) * cells / total
    remainders = [(s - g, i) for i, (s, g) in enumerate(zip(shares, given, strict=True))]
    remainders.append((empty_share - int(empty_share), len(counts)))
    spare = cells - sum(given) - int(empty_share)
    for _, index in sorted(remainders, key=lambda r: (-r[0], r[1]))[:spare]:
        if index < len(counts):
            given[index] += 1
    for i, c in enumerate(counts):
        if not c or given[i]:
            continue
        donor = max(range(len(given)), key=lambda k: given[k])
        if sum(given) < cells:
            given[i] = 1
        elif given[donor] > 1:
            given[donor] -= 1
            given[i] = 1
    return given


def meter(segments: Sequence[Segment], total: int, cells: int, style: Style) -> str:
    filled = allocate([s.amount for s in segments], total, cells)
    bar = "".join(style.paint(FULL_CELL * n, s.hue) for s, n in zip(segments, filled, strict=True))
    return bar + style.dim(EMPTY_CELL * (cells - sum(filled)))


def legend(segments: Sequence[Segment], style: Style, *, total: int | None) -> str:
    parts = [style.paint(f"{s.amount} {s.word}", s.hue) for s in segments if s.amount]
    if total is not None:
        parts.append(f"{total} total")
    return style.dim(" · ").join(parts) if parts else "—"


def bar_cells(width: int | None) -> int:
    """Fifty cells, fewer on a terminal too narrow for the row; never below ten."""
    if width is None or width >= LABEL_WIDTH + BAR_CELLS:
        return BAR_CELLS
    return max(width - LABEL_WIDTH - 1, 10)


def rule(title: str, cells: int, style: Style) -> str:
    """`─ vx 0.0.0 ───…` spanning the label column and the bars."""
    fill = LABEL_WIDTH + cells - len(title) - 3
    return f"{style.dim('─')} {style.bold(title)} {style.dim('─' * max(fill, 3))}"


def label_row(label: str, value: str, style: Style) -> str:
    return f"  {style.dim(label)}{' ' * (LABEL_WIDTH - 2 - len(label))}{value}"


def legend_row(value: str) -> str:
    return " " * LABEL_WIDTH + value


def task_meters(tally: Tally, style: Style, *, cells: int, total: int) -> list[str]:
    """The `tasks` and `cache` meters; `total` is the run's size (the plan while it runs)."""
    not_counted = [
        f"{n} {s.value}" for s in (TaskStatus.ABORTED, TaskStatus.NOT_RUN) if (n := tally.count(s))
    ]
    tasks_legend = legend(tally.task_segments(), style, total=total)
    if tally.idle:
        not_counted.append(f"{tally.idle} not started")
    if not_counted:
        tasks_legend += style.dim(" · ") + style.dim("not counted: " + ", ".join(not_counted))
    return [
        label_row("tasks", meter(tally.task_segments(), total, cells, style), style),
        legend_row(tasks_legend),
        label_row("cache", meter(tally.cache_segments(), total, cells, style), style),
        legend_row(legend(tally.cache_segments(), style, total=None)),
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def time_row(tally: Tally, wall_ms: float, style: Style) -> str:
    parts = [format_duration(wall_ms)]
    if tally.executed_ms:
        spent = tally.executed_ms
        parts += [
            f"max {format_duration(max(spent))}",
            f"avg {format_duration(sum(spent) / len(spent))}",
            f"min {format_duration(min(spent))}",
        ]
    return label_row("time", style.dim(" · ").join(parts), style)


def result_row(tally: Tally, wall_ms: float, style: Style) -> str:
    failed = tally.count(TaskStatus.FAILED)
    no_cache = tally.cache.get(CacheOutcome.NO_CACHE, 0)
    hits = sum(tally.cache.get(c, 0) for c in (CacheOutcome.LOCAL, CacheOutcome.REMOTE))
    hits += tally.cache.get(CacheOutcome.UP_TO_DATE, 0)
    could_hit = sum(tally.cache.values()) - no_cache
    parts = [_plural(tally.counted, "task")]
    if failed:
        parts.append(style.paint(f"{failed} failed", palette.ERROR, bold=True))
    if no_cache:
        parts.append(style.paint(f"{no_cache} no-cache", palette.NO_CACHE))
    if could_hit and hits == could_hit:
        parts.append(style.paint("all cached", palette.SUCCESS))
    elif could_hit:
        parts.append(f"{hits} cached ({round(100 * hits / could_hit)}%)")
    if tally.saved_ms > 0:
        parts.append(f"{format_duration(tally.saved_ms)} saved")
    parts.append(format_duration(wall_ms))
    return label_row("result", style.dim(" · ").join(parts), style)


def footer(
    tally: Tally,
    *,
    version: str,
    workers: int,
    cache_label: str,
    wall_ms: float,
    width: int | None,
    style: Style,
) -> str:
    """The run's last word: three meters, then what ran it, how long it took, and the verdict."""
    cells = bar_cells(width)
    project_segment = [Segment("in run", tally.projects_in_run, palette.ACCENT)]
    lines = [
        rule(f"vx {version}", cells, style),
        label_row("projects", meter(project_segment, tally.projects_total, cells, style), style),
        legend_row(legend(project_segment, style, total=tally.projects_total)),
        *task_meters(tally, style, cells=cells, total=tally.counted),
        "",
        label_row("info", f"{_plural(workers, 'worker')} {style.dim('·')} {cache_label}", style),
        time_row(tally, wall_ms, style),
        result_row(tally, wall_ms, style),
    ]
    return "\n".join(lines) + "\n"


def gha_fence(text: str, token: str) -> str:
    """Stop workflow commands inside a task's own text, so a line it prints stays a line."""
    return f"::stop-commands::{token}\n{text}::{token}::\n"


def gha_group(title: str, body: str) -> str:
    return f"::group::{title}\n{body}::endgroup::\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gha_error(title: str, message: str) -> str:
    """An error annotation; a property value also escapes the `:` and `,` that would end it."""
    escaped = _escape_data(title).replace(":", "%3A").replace(",", "%2C")
    return f"::error title={escaped}::{_escape_data(message)}\n"
