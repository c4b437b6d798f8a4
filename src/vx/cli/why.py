"""`vx why TASK`: why a task re-ran, from the key components the history kept."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vx.cli.history import CACHE_DIR_FLAG
from vx.cli.parser import Command, Flag, Section, Takes
from vx.cli.settings import FORMAT_FLAG, OutputFormat, WhySettings, output_format
from vx.errors import ErrorCode, UserError
from vx.util.text import escape_controls

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.diff import Change
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.history.why import Explanation, Side

COMMAND = Command(
    "why",
    flags=(
        Flag("--run", "explain the task's run in RUNID (a unique prefix)", Takes.VALUE, "RUNID"),
        FORMAT_FLAG,
        CACHE_DIR_FLAG,
    ),
    words="task",
    most_words=1,
    sections=(
        Section(
            "Arguments",
            (
                ("TASK", "a task name one project ran (else the current directory's project)"),
                ("PKG#TASK", "one task of one project"),
            ),
        ),
        Section("Examples", (("vx why app#build", ""), ("vx why build --format json", ""))),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> WhySettings:
    """One task, named or bare."""
    if not args.words or not args.words[0].strip():
        raise UserError(ErrorCode.USAGE, "vx why: name the task to explain, e.g. vx why app#build")
    return WhySettings(
        target=args.words[0],
        run_id=args.text("run"),
        format=output_format(args),
        cache_dir=args.text("cache-dir"),
        env=env,
        cwd=cwd,
    )


def execute(settings: WhySettings, streams: Streams) -> int:
    """Read the history, explain, print."""
    from vx.cli.history import history_dir, open_history, root_alias
    from vx.history.why import explain, resolve_task

    index = open_history(history_dir(settings.cache_dir, settings.env, settings.cwd), "why")
    if index is None:
        raise UserError(ErrorCode.NO_HISTORY, "vx why: nothing has run yet — run something first")
    target = root_alias(settings.target, settings.cwd)
    task_id = resolve_task(index, target, _cwd_project(settings.cwd))
    found = explain(index, task_id, settings.run_id, store=index.path.parent)
    audit = next(
        (
            a.report
            for a in index.run_audits(found.latest.row.run_id)
            if a.project + "#" + a.task == task_id
        ),
        None,
    )
    if settings.format is OutputFormat.JSON:
        doc = _document(found)
        if audit is not None:
            doc["audit"] = json.loads(audit)
        streams.out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        streams.out.write(_text(found) + _audit_text(audit))
    return 0


def _audit_text(audit: str | None) -> str:
    """What `--audit` found in this run, as the run said it (nothing when it did not audit)."""
    if audit is None:
        return ""
    from vx.audit.report import audit_lines, report_from_json

    report = report_from_json(audit)
    if report is None:
        return ""
    lines = [line.removeprefix("audit: ") for line in audit_lines(report)]
    lines = lines or ["the task did what its config declares"]
    return "\n  audit (this run):\n" + "".join(f"    {line}\n" for line in lines)


def _cwd_project(cwd: Path) -> str | None:
    """The name in the nearest manifest at or above cwd (`package.json`, else a
    `pyproject.toml`'s `[project]`): the project `vx run` would pick. Read as plain files, so
    `vx why` evaluates no config."""
    for directory in (cwd, *cwd.parents):
        for manifest in ("package.json", "pyproject.toml"):
            path = directory / manifest
            if path.is_file():
                return _manifest_name(path)
    return None


def _manifest_name(path: Path) -> str | None:
    try:
        text = path.read_text("utf-8")
        if path.name == "package.json":
            name = json.loads(text).get("name")
        else:
            import tomllib

            name = tomllib.loads(text).get("project", {}).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _side_text(side: Side, *, latest: bool) -> str:
    from vx.events import CacheOutcome, TaskStatus
    from vx.history.runs import iso_ms

    row = side.row
    parts = [iso_ms(side.started_ms), str(row.status)]
    if row.status is TaskStatus.SKIPPED or row.key is None:
        parts.append("no key")
        return " · ".join(parts)
    if latest:
        hit = row.cache in (CacheOutcome.LOCAL, CacheOutcome.UP_TO_DATE)
        parts.append(
            "cache-hit"
            if hit
            else "cache-hit-remote"
            if row.cache is CacheOutcome.REMOTE
            else "executed"
        )
    parts.append(f"key {row.key}")
    return " · ".join(parts)


def _change_row(c: Change) -> str:
    old = c.old or "(none)"
    new = c.new or "(none)"
    return f"{c.how} {c.kind}  {escape_controls(c.name)}  {old} → {new}"


def _text(e: Explanation) -> str:
    lines = [f"{e.task_id} — run {e.latest.row.run_id}"]
    lines.append(f"  this run   {_side_text(e.latest, latest=True)}")
    if e.previous is not None:
        lines.append(f"  previous   {_side_text(e.previous, latest=False)}")
    if e.compared is not None:
        lines.append(
            f"  compared   {_side_text(e.compared, latest=False)} (run {e.compared.row.run_id},"
            " the last that saved an entry)"
        )
    lines.append(f"  verdict    {escape_controls(e.verdict)}")
    if e.verdict.startswith("cache key changed") and e.changes is None:
        lines.append(f"  {_no_diff(e)}")
    if e.changes:
        n = len(e.changes)
        lines += ["", f"  what changed ({n} component{'s' * (n != 1)}, {e.unchanged} unchanged):"]
        for c in e.changes:
            lines.append(f"    {_change_row(c)}")
            lines += [f"      {c.kind}: {escape_controls(d)}" for d in c.detail]
    if e.roots:
        lines += ["", "  root cause:"]
        for root in e.roots:
            what = ", ".join(f"{c.kind} {escape_controls(c.name)}" for c in root.changes[:3])
            lines.append(f"    {' ← '.join(root.chain)} ← {what}")
            lines += [
                f"      {c.kind}: {escape_controls(d)}" for c in root.changes[:3] for d in c.detail
            ]
        if e.more_roots:
            lines.append(f"    … +{e.more_roots} more")
    from vx.history.why import todo_lines

    todo = todo_lines(e)
    if todo:
        width = max(len(k) for k, _ in todo)
        lines += ["", "  what to do:"]
        lines += [f"    {k.ljust(width)}  {text}" for k, text in todo]
    return "\n".join(lines) + "\n"


def _no_diff(e: Explanation) -> str:
    """Why only the key change is known: a run that saves no entry, or an entry gone."""
    from vx.events import CacheOutcome

    if e.latest.row.cache is CacheOutcome.NO_CACHE:
        return (
            "the component diff is unavailable: this run saved no entry (the task has no cache"
            " block, or the run used --no-cache), so only the key change is known"
        )
    return (
        "the component diff is unavailable: an entry of one side is gone (pruned, or its run"
        " failed and saved none)"
    )


def _side_json(side: Side | None) -> dict[str, Any] | None:
    if side is None:
        return None
    from vx.events import TaskStatus
    from vx.history.runs import iso_ms

    row = side.row
    return {
        "runId": row.run_id,
        "startedAt": iso_ms(side.started_ms),
        "status": str(row.status),
        "cache": str(row.cache),
        "key": None if row.status is TaskStatus.SKIPPED else row.key,
    }


def _change_json(c: Change) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": str(c.kind),
        "name": c.name,
        "change": c.how,
        "old": c.old,
        "new": c.new,
    }
    if c.detail:
        doc["detail"] = list(c.detail)
    return doc


def _document(e: Explanation) -> dict[str, Any]:
    from vx.history.why import todo_lines

    return {
        "taskId": e.task_id,
        "runId": e.latest.row.run_id,
        "why": {
            "verdict": e.verdict,
            "latest": _side_json(e.latest),
            "previous": _side_json(e.previous),
            "comparedWith": _side_json(e.compared),
            "todo": [{"kind": k, "text": t} for k, t in todo_lines(e)],
            "moreRoots": e.more_roots,
        },
        "diff": None
        if e.changes is None
        else {"changed": [_change_json(c) for c in e.changes], "unchanged": e.unchanged},
        "roots": [
            {"chain": list(r.chain), "entries": [_change_json(c) for c in r.changes]}
            for r in e.roots
        ],
    }
