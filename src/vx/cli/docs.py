"""`vx docs <query>`: search the manual shipped with this vx, offline."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Number, Section, Takes
from vx.cli.settings import FORMAT_FLAG, OutputFormat, output_format
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.manual.search import Hit

DEFAULT_LIMIT = 3

COMMAND = Command(
    "docs",
    flags=(
        Flag(
            "--limit",
            f"print at most n sections (default {DEFAULT_LIMIT})",
            Takes.VALUE,
            "<n>",
            number=Number.INT,
            minimum=1,
        ),
        FORMAT_FLAG,
    ),
    words="word",
    most_words=None,
    sections=(
        Section(
            "How it ranks",
            (
                ("", "each page of the manual is cut at its headings; a section matches when"),
                ("", "it holds every word of the query, and a word in its heading ranks it"),
                ("", "above any count in its text. JSON: schemas/docs.json."),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx docs output-logs", ""),
                ("vx docs cache key --limit 1", ""),
                ("vx docs upgrade --format json", ""),
            ),
        ),
    ),
)


class DocsSettings(Record):
    """The query's words, how many sections to print, and how."""

    query: tuple[str, ...]
    limit: int
    format: OutputFormat


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> DocsSettings:  # noqa: ARG001
    """A query of at least one word."""
    from vx.manual.search import words

    if not words(" ".join(args.words)):
        raise UserError(ErrorCode.USAGE, "vx docs: name what to look for, e.g. vx docs cache key")
    limit = args.integer("limit")
    return DocsSettings(args.words, DEFAULT_LIMIT if limit is None else limit, output_format(args))


def execute(settings: DocsSettings, streams: Streams) -> int:
    """Search and print the best sections whole."""
    from vx.manual.search import load, search
    from vx.util.shipped import shipped_dir

    directory = shipped_dir("docs")
    if directory is None:
        raise UserError(ErrorCode.REFUSED, "vx docs: this vx was built without its manual")
    all_sections = load(directory)
    hits = search(all_sections, settings.query, settings.limit)
    query = " ".join(settings.query)
    if settings.format is OutputFormat.JSON:
        doc = {"query": query, "hits": [_entry(h) for h in hits]}
        streams.out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not hits:
        pages = ", ".join(sorted({s.page for s in all_sections}))
        streams.out.write(f'no section of the manual ({pages}) holds every word of "{query}"\n')
        return 0
    streams.out.write("\n".join(_text(h) for h in hits))
    return 0


def _entry(hit: Hit) -> dict[str, str]:
    s = hit.section
    return {"page": s.page, "heading": s.heading, "url": hit.url, "text": s.text}


def _text(hit: Hit) -> str:
    s = hit.section
    rule = f"── {s.page} > {s.heading}  ({hit.url})"
    return f"{rule}\n\n{s.text}\n"
