"""The run as one self-contained HTML page: timeline by lane, critical path, hits, slow tasks.

No script, font, image or stylesheet is fetched: everything is inline, so the file opens the
same from a CI artifact, an email or a laptop with no network. Bars are laid out here, in
percent of the run's span, so the page draws without script.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from vx.events import CacheOutcome, TaskStatus
from vx.history.report import (
    HITS,
    assign_lanes,
    cache_cell,
    duration_cell,
    miss_reason,
    run_critical_path,
    status_cell,
    totals,
)
from vx.util.words import format_duration

if TYPE_CHECKING:
    from vx.events import TaskFinished
    from vx.history.report import RunReport
    from vx.ids import TaskId

BAR_COLOURS = {
    "success": "#2f9e44",
    "cache-hit": "#3b6fd8",
    "failed": "#d6336c",
    "aborted": "#868e96",
}
"""A bar's fill by outcome. Nothing else on the page is painted in these colours at a bar's
height, so a screenshot's bars can be counted by colour."""

BAR_HEIGHT = 18
LANE_HEIGHT = 28
SLOWEST = 8
MIN_BAR_SHARE = 0.005
_TASK_HEAD = "<tr><th>Task</th><th>Status</th><th>Cache</th><th>Duration</th></tr>"

_STYLE = f"""
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1f2328; background: #fff; }}
h1 {{ font-size: 22px; margin: 0 0 4px; }}
h2 {{ font-size: 16px; margin: 28px 0 8px; }}
.meta {{ color: #59636e; margin: 0; }}
.tiles {{ display: flex; gap: 12px; flex-wrap: wrap; margin-top: 16px; }}
.tile {{ border: 1px solid #d1d9e0; border-radius: 6px; padding: 8px 14px; min-width: 110px; }}
.tile b {{ display: block; font-size: 20px; }}
.tile span {{ color: #59636e; font-size: 12px; }}
.meter {{ height: 6px; background: #eef1f4; border-radius: 3px; margin-top: 4px; }}
.meter i {{ display: block; height: 6px; background: #1f2328; border-radius: 3px; }}
.legend span {{ margin-right: 14px; font-size: 12px; color: #59636e; }}
.legend i {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  vertical-align: -1px; border-radius: 2px; }}
.chart {{ display: grid; grid-template-columns: 64px 1fr; margin-top: 8px; }}
.axis {{ position: relative; height: 18px; font-size: 11px; color: #59636e; }}
.axis span {{ position: absolute; transform: translateX(-50%); }}
.axis span:first-child {{ transform: none; }}
.axis span:last-child {{ transform: translateX(-100%); }}
.name {{ height: {LANE_HEIGHT}px; line-height: {LANE_HEIGHT}px; font-size: 12px; color: #59636e; }}
.lane {{ position: relative; height: {LANE_HEIGHT}px; border-top: 1px dashed #e5e9ed; }}
.bar {{ position: absolute; top: 4px; height: {BAR_HEIGHT}px; min-width: 3px;
  box-sizing: border-box; overflow: hidden; white-space: nowrap; color: #fff;
  font-size: 11px; line-height: {BAR_HEIGHT}px; padding: 0 4px; }}
.bar.crit {{ font-weight: 600; }}
.mark {{ position: absolute; top: {BAR_HEIGHT + 6}px; height: 3px; min-width: 3px;
  background: #f08c00; }}
.crit-key {{ display: inline-block; width: 16px; height: 3px; background: #f08c00;
  vertical-align: 3px; margin-right: 4px; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ text-align: left; padding: 3px 14px 3px 0; border-bottom: 1px solid #eef1f4; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
ol {{ margin: 0; padding-left: 22px; }}
"""


def bar_kind(finished: TaskFinished) -> str:
    """Which colour a task's bar takes: its outcome, a hit from either cache read as one."""
    if finished.status in (TaskStatus.FAILED, TaskStatus.ABORTED):
        return finished.status.value
    return "cache-hit" if finished.cache in HITS else "success"


def html_report(report: RunReport) -> str:
    """The whole page, one string; every name and word from the run is escaped."""
    t = totals(report.finished)
    hit_rate = f"{round(100 * t.cached / t.could_hit)}%" if t.could_hit else "—"
    critical = run_critical_path(report)
    by_id = {f.id: f for f in report.finished}
    critical_ms = sum(by_id[tid].duration_ms for tid in critical)
    tiles = [
        (str(t.tasks), "tasks", ""),
        (hit_rate, f"cache hits ({t.cached} of {t.could_hit})", _meter(t.cached, t.could_hit)),
        (format_duration(report.wall_ms), "wall time", ""),
        (format_duration(t.executed_ms), "executed", ""),
        (format_duration(t.saved_ms), "saved by the cache", ""),
        (format_duration(critical_ms), f"critical path ({len(critical)} tasks)", ""),
    ]
    counts = f"{t.success} success · {t.failed} failed"
    if t.skipped:
        counts += f" · {t.skipped} skipped"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>vx run — {report.verdict}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>vx run — {report.verdict}</h1>",
        f'<p class="meta">{escape(report.run_id)} · {counts} · exit {report.exit_code}</p>',
        '<div class="tiles">',
        *(
            f'<div class="tile"><b>{escape(value)}</b><span>{escape(label)}</span>{extra}</div>'
            for value, label, extra in tiles
        ),
        "</div>",
        "<h2>Timeline</h2>",
        _legend(),
        _timeline(report, frozenset(critical)),
        "<h2>Critical path</h2>",
        _critical_list(critical, by_id),
        "<h2>Slowest tasks</h2>",
        _slowest(report),
        "<h2>Cache misses</h2>",
        _misses(report),
        "<h2>Every task</h2>",
        _every_task(report),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _meter(part: int, whole: int) -> str:
    share = 100 * part / whole if whole else 0
    return f'<div class="meter"><i style="width:{share:.1f}%"></i></div>'


