"""A finished run as artifacts: the markdown report, the Chrome trace and the HTML picture.

Pure: a `RunReport` in, text or a JSON-ready dict out. The CLI builds the report from the run's
events or outcome and decides where each artifact goes.
"""

from __future__ import annotations

import heapq
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import CacheOutcome, TaskStatus
from vx.graph.critical import critical_path, longest_remaining
from vx.util.record import Record
from vx.util.words import exit_detail, format_duration

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.events import TaskFinished
    from vx.ids import TaskId

HITS = frozenset({CacheOutcome.LOCAL, CacheOutcome.UP_TO_DATE, CacheOutcome.REMOTE})
_WORKED = frozenset({TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.RUNNING, TaskStatus.ABORTED})
_COUNTED = frozenset({TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.RUNNING})
_NO_TIME = frozenset({TaskStatus.SKIPPED, TaskStatus.NOT_RUN})
_NO_CACHE_CELL = frozenset({TaskStatus.SKIPPED, TaskStatus.ABORTED, TaskStatus.NOT_RUN})
_EMPTY: Mapping[TaskId, tuple[TaskId, ...]] = MappingProxyType({})
_NO_SPANS: Mapping[TaskId, tuple[int, int]] = MappingProxyType({})


class RunReport(Record):
    """What a report says about one run.

    `finished` holds the work (no groups), in plan order. `spans` are each task's start and
    end in ns since the run began; `order` (topological, groups included) and `deps` are the
    graph the critical path is read from. A report built from events alone has neither, and
    the markdown needs neither.
    """

    finished: tuple[TaskFinished, ...]
    exit_code: int
    wall_ms: float
    interrupted: bool = False
    run_id: str = ""
    spans: Mapping[TaskId, tuple[int, int]] = _NO_SPANS
    order: tuple[TaskId, ...] = ()
    deps: Mapping[TaskId, tuple[TaskId, ...]] = _EMPTY

    @property
    def verdict(self) -> str:
        """`passed`, `failed` or `interrupted`: the report's title word."""
        if self.interrupted:
            return "interrupted"
        return "passed" if self.exit_code == 0 else "failed"

    def worked(self) -> list[TaskFinished]:
        """The tasks that spent time on a worker: each gets a span, a lane and a bar."""
        return [f for f in self.finished if f.status in _WORKED and f.id in self.spans]


def status_cell(finished: TaskFinished) -> str:
    """The task outcome as the report's Status column says it."""
    status = finished.status
    if status is TaskStatus.FAILED:
        detail = exit_detail(
            finished.exit_code, reason=finished.reason, timed_out=finished.timed_out
        )
        return f"failed ({detail})" if detail else "failed"
    if status is TaskStatus.SKIPPED and finished.blocked_by is not None:
        return f"skipped ({finished.reason or f'blocked by {finished.blocked_by}'})"
    if status is TaskStatus.RUNNING:
        return "success"
    return status.value


def cache_cell(finished: TaskFinished) -> str:
    """Where the result came from: `miss`, `no-cache`, `local`, `remote`, `up-to-date` or `—`."""
    if finished.status in _NO_CACHE_CELL:
        return "—"
    return finished.cache.value


def duration_cell(finished: TaskFinished) -> str:
    """What the task spent in this run; `—` for one that never started."""
    return "—" if finished.status in _NO_TIME else format_duration(finished.duration_ms)


def miss_reason(finished: TaskFinished) -> str:
    """Why a cached task missed, in the words its row printed; empty when it did not miss."""
    return finished.miss.describe() if finished.miss is not None else ""


class Totals(Record):
    """The header's counts, the same population the footer and `--summarize` count."""

    tasks: int
    success: int
    failed: int
    skipped: int
    up_to_date: int
    restored: int
    could_hit: int
    executed_ms: float
    saved_ms: float
    aborted: int
    not_run: int

    @property
    def cached(self) -> int:
        return self.up_to_date + self.restored


def totals(finished: Iterable[TaskFinished]) -> Totals:
    """Count outcomes: aborted and not-run tasks stay out of every count but their own."""
    n: dict[str, int] = dict.fromkeys(
        ("success", "failed", "skipped", "fresh", "restored", "could", "aborted", "not_run"), 0
    )
    executed = saved = 0.0
    for f in finished:
        if f.status is TaskStatus.ABORTED:
            n["aborted"] += 1
            executed += f.duration_ms
            continue
        if f.status is TaskStatus.NOT_RUN:
            n["not_run"] += 1
            continue
        if f.status is TaskStatus.SKIPPED:
            n["skipped"] += 1
            continue
        n["failed" if f.status is TaskStatus.FAILED else "success"] += 1
        if f.cache is not CacheOutcome.NO_CACHE:
            n["could"] += 1
        if f.cache in HITS:
            n["fresh" if f.cache is CacheOutcome.UP_TO_DATE else "restored"] += 1
            saved += f.saved_ms
        else:
            executed += f.duration_ms
    return Totals(
        tasks=n["success"] + n["failed"] + n["skipped"],
        success=n["success"],
        failed=n["failed"],
        skipped=n["skipped"],
        up_to_date=n["fresh"],
        restored=n["restored"],
        could_hit=n["could"],
        executed_ms=executed,
        saved_ms=saved,
        aborted=n["aborted"],
        not_run=n["not_run"],
    )


