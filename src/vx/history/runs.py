"""The run history read back for `vx last`: which run, its rows in replay order, the JSON.

Data in, text out: the queries go through `cache.index`, the failures through
`cache.failures`, and `cli/last.py` only picks the form and prints what this returns.
"""

from __future__ import annotations

import json
import signal
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vx.errors import ErrorCode, UserError
from vx.events import CacheOutcome, TaskStatus
from vx.util.record import Record
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.cache.failures import RunFailures
    from vx.cache.index import Index, InvocationRow, RunRow

NO_RUNS = "vx last: no recorded runs yet — run something first"
SHOWN_HITS = 16
"""Hits a replay prints before folding the rest into one line."""
PREFIX_MIN = 13
_ID_CHARS = frozenset("0123456789abcdef-")
_HITS = frozenset({CacheOutcome.LOCAL, CacheOutcome.REMOTE, CacheOutcome.UP_TO_DATE})
_ALL_RUNS = 1_000_000_000


class Replay(Record):
    """One recorded run: its header, its task rows, and the failures it kept."""

    invocation: InvocationRow
    rows: tuple[RunRow, ...]
    failures: RunFailures | None
    audits: Mapping[str, str] = MappingProxyType({})  # task id → its audit's JSON


def looks_like_run_id(word: str) -> bool:
    """Eight hex digits at least (dashes allowed): what `--list`'s space form leaves alone."""
    return sum(ch != "-" for ch in word) >= 8 and all(ch in _ID_CHARS for ch in word.lower())


def pick_run(index: Index | None, run_id: str | None, *, failed: bool) -> InvocationRow:
    """The run a replay shows: RUNID's (a unique prefix), else the newest (failed) one."""
    if index is None:
        raise UserError(ErrorCode.NO_HISTORY, NO_RUNS)
    if run_id is None:
        found = index.invocations(limit=1, failed=failed)
        if found:
            return found[0]
        if failed and index.invocations(limit=1):
            raise UserError(ErrorCode.NO_HISTORY, "vx last --failed: no recorded run failed")
        raise UserError(ErrorCode.NO_HISTORY, NO_RUNS)
    matches = index.invocations(limit=11, prefix=run_id.lower())
    if len(matches) == 1:
        return matches[0]
    if not matches:
        if not index.invocations(limit=1):
            raise UserError(ErrorCode.NO_HISTORY, NO_RUNS)
        raise UserError(
            ErrorCode.NO_HISTORY,
            f"vx last: no recorded run has the id {clip(run_id)} — vx last --list shows the runs",
        )
    listed = ", ".join(m.run_id for m in matches[:10]) + (" …" if len(matches) > 10 else "")
    raise UserError(
        ErrorCode.AMBIGUOUS,
        f"vx last: {clip(run_id)} starts several run ids ({listed}) — type more of one",
    )


def load_replay(index: Index, cache_dir: Path, invocation: InvocationRow) -> Replay:
    """The run's rows and, when it failed, the output it kept."""
    from vx.cache.failures import read_failures

    rows = tuple(index.run_rows(invocation.run_id))
    failures = read_failures(cache_dir, invocation.run_id) if invocation.failed else None
    audits = {f"{a.project}#{a.task}": a.report for a in index.run_audits(invocation.run_id)}
    return Replay(invocation, rows, failures, MappingProxyType(audits))


def replay_order(rows: Sequence[RunRow]) -> tuple[list[RunRow], list[RunRow]]:
    """Failures first, then what executed or was skipped, then the hits, slowest restore
    first: (the rows a replay prints, the hits it folds)."""
    failed = [r for r in rows if r.status is TaskStatus.FAILED]
    hits = sorted(
        (r for r in rows if r.status is TaskStatus.SUCCESS and r.cache in _HITS),
        key=lambda r: -r.duration_ms,
    )
    rest = [r for r in rows if r not in failed and r not in hits]
    return [*failed, *rest, *hits[:SHOWN_HITS]], hits[SHOWN_HITS:]


def short_ids(index: Index) -> dict[str, str]:
    """Each run id cut to the shortest prefix no other run shares, 13 characters at least."""
    ids = sorted(inv.run_id for inv in index.invocations(limit=_ALL_RUNS))
    out: dict[str, str] = {}
    for i, rid in enumerate(ids):
        need = PREFIX_MIN
        for other in (ids[i - 1] if i else "", ids[i + 1] if i + 1 < len(ids) else ""):
            common = 0
            while common < min(len(rid), len(other)) and rid[common] == other[common]:
                common += 1
            need = max(need, common + 1)
        out[rid] = rid[:need]
    return out


def rerun_lines(invocation: InvocationRow, rows: Sequence[RunRow]) -> list[str]:
    """The commands that re-run what failed: a task the user named keeps the args the run
    forwarded (shell-quoted); a failed dependency never got them and gets its own line."""
    import shlex

    from vx.util.text import shell_quote

    failed = [f"{r.project}#{r.task}" for r in rows if r.status is TaskStatus.FAILED]
    if not failed:
        return []
    try:
        words = shlex.split(invocation.command)
    except ValueError:
        words = invocation.command.split()
    own, forward = words, []
    if "--" in words:
        cut = words.index("--")
        own, forward = words[:cut], words[cut + 1 :]
    named = {w for w in own[2:] if not w.startswith("-")}
    got = [t for t in failed if forward and (t in named or t.partition("#")[2] in named)]
    rest = [t for t in failed if t not in got]
    lines = []
    if got:
        tail = " ".join(shell_quote(w) for w in forward)
        lines.append(f"vx run {' '.join(got)} -- {tail}")
    if rest:
        lines.append(f"vx run {' '.join(rest)}")
    return lines


