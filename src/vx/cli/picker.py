"""`vx run` with no task: a numbered menu on a terminal, one refusal everywhere else."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from vx.errors import ErrorCode, UserError
from vx.util.fuzzy import listing

if TYPE_CHECKING:
    from pathlib import Path

    from vx.workspace.model import Workspace

LISTED = 12


def pick_task(ws: Workspace, cwd: Path, *, json_wanted: bool, stdin: TextIO, prompt: TextIO) -> str:
    """The `pkg#task` the user picked; refuse when nobody can answer the prompt."""
    from vx.loader.assemble import cwd_project

    here = cwd_project(ws, cwd)
    choices = [
        (f"{p.name}#{name}", task.description or "")
        for p in ws.projects
        for name, task in sorted(p.tasks.items())
    ]
    if not choices:
        from vx.adopt.init_runner import adoption_advice

        raise UserError(
            ErrorCode.USAGE,
            f"vx run: this workspace declares no task — {adoption_advice(ws.root)}, or declare"
            " one under `tasks` in a vx.config.json/.toml/.py (see docs/config.md)",
        )
    names = sorted(here.tasks) if here is not None and here.tasks else [c for c, _ in choices]
    shown = listing(names, most=LISTED)
    if json_wanted:
        raise UserError(
            ErrorCode.USAGE,
            f"missing task name (a JSON answer opens no picker; tasks here: {shown})",
        )
    if not _is_tty(stdin):
        raise UserError(
            ErrorCode.USAGE,
            f"missing task name (stdin is not a TTY, so no picker; tasks here: {shown})",
        )
    width = len(str(len(choices)))
    tag = max(len(c) for c, _ in choices)
    for i, (choice, description) in enumerate(choices, 1):
        line = f"  {i:>{width}}) {choice:<{tag}}  {description}".rstrip()
        prompt.write(line + "\n")
    while True:
        prompt.write(f"pick a task [1-{len(choices)}]: ")
        prompt.flush()
        answer = stdin.readline()
        if not answer:
            prompt.write("\n")
            raise UserError(ErrorCode.USAGE, "no task picked")
        text = answer.strip()
        if text.isdigit() and 1 <= int(text) <= len(choices):
            return choices[int(text) - 1][0]
        matches = [c for c, _ in choices if c == text]
        if matches:
            return matches[0]
        prompt.write(f"  {text!r} is not one of 1-{len(choices)}\n")


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False
