"""`vx completions bash|zsh|fish`: print a completion script made from the verb and flag tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli.completion.table import SHELLS, TASKS_WORD, VERBS_WORD
from vx.cli.parser import Command, Section
from vx.errors import ErrorCode, UserError
from vx.util.fuzzy import did_you_mean
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

COMMAND = Command(
    "completions",
    words="shell",
    most_words=1,
    sections=(
        Section(
            "Arguments",
            (("SHELL", "bash, zsh or fish"),),
        ),
        Section(
            "Install",
            (
                ('eval "$(vx completions bash)"', "bash: in ~/.bashrc"),
                ("vx completions zsh > ~/.zfunc/_vx", "zsh: a directory on $fpath"),
                ("source <(vx completions zsh)", "zsh: or sourced in ~/.zshrc"),
                ("vx completions fish > ~/.config/fish/completions/vx.fish", "fish"),
            ),
        ),
        Section(
            "What completes",
            (
                ("", "verbs, every flag of each verb, the values of flags with a fixed set"),
                ("", "(--format, --output-logs, --continue=…), and task names from the"),
                ("", "workspace around the current directory, read when Tab is pressed"),
            ),
        ),
    ),
)


class CompletionsSettings(Record):
    """Which shell's script to print, or the hidden task listing; and where we are."""

    shell: str
    cwd: Path


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> CompletionsSettings:  # noqa: ARG001
    """A shell vx writes scripts for; a near miss is named."""
    if not args.words:
        raise UserError(ErrorCode.USAGE, "vx completions: name the shell: bash, zsh or fish")
    shell = args.words[0]
    if shell not in (*SHELLS, TASKS_WORD, VERBS_WORD):
        near = did_you_mean(shell, SHELLS)
        hint = f" (did you mean {near}?)" if near else ""
        raise UserError(
            ErrorCode.USAGE,
            f'vx completions: no script for "{shell}"{hint} — the shells are bash, zsh and fish',
        )
    return CompletionsSettings(shell, cwd)


def execute(settings: CompletionsSettings, streams: Streams) -> int:
    """Print the script (or, for the hidden word, the workspace's task names)."""
    if settings.shell == TASKS_WORD:
        streams.out.write("".join(f"{name}\n" for name in task_names(settings.cwd)))
        return 0
    if settings.shell == VERBS_WORD:
        streams.out.write("".join(f"{name}\n" for name in plugin_verb_names(settings.cwd)))
        return 0
    from vx.cli.completion import scripts as completion_scripts
    from vx.cli.completion.table import table

    render = {
        "bash": completion_scripts.bash,
        "zsh": completion_scripts.zsh,
        "fish": completion_scripts.fish,
    }[settings.shell]
    streams.out.write(render(table()))
    return 0


def plugin_verb_names(cwd: Path) -> tuple[str, ...]:
    """The verbs the workspace's plugins declare, read at Tab time (the scripts are static);
    none outside a workspace or where a plugin does not load."""
    from vx.cli.plugincmd import declared_verbs, plugin_verbs

    try:
        return declared_verbs(plugin_verbs(cwd))
    except UserError:
        return ()


def task_names(cwd: Path) -> list[str]:
    """Every task name the workspace declares, then every `project#task`; none outside one."""
    from vx.loader.assemble import load_workspace

    try:
        ws = load_workspace(cwd)
    except UserError:
        return []
    names = sorted({t for p in ws.projects for t in p.tasks})
    ids = sorted(f"{p.name}#{t}" for p in ws.projects for t in p.tasks)
    return names + ids
