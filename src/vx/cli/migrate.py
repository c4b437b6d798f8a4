"""`vx migrate`: write native vx.config.json files from turbo.json or nx.json."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section, Takes
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.adopt.migrate import Migration
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

COMMAND = Command(
    "migrate",
    flags=(
        Flag(
            "--from",
            "the runner whose config to read (default: tasksFrom, else the one the root has)",
            Takes.VALUE,
            "turbo|nx",
            choices=("turbo", "nx"),
        ),
        Flag("--dry", "print the files it would write, and write nothing"),
        Flag("--force", "replace existing vx.config files (of any extension) too"),
    ),
    sections=(
        Section(
            "Notes",
            (
                ("", "each package gets the vx.config.json vx reads live from turbo.json or"),
                ("", "nx.json today: same tasks, edges, inputs and outputs; a package that has"),
                ("", "a vx.config already keeps it (--force replaces it)"),
                ("", "vx.workspace.json loses tasksFrom; turbo.json and nx.json stay until you"),
                ("", "delete them"),
            ),
        ),
        Section(
            "Examples",
            (("vx migrate --dry", ""), ("vx migrate", ""), ("vx migrate --from nx --force", "")),
        ),
    ),
)


class MigrateSettings(Record):
    """What `vx migrate` was asked: the source, whether to write, whether to replace."""

    source: str | None
    dry: bool
    force: bool
    cwd: Path


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> MigrateSettings:  # noqa: ARG001 - the verb protocol
    return MigrateSettings(args.text("from"), args.given("dry"), args.given("force"), cwd)


def execute(settings: MigrateSettings, streams: Streams) -> int:
    """Plan the files, then print them (`--dry`) or write them, and say what comes next."""
    from vx.adopt.migrate import apply_migration, plan_migration

    plan = plan_migration(settings.cwd, settings.source, force=settings.force)
    for warning in plan.warnings:
        streams.err.write(f"warning: {warning}\n")
    if settings.dry:
        for path, text in plan.files.items():
            streams.out.write(f"--- {path}\n{text}")
    else:
        apply_migration(plan)
    streams.out.write(report(plan, dry=settings.dry))
    return 0


def report(plan: Migration, *, dry: bool) -> str:
    """What was (or would be) written, kept and removed, and the command to run next."""
    verb = "would write" if dry else "wrote"
    lines = [f"{verb} {path}" for path in plan.files]
    lines += [f"{'would remove' if dry else 'removed'} {path} (replaced)" for path in plan.remove]
    lines += [f"kept {path} (it exists; --force replaces it)" for path in plan.kept]
    if not plan.files:
        lines.append(f"nothing to write: {plan.source} gives no package a task vx can run")
    if plan.workspace_note:
        lines.append(f"note: {plan.workspace_note}")
    runner = (
        "turbo.json is no longer read; delete it"
        if plan.source == "turbo"
        else "nx.json and project.json are no longer read; delete them"
    )
    if plan.files and not dry:
        task = f"vx run {plan.first_task} --all" if plan.first_task else "vx show"
        lines.append(f"next: {task}  ({runner} when you are ready)")
    return "".join(line + "\n" for line in lines)
