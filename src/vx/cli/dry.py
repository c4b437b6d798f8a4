"""`vx run --dry` and `--graph`: plan through the engine, then print the plan or its graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from vx.cli.run import RunSettings
    from vx.cli.settings import Streams
    from vx.output.plan import PlanView
    from vx.output.shardplan import ShardView
    from vx.run.plan import RunPlan
    from vx.run.prepare import RunOptions


def plan_and_print(options: RunOptions, settings: RunSettings, streams: Streams) -> int:
    """Plan what `options` would run and print it the way the flags ask; exit code 0.

    A `--dry=json` plan is first asked of the stored plan (`vx.run.warmplan`), which answers
    only with the bytes the full plan below would print, and a full one is stored for the next.
    """
    from vx.output.console import Console
    from vx.output.plan import plan_document, plan_dot, plan_text
    from vx.run.prepare import witnessed_plan
    from vx.util.stopwatch import Stopwatch

    document = settings.dry == "json" and settings.graph is None
    out = Console.for_stream(streams.out, env=settings.env)
    if document:
        from vx.run.warmplan import replay_plan

        stored = replay_plan(options)
        if stored is not None:
            _notes(stored.notes, streams)
            out.write(stored.out)
            return 0
    watch = Stopwatch()
    planned, seen = witnessed_plan(options, watch=watch)
    _notes(planned.notes, streams)
    view = plan_view(planned)
    if options.timing:
        streams.err.write(watch.table())
    if settings.graph is not None:
        dot = plan_dot(view)
        if not settings.graph:
            out.write(dot)
            return 0
        target = _write_graph(Path(options.cwd or Path.cwd()) / settings.graph, dot)
        streams.err.write(f"[vx] task graph written to {target}\n")
        return 0
    if planned.shards is not None:
        from vx.output.shardplan import shard_document, shard_text

        shards = shard_view(planned)
        if settings.dry == "json":
            out.write(json.dumps(shard_document(shards), indent=2) + "\n")
        else:
            out.write(shard_text(shards))
        return 0
    if not document:
        out.write(plan_text(view, color=out.color))
        return 0
    from vx.run.warmplan import StoredPlan, remember_plan

    text = json.dumps(plan_document(view), indent=2) + "\n"
    out.write(text)
    remember_plan(seen, StoredPlan(planned.notes, text))
    return 0


def _notes(notes: tuple[str, ...], streams: Streams) -> None:
    """A run prints its notes as notices; a plan owns stdout, so they go to stderr."""
    for note in notes:
        streams.err.write(f"[vx] {note}\n")


def _write_graph(target: Path, dot: str) -> Path:
    """Write the DOT file, making its directory; a path the disk refuses is one line."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dot, encoding="utf-8")
    except OSError as error:
        reason = error.strerror or str(error)
        msg = f"--graph: cannot write {target}: {reason}; name a file in a writable directory"
        raise UserError(ErrorCode.FS, msg) from None
    return target


def shard_view(plan: RunPlan) -> ShardView:
    """A `--shard` plan's deal as the output layer renders it."""
    from vx.output.shardplan import ShardPart, ShardView

    if plan.shards is None:
        raise AssertionError("plan_run deals a plan asked for with --shard")
    dealt, spec = plan.shards.deal, plan.shards.spec
    parts = tuple(
        ShardPart(i + 1, dealt.loads[i], tuple(str(t) for t in dealt.tasks_of(i)))
        for i in range(spec.total)
    )
    return ShardView(plan.shards.digest, spec.number, spec.total, dealt.ideal_ms, parts)


def plan_view(plan: RunPlan) -> PlanView:
    """The engine's plan as the output layer renders it: ids as text, predictions per row."""
    from vx.output.plan import PlanForecast, PlanRow, PlanView

    if plan.keys is None or plan.predictions is None or plan.axes is None:
        raise AssertionError("plan_run keys and predicts every plan it returns")
    rows: list[PlanRow] = []
    for tid in plan.order:
        guess = plan.predictions[tid]
        rows.append(
            PlanRow(
                id=str(tid),
                project=tid.project,
                task=tid.task,
                description=plan.nodes[tid].task.description,
                key=plan.keys.keys[tid],
                status=guess.status,
                deps=tuple(str(d) for d in plan.graph.deps.get(tid, ())),
                p50_ms=guess.p50_ms,
                affected=guess.affected,
            )
        )
    outlook = plan.forecast
    forecast = (
        None
        if outlook is None
        else PlanForecast(
            outlook.wall_ms,
            outlook.work_ms,
            outlook.unknown,
            tuple(str(t) for t in outlook.critical_path),
        )
    )
    return PlanView(tuple(rows), forecast, reads=plan.axes.local_read, writes=plan.axes.local_write)