def header_line(t: Totals) -> str:
    """`**3 tasks** · 3 success · 0 failed · 2 cached (…) · 1.23s total · 2.65s saved`."""
    parts = [f"**{t.tasks} {'task' if t.tasks == 1 else 'tasks'}**"]
    parts += [f"{t.success} success", f"{t.failed} failed"]
    if t.skipped:
        parts.append(f"{t.skipped} skipped")
    cached = f"{t.cached} cached"
    if t.cached:
        cached += f" ({t.up_to_date} up-to-date, {t.restored} restored)"
    parts += [cached, f"{format_duration(t.executed_ms)} total"]
    parts.append(f"{format_duration(t.saved_ms)} saved")
    stopped = [f"{n} {word}" for n, word in ((t.aborted, "aborted"), (t.not_run, "not run")) if n]
    if stopped:
        parts.append("not counted: " + ", ".join(stopped))
    return " · ".join(parts)


def markdown(report: RunReport) -> str:
    """The run report: a title with the verdict, the totals line, one table row per task."""
    rows = [
        (
            str(f.id),
            status_cell(f),
            cache_cell(f),
            duration_cell(f),
        )
        for f in report.finished
    ]
    table = [("Task", "Status", "Cache", "Duration"), *rows]
    cells = [tuple(_md_cell(c) for c in row) for row in table]
    widths = [max(len(row[i]) for row in cells) for i in range(4)]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    lines = [
        f"## vx run — {report.verdict}",
        "",
        header_line(totals(report.finished)),
        "",
        line(cells[0]),
        line(["-" * w for w in widths]),
        *(line(row) for row in cells[1:]),
    ]
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def assign_lanes(
    spans: Mapping[TaskId, tuple[int, int]], *, apart_ns: int = 0
) -> dict[TaskId, int]:
    """A lane (from 1) per span, no two overlapping spans on one lane, as few lanes as may be.

    The scheduler does not say which worker ran a task, so the lanes are rebuilt from the
    spans: taken in start order, each goes to the lowest lane free by then. The count is the
    run's peak concurrency, and a lane reads as one worker's timeline. `apart_ns` keeps a
    lane busy that much longer after each span (a drawing's bars need room between them).
    """
    free: list[int] = []
    busy: list[tuple[int, int]] = []
    lanes: dict[TaskId, int] = {}
    opened = 0
    for tid, (start, end) in sorted(spans.items(), key=lambda kv: (kv[1], str(kv[0]))):
        while busy and busy[0][0] <= start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            opened += 1
            lane = opened
        lanes[tid] = lane
        heapq.heappush(busy, (end + apart_ns, lane))
    return lanes


def trace_category(finished: TaskFinished) -> str:
    """A span's `cat`: `success`, `cache-hit`, `cache-hit-remote`, `failed` or `aborted`."""
    if finished.status in (TaskStatus.FAILED, TaskStatus.ABORTED):
        return finished.status.value
    if finished.cache is CacheOutcome.REMOTE:
        return "cache-hit-remote"
    return "cache-hit" if finished.cache in HITS else "success"


def chrome_trace(report: RunReport) -> dict[str, object]:
    """Chrome trace events: one complete (`X`) event per task, on its lane's `tid`, in µs."""
    worked = report.worked()
    lanes = assign_lanes({f.id: report.spans[f.id] for f in worked})
    events: list[dict[str, object]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "vx run"}}
    ]
    events += [
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": lane, "args": {"name": f"lane {lane}"}}
        for lane in sorted(set(lanes.values()))
    ]
    for f in sorted(worked, key=lambda f: (report.spans[f.id][0], str(f.id))):
        start, end = report.spans[f.id]
        args: dict[str, object] = {"exitCode": f.exit_code if f.exit_code is not None else 0}
        if f.key is not None:
            args["hash"] = f.key
        if f.cpu_ms is not None:
            args["cpuMs"] = round(f.cpu_ms, 3)
        if f.peak_rss_bytes:
            args["peakRssBytes"] = f.peak_rss_bytes
        events.append(
            {
                "name": str(f.id),
                "cat": trace_category(f),
                "ph": "X",
                "ts": round(start / 1000, 3),
                "dur": round(max(end - start, 0) / 1000, 3),
                "pid": 1,
                "tid": lanes[f.id],
                "args": args,
            }
        )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def run_critical_path(report: RunReport) -> tuple[TaskId, ...]:
    """The chain of dependencies whose measured durations add up longest, dependencies first."""
    cost = {f.id: f.duration_ms for f in report.worked()}
    if not report.order or not cost:
        return ()
    dependents: dict[TaskId, list[TaskId]] = {}
    for tid in report.order:
        for dep in report.deps.get(tid, ()):
            dependents.setdefault(dep, []).append(tid)
    chains = longest_remaining(report.order, report.deps, cost)
    return critical_path(report.order, dependents, chains, cost)
