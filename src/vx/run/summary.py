"""The run's record as one JSON document: `--summarize` and `vx run --format json` print it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.events import CacheOutcome, TaskStatus

if TYPE_CHECKING:
    from vx.events import TaskFinished
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan

_HIT = frozenset({CacheOutcome.LOCAL, CacheOutcome.UP_TO_DATE, CacheOutcome.REMOTE})
_STOPPED = frozenset({TaskStatus.ABORTED, TaskStatus.NOT_RUN})


def iso(seconds: float) -> str:
    """A UTC timestamp with milliseconds, as `2026-09-27T17:34:54.572Z`."""
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def status_word(finished: TaskFinished) -> str:
    """`success`, `cache-hit`, `failed` or `skipped`: a script's view of a task's outcome."""
    if finished.status is TaskStatus.FAILED:
        return "failed"
    if finished.status is TaskStatus.SKIPPED:
        return "skipped"
    return "cache-hit" if finished.cache in _HIT else "success"


def summary_document(plan: RunPlan, outcome: RunOutcome) -> dict[str, Any]:
    """The summary `schemas/summary.json` describes; groups are in neither list."""
    tasks: list[dict[str, Any]] = []
    aborted: list[dict[str, Any]] = []
    idle: list[str] = []  # servers the run did not start: every dependant restored
    counts = dict.fromkeys(
        (
            "successful",
            "failed",
            "skipped",
            "cachedLocal",
            "restoredLocal",
            "restoredRemote",
            "upToDate",
            "cachedRemote",
            "aborted",
            "total",
        ),
        0,
    )
    saved = 0.0
    for tid in plan.order:
        finished = next((f for f in outcome.finished if f.id == tid), None)
        if finished is None or plan.nodes[tid].task.is_group:
            continue
        span = outcome.spans.get(tid)
        if finished.not_started:
            idle.append(str(tid))
            continue
        if finished.status in _STOPPED:
            row: dict[str, Any] = {
                "id": str(tid),
                "exitCode": finished.exit_code if finished.exit_code is not None else 1,
                "durationMs": round(finished.duration_ms, 3),
            }
            if finished.status is TaskStatus.ABORTED and span:
                row["wallclockStartNs"] = str(span[0])
            aborted.append(row)
            counts["aborted"] += 1
            continue
        tasks.append(_task_row(finished, span))
        saved += _count(counts, finished)
    doc: dict[str, Any] = {
        "runId": outcome.run_id,
        "ok": outcome.exit_code == 0,
        "exitCode": outcome.exit_code,
        "startedAt": iso(outcome.started_at),
        "endedAt": iso(outcome.ended_at),
        "totalMs": round(outcome.wall_ms, 3),
        "savedMs": round(saved, 3),
        "tasks": tasks,
        "aborted": aborted,
        "summary": counts,
    }
    if idle:
        doc["notStarted"] = idle
    return doc


def _count(counts: dict[str, int], finished: TaskFinished) -> float:
    """Add one task to the buckets; return the time its hit saved."""
    counts["total"] += 1
    if finished.status is TaskStatus.FAILED:
        counts["failed"] += 1
        return 0.0
    if finished.status is TaskStatus.SKIPPED:
        counts["skipped"] += 1
        return 0.0
    counts["successful"] += 1
    if finished.cache is CacheOutcome.REMOTE:
        counts["cachedRemote"] += 1
        counts["restoredRemote"] += 1
    elif finished.cache in _HIT:
        counts["cachedLocal"] += 1
        key = "restoredLocal" if finished.cache is CacheOutcome.LOCAL else "upToDate"
        counts[key] += 1
    else:
        return 0.0
    return finished.saved_ms


def _task_row(finished: TaskFinished, span: tuple[int, int] | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": str(finished.id),
        "project": finished.id.project,
        "task": finished.id.task,
        "status": status_word(finished),
        "exitCode": finished.exit_code if finished.exit_code is not None else 0,
        "durationMs": round(finished.duration_ms, 3),
        "hash": finished.key,
    }
    hit = finished.cache in _HIT and finished.status is TaskStatus.SUCCESS
    if hit:
        row["restored"] = bool(finished.restored)
        row["storedDurationMs"] = round(finished.saved_ms, 3)
        if finished.stored_cpu_ms is not None:
            row["storedCpuMs"] = round(finished.stored_cpu_ms, 3)
    elif finished.status in (TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.RUNNING):
        if finished.cpu_ms is not None:
            row["cpuMs"] = round(finished.cpu_ms, 3)
        if finished.peak_rss_bytes:
            row["peakRssBytes"] = finished.peak_rss_bytes
    if finished.cache is CacheOutcome.NO_CACHE:
        row["noCache"] = True
    if finished.blocked_by is not None:
        row["blockedBy"] = str(finished.blocked_by)
    if finished.miss is not None and finished.cache is CacheOutcome.MISS:
        row["miss"] = {
            "kind": finished.miss.kind,
            "name": finished.miss.name,
            "reason": finished.miss.describe(),
        }
    if finished.flaky is not None:
        passes, failures = finished.flaky
        row["flaky"] = {"passes": passes, "failures": failures, "attempts": finished.attempts}
    if finished.timed_out and finished.status is TaskStatus.FAILED:
        row["timedOut"] = True
    if finished.not_ready is not None and finished.status is TaskStatus.FAILED:
        row["notReady"] = finished.not_ready
    if finished.withheld:
        row["notPassed"] = list(finished.withheld)
    if finished.audit is not None:
        from vx.audit.report import report_doc

        row["audit"] = report_doc(finished.audit)
    if span is not None:
        row["wallclockStartNs"] = str(span[0])
        row["wallclockEndNs"] = str(span[1])
    return row
