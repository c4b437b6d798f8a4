"""`vx last`: replay a recorded run's summary, list the recent runs, or print one task's log."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vx.cli.history import CACHE_DIR_FLAG
from vx.cli.parser import Command, Flag, Section, Takes
from vx.cli.settings import FORMAT_FLAG, LastSettings, OutputFormat, output_format
from vx.errors import ErrorCode, UserError
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.runlog import InvocationRow, RunRow
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.history.runs import Replay

DEFAULT_LIST = 10

COMMAND = Command(
    "last",
    flags=(
        Flag(
            "--list",
            "print the N most recent runs (default 10), one per line",
            Takes.OPTIONAL,
            metavar="N",
        ),
        Flag("--failed", "the latest run that failed; with --list, only failed runs"),
        Flag("--log", "print one task's output in that run instead", Takes.VALUE, "PKG#TASK"),
        FORMAT_FLAG,
        CACHE_DIR_FLAG,
    ),
    words="run id",
    most_words=None,
    sections=(
        Section(
            "Arguments",
            (("RUNID", "the run to replay: its id, or a prefix of it no other run shares"),),
        ),
        Section(
            "Examples",
            (
                ("vx last", ""),
                ("vx last --list 5", ""),
                ("vx last --failed --format json", ""),
                ("vx last --log app#test", ""),
            ),
        ),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> LastSettings:
    """`--list 5` and `--list=5` alike: the space form takes a next word that is no run id."""
    from vx.history.runs import looks_like_run_id

    words = list(args.words)
    count: int | None = None
    if args.given("list"):
        text = args.text("list") or ""
        if not text and words and not looks_like_run_id(words[0]):
            text = words.pop(0)
        count = _count(text) if text else DEFAULT_LIST
    if len(words) > 1 or (count is not None and words):
        extra = words[1:] if count is None else words
        raise UserError(
            ErrorCode.USAGE,
            f"vx last: unexpected argument {clip(extra[0])} — it takes one RUNID, or --list",
        )
    log_task = args.text("log")
    if log_task is not None and (count is not None or args.switch("failed")):
        raise UserError(ErrorCode.USAGE, "vx last: --log does not combine with --list or --failed")
    return LastSettings(
        run_id=words[0] if words else None,
        list_count=count,
        failed=args.switch("failed"),
        log_task=log_task,
        format=output_format(args),
        cache_dir=args.text("cache-dir"),
        env=env,
        cwd=cwd,
    )


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UserError(
            ErrorCode.USAGE, f"--list {clip(text)}: expected a whole number of runs, 1 or more"
        )
    return int(text)


def execute(settings: LastSettings, streams: Streams) -> int:
    """Open the history read-only and print the form asked for."""
    from vx.cli.history import history_dir, open_history, root_alias
    from vx.history import runs

    directory = history_dir(settings.cache_dir, settings.env, settings.cwd)
    index = open_history(directory, "last")
    as_json = settings.format is OutputFormat.JSON
    if settings.list_count is not None:
        found = (
            index.invocations(limit=settings.list_count, failed=settings.failed) if index else []
        )
        if as_json:
            _dump(streams, [runs.invocation_json(inv) for inv in found])
        elif not found:
            streams.out.write("no recorded run failed\n" if settings.failed and index else "")
            if not (settings.failed and index and index.invocations(limit=1)):
                streams.out.write("no recorded runs\n")
        elif index is not None:
            streams.out.write(_list_text(found, runs.short_ids(index)))
        return 0
    if settings.log_task is not None:
        if index is None:
            raise UserError(ErrorCode.NO_HISTORY, runs.NO_RUNS)
        inv = runs.pick_run(index, settings.run_id, failed=False) if settings.run_id else None
        task_id = root_alias(settings.log_task, settings.cwd)
        log = runs.task_log(index, directory, inv, task_id)
        if as_json:
            _dump(
                streams,
                dict(zip(("runId", "taskId", "status", "source", "output"), log, strict=True)),
            )
        else:
            streams.out.write(log.output)
            if log.source is None:
                streams.err.write(f"vx last: {log.task_id} kept no output in run {log.run_id}\n")
        return 0
    if index is None:
        raise UserError(ErrorCode.NO_HISTORY, runs.NO_RUNS)
    inv = runs.pick_run(index, settings.run_id, failed=settings.failed)
    replay = runs.load_replay(index, directory, inv)
    if as_json:
        _dump(streams, runs.replay_json(replay))
    else:
        streams.out.write(_replay_text(replay))
    return 0


def _dump(streams: Streams, doc: Any) -> None:
    streams.out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _verdict(inv: InvocationRow) -> str:
    return "passed" if inv.exit_code == 0 else f"failed (exit {inv.exit_code})"


def _counts(inv: InvocationRow) -> str:
    parts = [f"{inv.tasks} task" + ("" if inv.tasks == 1 else "s"), f"{inv.cache_hits} cached"]
    if inv.failed:
        parts.append(f"{inv.failed} failed")
    if inv.skipped:
        parts.append(f"{inv.skipped} skipped")
    return " · ".join(parts)


def _list_text(found: list[InvocationRow], short: Mapping[str, str]) -> str:
    from vx.history.runs import iso_ms
    from vx.util.words import format_duration

    cells = [
        (
            "passed" if inv.exit_code == 0 else "failed",
            iso_ms(inv.started_at_ms),
            short.get(inv.run_id, inv.run_id),
            _counts(inv),
            format_duration(inv.ended_at_ms - inv.started_at_ms),
            inv.command,
        )
        for inv in found
    ]
    width = [max(len(c[i]) for c in cells) for i in range(5)]
    return "".join(
        "  ".join(c[i].ljust(width[i]) for i in range(5)) + "  " + c[5] + "\n" for c in cells
    )


def _replay_text(replay: Replay) -> str:
    from vx.history.runs import iso_ms, replay_order, rerun_lines
    from vx.util.words import format_duration

    inv = replay.invocation
    lines = [
        f"vx last — run {inv.run_id}",
        f"  verdict   {_verdict(inv)}",
        f"  command   $ {inv.command}",
        f"  when      {iso_ms(inv.started_at_ms)} · "
        + format_duration(inv.ended_at_ms - inv.started_at_ms),
    ]
    if inv.git_branch or inv.git_sha:
        lines.append(f"  git       {inv.git_branch or '(detached)'} @ {(inv.git_sha or '?')[:12]}")
    if inv.ci_provider:
        lines.append(f"  ci        {inv.ci_provider}")
    lines.append(f"  tasks     {_counts(inv)}")
    shown, folded = replay_order(replay.rows)
    if shown:
        lines.append("")
        lines.extend(_row_lines(shown))
    if folded:
        lines.append(f"  … +{len(folded)} more cache hits")
    again = rerun_lines(inv, replay.rows)
    if again:
        lines.append("")
        lines.extend(f"re-run what failed: {cmd}" for cmd in again)
    return "\n".join(lines) + "\n"


def _row_lines(rows: list[RunRow]) -> list[str]:
    from vx.history.runs import row_note
    from vx.output.rows import CACHE_WORDS
    from vx.util.words import format_duration

    cells = [
        (
            str(r.status),
            CACHE_WORDS[r.cache] if r.status is not r.status.SKIPPED else "",
            f"{r.project}#{r.task}",
            "" if r.status is r.status.SKIPPED else format_duration(r.duration_ms),
            f"key {r.key}" if r.key else "no key",
            row_note(r),
        )
        for r in rows
    ]
    width = [max(len(c[i]) for c in cells) for i in range(5)]
    return [
        (
            "  "
            + "  ".join(c[i].ljust(width[i]) if i != 3 else c[i].rjust(width[i]) for i in range(5))
            + ("  " + c[5] if c[5] else "")
        ).rstrip()
        for c in cells
    ]
