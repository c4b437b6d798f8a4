"""`vx lock`: freeze every project's evaluated config into vx-lock.json, or audit the lock."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section
from vx.cli.settings import FORMAT_FLAG, LockSettings, OutputFormat, output_format
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.loader.lockconfig import Audit

COMMAND = Command(
    "lock",
    flags=(
        Flag(
            "--check",
            "audit instead: each config file's hash, and a fresh evaluation compared with the"
            " locked value; exit 1 on any drift",
        ),
        FORMAT_FLAG._replace(help="with --check, json prints the audit (schemas/lock.json)"),
    ),
    sections=(
        Section(
            "In CI",
            (
                ("vx lock --check && vx run build --all --frozen", ""),
                ("", "--frozen reads configs from vx-lock.json and evaluates none"),
            ),
        ),
        Section("Examples", (("vx lock", ""), ("vx lock --check --format json", ""))),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> LockSettings:
    """JSON answers the audit only."""
    fmt = output_format(args)
    check = args.switch("check")
    if fmt is OutputFormat.JSON and not check:
        raise UserError(
            ErrorCode.USAGE,
            "vx lock: --format json prints the audit, so it goes with --check"
            " (vx lock --check --format json)",
        )
    return LockSettings(check=check, format=fmt, cwd=cwd, env=env)


def execute(settings: LockSettings, streams: Streams) -> int:
    """Write the lock and say what it holds, or audit it and list every problem."""
    from vx.loader.lockconfig import LOCK_FILE, check_lock, write_lock

    if not settings.check:
        found = write_lock(settings.cwd, settings.env)
        n = len(found.entries)
        line = f"locked {n} project config{'s' * (n != 1)} → {LOCK_FILE}"
        streams.out.write(line + _configless(len(found.configless)) + "\n")
        return 0
    audit = check_lock(settings.cwd)
    if settings.format is OutputFormat.JSON:
        streams.out.write(json.dumps(document(audit), indent=2, ensure_ascii=False) + "\n")
    if audit.up_to_date:
        if settings.format is OutputFormat.PRETTY:
            n = len(audit.audited)
            line = f"{LOCK_FILE} is up to date: {n} project config{'s' * (n != 1)} audited"
            streams.out.write(line + _configless(len(audit.not_audited)) + "\n")
        return 0
    if [p.kind for p in audit.problems] == ["missing-lock"]:
        streams.err.write(f"vx lock --check: {audit.problems[0].message}\n")  # no count to add
        return 1
    for problem in audit.problems:
        streams.err.write(problem.message + "\n")
    n = len(audit.problems)
    streams.err.write(
        f"vx lock --check: {n} problem{'s' * (n != 1)} — run vx lock to write the lock again\n"
    )
    return 1


def _configless(count: int) -> str:
    if not count:
        return ""
    if count == 1:
        return " (1 project has no vx.config; its tasks are never frozen)"
    return f" ({count} projects have no vx.config; their tasks are never frozen)"


def document(audit: Audit) -> dict[str, object]:
    """The audit as schemas/lock.json describes it."""
    return {
        "upToDate": audit.up_to_date,
        "audited": list(audit.audited),
        "notAudited": list(audit.not_audited),
        "problems": [
            {"project": p.project, "kind": p.kind, "message": p.message} for p in audit.problems
        ],
    }
