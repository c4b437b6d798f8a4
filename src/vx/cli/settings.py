"""Frozen settings each verb resolves once from its args, and the pieces every verb shares."""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, TextIO

from vx.cli.parser import Flag, Takes
from vx.util.record import Record

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


FILTER_FLAG = Flag(
    "--filter",
    "select projects: a name (* matches any run), tag:<t>, ./<dir>, {<dir>}, //, [<ref>];"
    " ... adds dependencies after, dependents before; ^ leaves the match out; ! excludes"
    " (repeatable; every include, then every exclude)",
    Takes.VALUE,
    metavar="<pattern>",
    repeat=True,
)

CACHE_DIR_FLAG = Flag(
    "--cache-dir",
    "read the cache a run with the same --cache-dir uses (relative to the current directory)",
    Takes.VALUE,
    metavar="<path>",
    no_dash=True,
)


AFFECTED_FLAG = Flag(
    "--affected",
    "select the tasks a change since <base>'s merge base reaches (uncommitted and untracked"
    " files included); default: affectedBase, the CI's base, origin/HEAD, main or master,"
    " else HEAD~1",
    Takes.OPTIONAL,
    metavar="<base>",
)


def ci_bases(env: Mapping[str, str]) -> tuple[str, ...]:
    """The refs GitHub Actions names as a change's base, first to try first: a pull request's
    base branch (`GITHUB_BASE_REF`, as origin/<branch>, then <branch>), else the commit a push
    moved the branch from (`before` in the event file `GITHUB_EVENT_PATH` names)."""
    if env.get("GITHUB_ACTIONS", "").strip().lower() != "true":
        return ()
    branch = env.get("GITHUB_BASE_REF", "").strip()
    if branch:
        return (f"origin/{branch}", branch)
    event = env.get("GITHUB_EVENT_PATH", "").strip()
    if not event:
        return ()
    import json
    from pathlib import Path

    try:
        doc = json.loads(Path(event).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    before = doc.get("before") if isinstance(doc, dict) else None
    if isinstance(before, str) and before.strip("0") and not before.startswith("-"):
        return (before,)  # all zeros: a new branch, with nothing before it
    return ()


def output_format(args: ParsedArgs) -> OutputFormat:
    """The `--format` an invocation asked for, pretty when it asked for none."""
    return OutputFormat(args.text(FORMAT_FLAG.dest) or OutputFormat.PRETTY)


class Streams(Record):
    """Where a verb writes: stdout carries its product, stderr everything else."""

    out: TextIO
    err: TextIO

    def out_is_tty(self) -> bool:
        """stdout is a terminal; a closed or detached stream is not one."""
        try:
            return self.out.isatty()
        except (ValueError, OSError):
            return False


class HelpSettings(Record):
    """`vx help [VERB]`: which page, and whether the environment lets a terminal be painted."""

    verb: str | None
    paint_allowed: bool
    plugin_verbs: tuple[tuple[str, str], ...] = ()  # (verb, what it does) for the overview


class VersionSettings(Record):
    """`vx version`: the version string to print."""

    version: str


class ShowSettings(Record):
    """`vx show [TARGET]`: what to show, in which format, from which directory.

    `filters` narrow the list, or a task's projects, to what `vx run --filter` would select;
    `env` is what git runs with when a filter names a ref. `affected` is `--affected`'s base
    (`""`: the default), None without it; `ci_bases` as `RunOptions.ci_bases`.
    """

    target: str | None
    format: OutputFormat
    cwd: Path
    filters: tuple[str, ...] = ()
    env: Mapping[str, str] = MappingProxyType({})
    affected: str | None = None
    ci_bases: tuple[str, ...] = ()


class CachePruneSettings(Record):
    """`vx cache prune`: the policy's bounds (already checked), whether to delete, where."""

    older_than_ms: int | None
    max_bytes: int | None
    dry_run: bool
    format: OutputFormat
    cache_dir: str | None
    cwd: Path
    env: Mapping[str, str]


class InfoSettings(Record):
    """`vx info`: the format, where to look from, and the environment a run would see."""

    format: OutputFormat
    cache_dir: str | None
    cwd: Path
    env: Mapping[str, str]


class LastSettings(Record):
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


class WhySettings(Record):
    """`vx why TASK`: the task asked about, the run to explain (an id prefix, else the latest
    that ran it), where the history lives, and the format."""

    target: str
    run_id: str | None
    format: OutputFormat
    cache_dir: str | None
    env: Mapping[str, str]
    cwd: Path


class AuditSettings(Record):
    """`vx audit`: list the latest findings, print them as a config patch (`suggest`), or
    write it (`apply`); where the history lives; where to find the workspace."""

    mode: str
    cache_dir: str | None
    env: Mapping[str, str]
    cwd: Path


class InitSettings(Record):
    """`vx init`: where to start, the config spelling (json, toml, py), whether to print the
    plan only (`dry`), overwrite existing configs (`force`), and how to print."""

    cwd: Path
    config_format: str
    dry: bool
    force: bool
    format: OutputFormat
    env: Mapping[str, str]
    runner: str | None = None  # "keep" or "native": what to do with turbo.json / nx.json
    observe: bool = False  # run each new task under the tracer and write its cache block


class LockSettings(Record):
    """`vx lock`: write the lock, or (`check`) audit it; where to start; how to print."""

    check: bool
    format: OutputFormat
    cwd: Path
    env: Mapping[str, str]
