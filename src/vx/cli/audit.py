"""`vx audit`: what the latest `vx run --audit` of each task found, and the config it calls for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli.history import CACHE_DIR_FLAG
from vx.cli.parser import Command, Flag, Section
from vx.cli.settings import AuditSettings
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.audit.patch import FilePatch
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.events import AuditReport

COMMAND = Command(
    "audit",
    flags=(
        Flag("--suggest", "print the config changes the findings call for, as a unified diff"),
        Flag("--apply", "write those changes into the JSON and TOML configs"),
        CACHE_DIR_FLAG,
    ),
    sections=(
        Section(
            "Examples",
            (
                ("vx run build --all --audit", "trace the builds; findings print as they end"),
                ("vx audit", "each task's latest findings again"),
                ("vx audit --suggest | git apply", "the same, as a patch of the configs"),
                ("vx audit --apply", "write the patch"),
            ),
        ),
    ),
)
NOTHING = "vx audit: no task has been audited yet — run vx run --audit first"


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> AuditSettings:
    """One mode: list (bare), suggest or apply."""
    suggest, apply = args.switch("suggest"), args.switch("apply")
    if suggest and apply:
        raise UserError(
            ErrorCode.USAGE,
            "vx audit: --suggest and --apply both given — --suggest prints the patch,"
            " --apply writes it; pick one",
        )
    mode = "apply" if apply else "suggest" if suggest else "list"
    return AuditSettings(mode=mode, cache_dir=args.text("cache-dir"), env=env, cwd=cwd)


def execute(settings: AuditSettings, streams: Streams) -> int:
    """Read each task's latest audit from the history, then list, print or write."""
    from vx.audit.report import audit_lines, report_from_json
    from vx.cli.history import history_dir, open_history

    index = open_history(history_dir(settings.cache_dir, settings.env, settings.cwd), "audit")
    rows = index.latest_audits() if index is not None else []
    reports: dict[str, AuditReport] = {}
    for row in rows:
        report = report_from_json(row.report)
        if report is not None:
            reports[f"{row.project}#{row.task}"] = report
    if not reports:
        raise UserError(ErrorCode.NO_HISTORY, NOTHING)
    if settings.mode == "list":
        said = [f"{tid}: {line}" for tid, r in sorted(reports.items()) for line in audit_lines(r)]
        streams.out.write(
            "".join(f"{line}\n" for line in said)
            or "every audited task did what its config declares\n"
        )
        return 0
    from vx.audit.patch import plan_patches
    from vx.workspace.load import load_workspace

    for tid, report in sorted(reports.items()):
        if report.uncacheable:
            streams.err.write(f"vx audit: {tid} stays uncached — {report.uncacheable}\n")
    patches = plan_patches(load_workspace(settings.cwd), reports)
    if not patches:
        streams.err.write("vx audit: no config change to make\n")
        return 0
    for patch in patches:
        if patch.new is None:
            _by_hand(patch, streams)
        elif settings.mode == "suggest":
            streams.out.write(patch.diff())
        else:
            from vx.util.atomic import write_atomic

            write_atomic(patch.path, patch.new.encode("utf-8"))
            n = sum(len(e.values) for e in patch.edits)
            streams.out.write(f"wrote {patch.shown} ({n} entr{'y' if n == 1 else 'ies'} added)\n")
    return 0


def _by_hand(patch: FilePatch, streams: Streams) -> None:
    streams.err.write(f"vx audit: {patch.shown} not written — {patch.note}; add:\n")
    for edit in patch.edits:
        values = ", ".join(f'"{v}"' for v in edit.values)
        streams.err.write(f"  tasks.{edit.task}.{edit.field}: {values}\n")