def _legend() -> str:
    words = {"success": "executed", "cache-hit": "cache hit", "failed": "failed"}
    words["aborted"] = "aborted"
    keys = "".join(
        f'<span><i style="background:{BAR_COLOURS[kind]}"></i>{word}</span>'
        for kind, word in words.items()
    )
    return f'<p class="legend">{keys}<span><i class="crit-key"></i>critical path</span></p>'


def _timeline(report: RunReport, critical: frozenset[TaskId]) -> str:
    worked = report.worked()
    if not worked:
        return "<p>No task spent time on a worker.</p>"
    spans = {f.id: report.spans[f.id] for f in worked}
    end_ns = max([end for _, end in spans.values()] + [int(report.wall_ms * 1e6), 1])
    # A bar is drawn at least MIN_BAR_SHARE of the run wide; the same again between two on a
    # lane keeps a short task from touching the next one.
    apart = int(end_ns * MIN_BAR_SHARE)
    lanes = assign_lanes({t: (a, max(b, a + apart)) for t, (a, b) in spans.items()}, apart_ns=apart)
    ticks = "".join(
        f'<span style="left:{100 * i / 4:.2f}%">{format_duration(end_ns * i / 4 / 1e6)}</span>'
        for i in range(5)
    )
    rows = ['<div class="chart">', "<div></div>", f'<div class="axis">{ticks}</div>']
    for lane in range(1, max(lanes.values()) + 1):
        bars = []
        for f in worked:
            if lanes[f.id] != lane:
                continue
            start, end = spans[f.id]
            left = 100 * start / end_ns
            width = 100 * max(end - start, 0) / end_ns
            title = (
                f"{f.id} · {status_cell(f)} · {cache_cell(f)} · {format_duration(f.duration_ms)}"
            )
            crit = f.id in critical
            place = f"left:{left:.3f}%;width:calc({width:.3f}% - 1px)"
            bars.append(
                f'<div class="bar{" crit" if crit else ""}" title="{escape(title)}"'
                f' style="{place};background:{BAR_COLOURS[bar_kind(f)]}">'
                f"{escape(str(f.id))}</div>"
            )
            if crit:
                bars.append(f'<div class="mark" style="{place}"></div>')
        rows += [f'<div class="name">lane {lane}</div>', f'<div class="lane">{"".join(bars)}</div>']
    rows.append("</div>")
    return "\n".join(rows)


def _critical_list(critical: tuple[TaskId, ...], by_id: dict[TaskId, TaskFinished]) -> str:
    if not critical:
        return "<p>No task spent time on a worker.</p>"
    items = "".join(
        f"<li>{escape(str(tid))} <span class=meta>{format_duration(by_id[tid].duration_ms)}"
        "</span></li>"
        for tid in critical
    )
    return f"<ol>{items}</ol>"


def _slowest(report: RunReport) -> str:
    worked = sorted(report.worked(), key=lambda f: (-f.duration_ms, str(f.id)))[:SLOWEST]
    if not worked:
        return "<p>No task spent time on a worker.</p>"
    rows = "".join(
        f"<tr><td>{escape(str(f.id))}</td><td>{escape(status_cell(f))}</td>"
        f'<td>{escape(cache_cell(f))}</td><td class="num">{duration_cell(f)}</td></tr>'
        for f in worked
    )
    return f"<table>{_TASK_HEAD}{rows}</table>"


def _misses(report: RunReport) -> str:
    missed = [
        f
        for f in report.finished
        if f.cache is CacheOutcome.MISS and f.status in (TaskStatus.SUCCESS, TaskStatus.FAILED)
    ]
    if not missed:
        return "<p>No cached task missed.</p>"
    rows = "".join(
        f"<tr><td>{escape(str(f.id))}</td><td>{escape(miss_reason(f))}</td></tr>" for f in missed
    )
    return f"<table><tr><th>Task</th><th>Reason</th></tr>{rows}</table>"


def _every_task(report: RunReport) -> str:
    rows = "".join(
        f"<tr><td>{escape(str(f.id))}</td><td>{escape(status_cell(f))}</td>"
        f"<td>{escape(cache_cell(f))}</td>"
        f'<td class="num">{duration_cell(f)}</td></tr>'
        for f in report.finished
    )
    return f"<table>{_TASK_HEAD}{rows}</table>"
