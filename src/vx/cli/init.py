"""`vx init`: a vx.config per package from its package.json scripts, and what to do next."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section
from vx.cli.settings import FORMAT_FLAG, InitSettings, OutputFormat, output_format
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.workspace.init_plan import InitPlan

LISTED = 5

COMMAND = Command(
    "init",
    flags=(
        Flag("--dry", "print the files and the report; write nothing"),
        Flag("--force", "replace existing package configs (of any extension) with generated ones"),
        Flag("--toml", "write vx.config.toml and vx.workspace.toml"),
        Flag("--py", "write vx.config.py and vx.workspace.py"),
        FORMAT_FLAG._replace(
            help="with --dry, json prints the plan as one document (schemas/init.json)"
        ),
    ),
    sections=(
        Section(
            "What it writes",
            (
                ("vx.config.json", "one per package with scripts: each script a task, verbatim"),
                ("vx.workspace.json", "at the root, unless a vx.workspace.* is there"),
                ("", "an existing package config is kept (listed), unless --force"),
            ),
        ),
        Section(
            "Examples",
            (("vx init", ""), ("vx init --dry --format json", ""), ("vx init --toml", "")),
        ),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> InitSettings:
    """One config format, and JSON only for the plan `--dry` prints."""
    fmt = output_format(args)
    if fmt is OutputFormat.JSON and not args.switch("dry"):
        raise UserError(
            ErrorCode.USAGE,
            "vx init: --format json prints the plan, so it goes with --dry"
            " (vx init --dry --format json)",
        )
    if args.switch("toml") and args.switch("py"):
        raise UserError(ErrorCode.USAGE, "vx init: pick one of --toml and --py")
    config_format = "toml" if args.switch("toml") else "py" if args.switch("py") else "json"
    return InitSettings(
        cwd=cwd,
        config_format=config_format,
        dry=args.switch("dry"),
        force=args.switch("force"),
        format=fmt,
        env=env,
    )


def execute(settings: InitSettings, streams: Streams) -> int:
    """Plan, then print the plan (--dry) or write it and print the report."""
    from vx.workspace.init_plan import ConfigFormat, InitRequest, apply_plan, plan_init

    request = InitRequest(
        cwd=settings.cwd,
        format=ConfigFormat(settings.config_format),
        force=settings.force,
        env=settings.env,
    )
    plan = plan_init(request)
    if settings.format is OutputFormat.JSON:
        streams.out.write(json.dumps(document(plan), indent=2, ensure_ascii=False) + "\n")
        return 0
    if settings.dry:
        for planned in plan.files:
            streams.out.write(f"--- {planned.path}\n{planned.text}")
        streams.out.write("\n")
    else:
        apply_plan(plan)
    streams.out.write(report(plan, dry=settings.dry))
    return 0


def document(plan: InitPlan) -> dict[str, object]:
    """The plan as schemas/init.json describes it."""
    return {
        "files": [{"path": f.path, "text": f.text} for f in plan.files],
        "kept": list(plan.kept),
        "replaced": list(plan.replaced),
        "todos": [{"reason": t.reason, "tasks": list(t.tasks)} for t in plan.todos],
        "notes": list(plan.notes),
        "next": plan.next,
    }


def _names(tasks: tuple[str, ...]) -> str:
    head = ", ".join(tasks[:LISTED])
    return head if len(tasks) <= LISTED else f"{head} and {len(tasks) - LISTED} more"


def report(plan: InitPlan, *, dry: bool) -> str:
    """What was written (or would be), kept and replaced; each TODO reason once; notes; next."""
    verb = "would write" if dry else "wrote"
    lines = [f"{verb} {f.path}" for f in plan.files]
    if plan.mapped:
        configs = sum(1 for f in plan.files if "/vx.config." in f"/{f.path}")
        tasks = "task" if plan.mapped == 1 else "tasks"
        files = "config" if configs == 1 else "configs"
        lines.append(f"{plan.mapped} {tasks} from package.json scripts in {configs} {files}")
    lines += [f"kept {path} (as it is)" for path in plan.kept]
    lines += [f"replaced {path}" for path in plan.replaced]
    for todo in plan.todos:
        lines.append(f"TODO: {todo.reason}: {_names(todo.tasks)}")
    lines += [f"note: {note}" for note in plan.notes]
    lines.append(f"next: {plan.next}")
    return "\n".join(lines) + "\n"
