"""A plan as people, scripts and Graphviz read it: `--dry`'s text, `--dry=json`, `--graph`'s DOT.

The three views render one `PlanView`, the data the CLI takes from the engine's plan, so what
each says about a task is the same prediction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.events import PlanStatus
from vx.output.style import LOCAL, MISS, NO_CACHE, RESET, sgr
from vx.util.record import Record
from vx.util.words import format_duration

if TYPE_CHECKING:
    from vx.events import AffectedReason
    from vx.output.style import RGB


class PlanRow(Record):
    """One task of the plan, groups and excluded tasks included; ids as text."""

    id: str
    project: str
    task: str
    description: str | None
    key: str
    status: PlanStatus
    deps: tuple[str, ...]
    p50_ms: float | None = None
    affected: AffectedReason | None = None


class PlanForecast(Record):
    """The predicted cost of the would-run tasks (see `vx.run.plan.Forecast`)."""

    wall_ms: float
    work_ms: float
    unknown: int
    critical_path: tuple[str, ...]


class PlanView(Record):
    """Everything a plan prints: its rows in topological order, the forecast, the cache axes."""

    rows: tuple[PlanRow, ...]
    forecast: PlanForecast | None
    reads: bool
    writes: bool


class _Look(Record):
    glyph: str
    label: str
    hue: RGB | None
    fill: str


_LOOKS = {
    PlanStatus.HIT_LOCAL: _Look("◉", "cache hit (local)", LOCAL, "green"),
    PlanStatus.MISS: _Look("▶", "cache miss — would exec", MISS, "orange"),
    PlanStatus.NO_CACHE: _Look("·", "no cache — would exec", NO_CACHE, "gray"),
    PlanStatus.EXCLUDED: _Look("◌", "excluded — not run, keyed", None, "white"),
    PlanStatus.NOT_STARTED: _Look("\u2212", "not started — only hits need it", None, "white"),
    PlanStatus.GROUP: _Look("○", "group", None, "fuchsia"),
}


def plan_document(view: PlanView) -> dict[str, Any]:
    """The `--dry=json` document, as `schemas/plan.json` describes it."""
    tasks: list[dict[str, Any]] = []
    for row in view.rows:
        doc: dict[str, Any] = {"id": row.id, "project": row.project, "task": row.task}
        if row.description:
            doc["description"] = row.description
        doc.update(hash=row.key, cacheStatus=str(row.status), deps=list(row.deps))
        if row.p50_ms is not None:
            doc["p50Ms"] = round(row.p50_ms, 3)
        if row.affected is not None:
            doc["affected"] = {
                "kind": row.affected.kind,
                "change": row.affected.change,
                "via": [str(t) for t in row.affected.via],
            }
        tasks.append(doc)
    out: dict[str, Any] = {"tasks": tasks, "cache": {"read": view.reads, "write": view.writes}}
    if view.forecast is not None:
        out["predicted"] = {
            "wallMs": round(view.forecast.wall_ms, 3),
            "workMs": round(view.forecast.work_ms, 3),
            "unknownCount": view.forecast.unknown,
            "criticalPath": list(view.forecast.critical_path),
        }
    return out


def plan_text(view: PlanView, *, color: bool) -> str:
    """`--dry`'s rows (groups left out), then the counts and the predicted cost."""
    shown = [r for r in view.rows if r.status is not PlanStatus.GROUP]
    id_width = max((len(r.id) for r in shown), default=0)
    label_width = max((len(_LOOKS[r.status].label) for r in shown), default=0)
    lines = ["planned (nothing runs):"]
    for row in shown:
        look = _LOOKS[row.status]
        glyph = f"{sgr(look.hue)}{look.glyph}{RESET}" if color and look.hue else look.glyph
        line = f"  {glyph}  {row.id.ljust(id_width)}  {look.label.ljust(label_width)}"
        line += f"  {row.key}"
        if row.p50_ms is not None and row.status in _WOULD_RUN:
            line += f"  ~{format_duration(row.p50_ms)}"
        lines.append(line.rstrip())
        if row.affected is not None:
            via = "".join(f", via {t}" for t in row.affected.via)
            lines.append(f"{' ' * (7 + id_width)}affected: {row.affected.change}{via}")
    lines.append("")
    lines.extend(_footer(view, shown))
    return "\n".join(lines) + "\n"


_WOULD_RUN = frozenset({PlanStatus.MISS, PlanStatus.NO_CACHE})


def _footer(view: PlanView, shown: list[PlanRow]) -> list[str]:
    hits = sum(r.status is PlanStatus.HIT_LOCAL for r in shown)
    runs = [r for r in shown if r.status in _WOULD_RUN]
    excluded = sum(r.status is PlanStatus.EXCLUDED for r in shown)
    counts = f"{_count(len(shown), 'task')} planned: {_count(hits, 'cache hit')}"
    counts += f", {len(runs)} would run"
    if excluded:
        counts += f", {excluded} excluded"
    idle = sum(r.status is PlanStatus.NOT_STARTED for r in shown)
    if idle:
        counts += f", {idle} not started"
    lines = [counts]
    if not view.reads and view.writes:
        lines.append("cache reads off: every cached task would execute, and be saved")
    elif view.reads and not view.writes:
        lines.append("cache writes off: what executes would not be saved")
    elif not view.reads:
        lines.append("cache off: nothing would be restored or saved")
    outlook = view.forecast
    if outlook is not None and any(r.p50_ms is not None for r in runs):
        line = (
            f"predicted: ~{format_duration(outlook.wall_ms)} wall"
            f" · ~{format_duration(outlook.work_ms)} total execution"
        )
        if outlook.unknown:
            line += f" · {_count(outlook.unknown, 'task')} without history (+?)"
        lines.append(line)
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def plan_dot(view: PlanView) -> str:
    """`--graph`'s Graphviz DOT: a node per task filled by its status, an edge to each dep."""
    lines = [
        "digraph vx {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for row in view.rows:
        look = _LOOKS[row.status]
        label = f'"{_escape(row.id)}\\n{row.status}"'
        style = ', style="rounded,filled,dashed"' if row.status is PlanStatus.EXCLUDED else ""
        lines.append(f'  "{_escape(row.id)}" [label={label}, fillcolor={look.fill}{style}];')
    lines.extend(
        f'  "{_escape(row.id)}" -> "{_escape(dep)}";' for row in view.rows for dep in row.deps
    )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    """Text safe inside a DOT string: backslashes and quotes escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')
