"""Frozen settings each verb resolves once from its args, and the pieces every verb shares."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple, TextIO

from vx.cli.parser import Flag, Takes

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs


class OutputFormat(StrEnum):
    """What a reading verb prints on stdout: text for people, or one JSON document."""

    PRETTY = "pretty"
    JSON = "json"


FORMAT_FLAG = Flag(
    "--format",
    "json prints one JSON document on stdout (its schema ships in schemas/)",
    Takes.VALUE,
    choices=tuple(OutputFormat),
)


def output_format(args: ParsedArgs) -> OutputFormat:
    """The `--format` an invocation asked for, pretty when it asked for none."""
    return OutputFormat(args.text(FORMAT_FLAG.dest) or OutputFormat.PRETTY)


class Streams(NamedTuple):
    """Where a verb writes: stdout carries its product, stderr everything else."""

    out: TextIO
    err: TextIO

    def out_is_tty(self) -> bool:
        """stdout is a terminal; a closed or detached stream is not one."""
        try:
            return self.out.isatty()
        except (ValueError, OSError):
            return False


class HelpSettings(NamedTuple):
    """`vx help [VERB]`: which page, and whether the environment lets a terminal be painted."""

    verb: str | None
    paint_allowed: bool


class VersionSettings(NamedTuple):
    """`vx version`: the version string to print."""

    version: str


class ShowSettings(NamedTuple):
    """`vx show [TARGET]`: what to show, in which format, from which directory."""

    target: str | None
    format: OutputFormat
    cwd: Path


class LastSettings(NamedTuple):
    """`vx last`: which run (an id prefix, or the newest, failed or not), or the list of runs
    (`list_count`), or one task's log; where the history lives; the format."""

    run_id: str | None
    list_count: int | None
    failed: bool
    log_task: str | None
    format: OutputFormat
    cache_dir: str | None
    env: Mapping[str, str]
    cwd: Path


class WhySettings(NamedTuple):
    """`vx why TASK`: the task asked about, the run to explain (an id prefix, else the latest
    that ran it), where the history lives, and the format."""

    target: str
    run_id: str | None
    format: OutputFormat
    cache_dir: str | None
    env: Mapping[str, str]
    cwd: Path
