"""What the completion scripts complete, read from the verb table and each verb's flag table.

One source for all three shells: a verb's flags are its COMMAND's rows, a flag's value set is
the row's `choices` (exactly what the parser accepts), and a flag or positional that names
tasks completes the workspace's task names through a hidden `vx completions __tasks` call
made at Tab time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from vx.cli import verbs
from vx.cli.parser import Takes
from vx.util.record import Record

if TYPE_CHECKING:
    from vx.cli.parser import Command

SHELLS = ("bash", "zsh", "fish")
TASKS_WORD = "__tasks"  # the hidden word: prints the workspace's task names, one a line
VERBS_WORD = "__verbs"  # the other: prints the verbs the workspace's plugins declare
TASKS = "@tasks"  # a value set meaning "the workspace's task names"


class FlagSpec(Record):
    """One flag as a completion sees it: its name, how it takes a value, which values."""

    name: str
    takes: Takes
    values: tuple[str, ...]


class VerbSpec(Record):
    """One verb: its name, its one-line summary, its flags and what its words complete to."""

    name: str
    summary: str
    flags: tuple[FlagSpec, ...]
    words: tuple[str, ...]


def table() -> tuple[VerbSpec, ...]:
    """Every verb with its flags, in the verb table's order."""
    specs: list[VerbSpec] = []
    for verb in verbs.VERBS:
        module = importlib.import_module(verb.module)
        command: Command = module.COMMAND
        refused = {f"--{name}" for name in getattr(module, "REFUSED", ())}  # borrowed, refused
        flags = tuple(
            FlagSpec(f.name, f.takes, f.choices or _tasks_if(f.metavar))
            for f in command.flags
            if f.name not in refused
        )
        specs.append(VerbSpec(verb.name, verb.summary, (*flags, _HELP), _words(command)))
    return tuple(specs)


_HELP = FlagSpec("--help", Takes.NOTHING, ())


def _tasks_if(metavar: str) -> tuple[str, ...]:
    return (TASKS,) if "TASK" in metavar.upper() else ()


def _words(command: Command) -> tuple[str, ...]:
    """What a verb's positional words complete to."""
    if command.verb == "help":
        return verbs.names()
    if command.verb == "completions":
        return SHELLS
    if command.verb == "cache":
        return ("prune",)
    if command.words in ("task", "target"):
        return (TASKS,)
    return ()
