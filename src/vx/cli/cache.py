"""`vx cache prune`: evict old or oversized cache entries and sweep what no row names."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section, Takes
from vx.cli.settings import (
    CACHE_DIR_FLAG,
    FORMAT_FLAG,
    CachePruneSettings,
    OutputFormat,
    output_format,
)
from vx.errors import ErrorCode, UserError
from vx.util.fuzzy import did_you_mean
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.evict import PruneResult
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

SUBCOMMANDS = ("prune",)
_ELSEWHERE = {
    "stats": "vx info shows the cache's directory, entries and size",
    "status": "vx info shows the cache's directory, entries and size",
    "info": "vx info shows the cache's directory, entries and size",
    "size": "vx info shows the cache's directory, entries and size",
    "dir": "vx info shows the cache's directory, entries and size",
    "path": "vx info shows the cache's directory, entries and size",
    "list": "vx info counts the entries; vx last --list lists recent runs",
    "ls": "vx info counts the entries; vx last --list lists recent runs",
    "clean": "vx cache prune --older-than <age> or --max-size <size> evicts entries",
    "clear": "vx cache prune --older-than <age> or --max-size <size> evicts entries",
    "gc": "vx cache prune --older-than <age> or --max-size <size> evicts entries",
    "purge": "vx cache prune --older-than <age> or --max-size <size> evicts entries",
}

COMMAND = Command(
    "cache",
    flags=(
        Flag(
            "--older-than",
            "evict entries last used longer ago than this (30d, 24h, 90m, 45s)",
            Takes.VALUE,
            metavar="<duration>",
        ),
        Flag(
            "--max-size",
            "then evict the least recently used until the cache fits (500M, 10G, 4096B)",
            Takes.VALUE,
            metavar="<size>",
        ),
        Flag("--dry-run", "say what would be evicted and reaped; delete nothing"),
        FORMAT_FLAG,
        CACHE_DIR_FLAG,
    ),
    words="subcommand",
    most_words=1,
    sections=(
        Section(
            "Subcommands",
            (("prune", "evict entries by age and size, and reap files no entry names"),),
        ),
        Section(
            "Notes",
            (
                ("", "at least one of --older-than and --max-size; a zero bound is refused"),
                ("", "age goes first, then least recently used until under --max-size"),
                ("", "every prune also reaps artifacts with no index row and save temps"),
                ("", "left by a crash, once they are an hour old; nothing else is touched"),
                ("", "waits for a vx run on this workspace to finish before deleting"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx cache prune --older-than 30d", ""),
                ("vx cache prune --older-than 7d --max-size 500M", ""),
                ("vx cache prune --max-size 10G --dry-run", ""),
            ),
        ),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> CachePruneSettings:
    """`prune` and at least one positive bound, spelled with its unit."""
    from vx.util.units import duration_ms, is_zero, size_bytes

    if not args.words:
        raise UserError(
            ErrorCode.USAGE,
            "vx cache needs a subcommand: vx cache prune --older-than <age> | --max-size <size>",
        )
    word = args.words[0]
    if word not in SUBCOMMANDS:
        raise UserError(ErrorCode.USAGE, _not_a_subcommand(word))
    older = args.text("older-than")
    size = args.text("max-size")
    if older is None and size is None:
        raise UserError(
            ErrorCode.USAGE,
            "vx cache prune needs --older-than <duration> or --max-size <size> (or both); "
            "delete the store vx info names to empty the cache",
        )
    age_ms = bytes_cap = None
    if older is not None:
        if is_zero(older):
            raise UserError(ErrorCode.USAGE, _zero("--older-than", older))
        age_ms = duration_ms(older)
        if age_ms is None:
            raise UserError(
                ErrorCode.USAGE,
                f'--older-than takes a duration like 30d, 24h, 90m or 45s, not "{clip(older)}"',
            )
    if size is not None:
        if is_zero(size):
            raise UserError(ErrorCode.USAGE, _zero("--max-size", size))
        bytes_cap = size_bytes(size)
        if bytes_cap is None:
            bare = size.strip().isdigit()
            tail = (
                f" — a bare number has no unit: write {size.strip()}G, or {size.strip()}B for bytes"
                if bare
                else ""
            )
            raise UserError(
                ErrorCode.USAGE,
                f'--max-size takes a size like 500M, 10G or 4096B, not "{clip(size)}"{tail}',
            )
    return CachePruneSettings(
        age_ms,
        bytes_cap,
        args.switch("dry-run"),
        output_format(args),
        args.text("cache-dir"),
        cwd,
        env,
    )


def _zero(flag: str, value: str) -> str:
    return (
        f"{flag} {clip(value)} would evict every entry, so a zero bound is refused; "
        "delete the cache store vx info names if that is what you want"
    )


def _not_a_subcommand(word: str) -> str:
    if word in _ELSEWHERE:
        return f"vx cache {clip(word)} is not a subcommand: {_ELSEWHERE[word]}"
    near = did_you_mean(word, SUBCOMMANDS)
    hint = f" (did you mean {near}?)" if near else "; vx cache prune is the one subcommand"
    return f'unknown vx cache subcommand: "{clip(word)}"{hint}'


def execute(settings: CachePruneSettings, streams: Streams) -> int:
    """Find the cache a run would use, prune it (or say what a prune would take), report."""
    from vx.cache.evict import Policy
    from vx.history.store import prune_workspace_cache

    def waiting(pid: int) -> None:
        streams.err.write(
            f"[vx] waiting for another vx run (pid {pid}) on this workspace to finish…\n"
        )
        streams.err.flush()

    result = prune_workspace_cache(
        Policy(settings.older_than_ms, settings.max_bytes),
        dry_run=settings.dry_run,
        cwd=settings.cwd,
        env=settings.env,
        flag=settings.cache_dir,
        on_wait=waiting,
    )
    if settings.format is OutputFormat.JSON:
        doc = {
            "dryRun": result.dry_run,
            "evicted": result.evicted,
            "bytesFreed": result.bytes_freed,
            "orphans": result.orphans,
            "orphanBytes": result.orphan_bytes,
        }
        streams.out.write(json.dumps(doc, indent=2) + "\n")
    else:
        streams.out.write(render(result) + "\n")
    return 0


def render(result: PruneResult) -> str:
    """`Pruned 3 entries (1.2 MB freed)`, with the sweep after a comma when it reaped any."""
    from vx.util.units import format_bytes

    noun = "entry" if result.evicted == 1 else "entries"
    orphan_noun = "artifact" if result.orphans == 1 else "artifacts"
    if result.dry_run:
        text = f"Would prune {result.evicted} {noun} ({format_bytes(result.bytes_freed)})"
        if result.orphans:
            text += (
                f", would reap {result.orphans} orphaned {orphan_noun}"
                f" ({format_bytes(result.orphan_bytes)})"
            )
        return text
    text = f"Pruned {result.evicted} {noun} ({format_bytes(result.bytes_freed)} freed)"
    if result.orphans:
        text += (
            f", reaped {result.orphans} orphaned {orphan_noun}"
            f" ({format_bytes(result.orphan_bytes)})"
        )
    return text
