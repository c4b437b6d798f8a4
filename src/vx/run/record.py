"""Write a run's history: one `invocations` row, one `runs` row per task, and its failures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cache.index import AuditRow, IndexOffError, InvocationRow, RunRow
from vx.events import CacheOutcome, TaskStatus

if TYPE_CHECKING:
    from collections.abc import Container, Mapping, Sequence
    from pathlib import Path

    from vx.cache.index import Index
    from vx.ids import TaskId
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan

_HIT = frozenset({CacheOutcome.LOCAL, CacheOutcome.UP_TO_DATE, CacheOutcome.REMOTE})
CI_PROVIDERS = (
    ("GITHUB_ACTIONS", "github-actions"),
    ("GITLAB_CI", "gitlab"),
    ("BUILDKITE", "buildkite"),
    ("CIRCLECI", "circleci"),
    ("CI", "ci"),
)


def ci_provider(env: Mapping[str, str]) -> str | None:
    """The first truthy of the providers' own variables, then plain `CI`."""
    for name, provider in CI_PROVIDERS:
        if env.get(name, "").strip().lower() not in ("", "0", "false"):
            return provider
    return None


def record_run(
    index: Index,
    outcome: RunOutcome,
    *,
    groups: Container[TaskId],
    command: str,
    git_sha: str | None,
    git_branch: str | None,
    env: Mapping[str, str],
    tags: Sequence[tuple[str, str]],
) -> str | None:
    """Both tables in one transaction, so `vx last` never sees half a run.

    An index found damaged (during the run, or by this very write) is moved aside first and
    the history goes into a new one; one the disk refused at the start keeps none. Returns
    the line to print about that, if any.
    """
    rows = [
        RunRow(
            run_id=outcome.run_id,
            project=f.id.project,
            task=f.id.task,
            status=f.status,
            cache=f.cache,
            key=f.key,
            exit_code=f.exit_code,
            duration_ms=f.duration_ms,
            cpu_ms=f.cpu_ms,
            peak_rss_bytes=f.peak_rss_bytes,
            started_ns=outcome.spans.get(f.id, (None, None))[0],
            ended_ns=outcome.spans.get(f.id, (None, None))[1],
            attempts=f.attempts,
            timed_out=f.timed_out,
            blocked_by=str(f.blocked_by) if f.blocked_by else None,
            reason=f.reason,
            tainted=f.tainted,
        )
        for f in outcome.finished
        if f.id not in groups
    ]
    invocation = InvocationRow(
        run_id=outcome.run_id,
        command=command,
        started_at_ms=int(outcome.started_at * 1000),
        ended_at_ms=int(outcome.ended_at * 1000),
        exit_code=outcome.exit_code,
        git_branch=git_branch,
        git_sha=git_sha,
        ci_provider=ci_provider(env),
        tags=tuple(tags),
        tasks=len(rows),
        cache_hits=sum(1 for r in rows if r.cache in _HIT and r.status is TaskStatus.SUCCESS),
        failed=sum(1 for r in rows if r.status is TaskStatus.FAILED),
        skipped=sum(1 for r in rows if r.status is TaskStatus.SKIPPED),
    )
    audits: list[AuditRow] = []
    if any(f.audit is not None for f in outcome.finished):
        from vx.audit.report import report_json

        audits = [
            AuditRow(f.id.project, f.id.task, report_json(f.audit))
            for f in outcome.finished
            if f.audit is not None
        ]
    note = index.recover()
    if index.off is not None:
        return note
    try:
        index.record_invocation(invocation, rows, audits)
    except IndexOffError:
        note = index.recover() or note
        if index.off is None:
            index.record_invocation(invocation, rows, audits)
    return note


def keep_failures(cache_dir: Path, plan: RunPlan, outcome: RunOutcome) -> Path | None:
    """A failed run's task output and the files it names, for `vx last` and people."""
    if not any(f.status is TaskStatus.FAILED for f in outcome.finished):
        return None
    from vx.cache.failures import RunFailures, task_failure, write_failures

    failed = [
        task_failure(
            f.id,
            f.exit_code,
            outcome.failure_logs.get(f.id, ""),
            plan.nodes[f.id].project.dir,
            timed_out=f.timed_out,
        )
        for f in outcome.finished
        if f.status is TaskStatus.FAILED
    ]
    return write_failures(cache_dir, RunFailures(outcome.run_id, tuple(failed)))