def row_note(row: RunRow) -> str:
    """What ends a row: the failure's label, a skip's cause, or what an execution used."""
    if row.status is TaskStatus.FAILED:
        if row.reason:
            return row.reason
        code = row.exit_code
        if code is None:
            return "failed"
        text = f"failed (exit {code})"
        if code > 128:
            try:
                name = signal.Signals(code - 128).name
            except ValueError:
                name = f"signal {code - 128}"
            text += f" 128 + {name}"
        return text
    if row.status is TaskStatus.SKIPPED:
        if row.reason:
            return row.reason  # `waiting on app#dev, not ready`
        return f"after {row.blocked_by} failed" if row.blocked_by else ""
    if row.cache in _HITS or not row.cpu_ms or not row.duration_ms:
        return ""
    cpu = f"{row.cpu_ms / row.duration_ms:.1f}\u00d7 cpu"
    if row.peak_rss_bytes and row.peak_rss_bytes >= 64 * 2**20:
        return f"{row.peak_rss_bytes // 2**20} MB · {cpu}"
    return cpu


def invocation_json(inv: InvocationRow) -> dict[str, Any]:
    """A run's header as `schemas/last.json` § invocation has it."""
    return {
        "runId": inv.run_id,
        "command": inv.command,
        "ok": inv.exit_code == 0,
        "exitCode": inv.exit_code,
        "startedAt": iso_ms(inv.started_at_ms),
        "endedAt": iso_ms(inv.ended_at_ms),
        "durationMs": max(inv.ended_at_ms - inv.started_at_ms, 0),
        "gitBranch": inv.git_branch,
        "gitSha": inv.git_sha,
        "ci": inv.ci_provider,
        "tags": dict(inv.tags),
        "tasks": inv.tasks,
        "cacheHits": inv.cache_hits,
        "failed": inv.failed,
        "skipped": inv.skipped,
    }


def replay_json(replay: Replay) -> dict[str, Any]:
    """`{invocation, tasks}`: every row; a failed one adds its kept `output` and `locations`."""
    kept = {str(t.task): t for t in replay.failures.tasks} if replay.failures else {}
    tasks: list[dict[str, Any]] = []
    for r in replay.rows:
        doc: dict[str, Any] = {
            "id": f"{r.project}#{r.task}",
            "project": r.project,
            "task": r.task,
            "status": str(r.status),
            "cache": str(r.cache),
            "key": r.key,
            "exitCode": r.exit_code,
            "durationMs": round(r.duration_ms, 3),
            "cpuMs": r.cpu_ms,
            "peakRssBytes": r.peak_rss_bytes,
            "attempts": r.attempts,
            "timedOut": r.timed_out,
            "blockedBy": r.blocked_by,
            "reason": r.reason,
        }
        if r.status is TaskStatus.FAILED:
            failure = kept.get(doc["id"])
            doc["output"] = failure.output if failure else ""
            doc["locations"] = [
                {
                    "file": loc.file,
                    **({"line": loc.line} if loc.line is not None else {}),
                    **({"col": loc.col} if loc.col is not None else {}),
                }
                for loc in (failure.locations if failure else ())
            ]
        audit = replay.audits.get(doc["id"])
        if audit is not None:
            doc["audit"] = json.loads(audit)
        tasks.append(doc)
    return {"invocation": invocation_json(replay.invocation), "tasks": tasks}


def iso_ms(ms: int) -> str:
    """`2026-10-08T01:57:05.486Z` for a time in ms since the epoch."""
    import time

    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"


class TaskLog(Record):
    """One task's output as `vx last --log` prints it; `source` None when it kept none."""

    run_id: str
    task_id: str
    status: str
    source: str | None
    output: str


def task_log(
    index: Index, cache_dir: Path, replay_run: InvocationRow | None, task_id: str
) -> TaskLog:
    """The task's output in `replay_run` (else the newest run that recorded it): the kept
    failure output for a failure, else its cache entry's log."""
    project, _, task = task_id.partition("#")
    if not task:
        raise UserError(ErrorCode.USAGE, f"--log {clip(task_id)}: name the task as PKG#TASK")
    row: RunRow | None = None
    if replay_run is not None:
        row = next(
            (
                r
                for r in index.run_rows(replay_run.run_id)
                if (r.project, r.task) == (project, task)
            ),
            None,
        )
        where = f"run {replay_run.run_id}"
    else:
        found = index.task_runs(project, task, limit=1)
        row = found[0][0] if found else None
        where = "any recorded run"
    if row is None:
        raise UserError(
            ErrorCode.NO_HISTORY,
            f"vx last --log: {clip(task_id)} is in no row of {where}"
            " — vx last --list shows the runs",
        )
    if row.status is TaskStatus.FAILED:
        from vx.cache.failures import read_failures

        kept = read_failures(cache_dir, row.run_id)
        for t in kept.tasks if kept else ():
            if str(t.task) == task_id:
                return TaskLog(row.run_id, task_id, str(row.status), "failure", t.output)
        return TaskLog(row.run_id, task_id, str(row.status), None, "")
    chunks = index.entry_log(row.key) if row.key and index.get_entry(row.key) else None
    if chunks is None:
        return TaskLog(row.run_id, task_id, str(row.status), None, "")
    text = "".join(c.text for c in chunks)
    return TaskLog(row.run_id, task_id, str(row.status), "cache", text)
