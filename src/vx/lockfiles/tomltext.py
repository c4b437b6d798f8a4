"""Narrow edits of TOML text: its tables' line spans, one array rewritten, a key or table cut.

vx has no TOML writer, and a rewritten pyproject.toml or uv.lock should keep every line it
does not mean to change, comments included. Tables are found by their header lines (indented
or not), skipping the lines of a value written over many; a caller reads the result back with
tomllib to check an edit did what it meant.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_HEADER = re.compile(rf"[ \t]*\[\[?[ \t]*({_DOTTED})[ \t]*\]\]?[ \t]*(?:#.*)?$")
_KEY_VALUE = re.compile(rf"[ \t]*{_DOTTED}[ \t]*=[ \t]*")
_SIGNIFICANT = re.compile(r"[\"'#\[\]{}\n]")
# From just past a string's opening quote to just past its closing one (escapes in basic
# strings skipped; a string left open runs to the end of the text).
_STRING_END = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*(?:"|$)', re.MULTILINE),
    "'": re.compile(r"[^'\n]*(?:'|$)", re.MULTILINE),
    '"""': re.compile(r'(?:[^\\]|\\.)*?(?:"""|\Z)', re.DOTALL),
    "'''": re.compile(r"(?:.)*?(?:'''|\Z)", re.DOTALL),
}


class Span(Record):
    """One table: its dotted name (None before the first header), and its lines [start, end)."""

    name: str | None
    start: int
    end: int


def table_name(line: str) -> str | None:
    """The dotted name of the table header `line` opens (`tool.uv.workspace`), else None.
    Leading whitespace is allowed, as TOML allows it; `spans` tells a header from a line
    inside a value of many lines."""
    found = _HEADER.match(line.rstrip("\r\n"))
    if found is None:
        return None
    parts = re.findall(_KEY, found.group(1))
    return ".".join(part.strip("\"'") for part in parts)


def spans(lines: list[str]) -> list[Span]:
    """The tables of `lines` (as `splitlines(keepends=True)` gives them), in order. The lines
    of a value written over many (an array, a multi-line string) are skipped whole, so an
    indented `["a"]` inside an array is not taken for a header."""
    out: list[Span] = []
    name: str | None = None
    start = 0
    text = "".join(lines)
    offset = skip_to = 0
    for at, line in enumerate(lines):
        here, offset = offset, offset + len(line)
        if here < skip_to:
            continue
        found = table_name(line)
        if found is not None:
            if at > start or name is not None:
                out.append(Span(name, start, at))
            name, start = found, at
            continue
        value = _KEY_VALUE.match(line)
        if value is not None and any(c in line[value.end() :] for c in "[{\"'"):
            skip_to = _value_end(text, here + value.end())
    out.append(Span(name, start, len(lines)))
    return out


def _value_end(text: str, pos: int) -> int:
    """Where the value starting at `pos` ends: past its closing bracket for an array or inline
    table (strings and comments skipped), else at the end of its line. Jumps from one
    character that matters to the next, since a long uv.lock has many lines of arrays."""
    depth = 0
    at = pos
    while True:
        found = _SIGNIFICANT.search(text, at)
        if found is None:
            return len(text)
        at = found.start()
        char = text[at]
        if char in "\"'":
            quote = text[at : at + 3] if text[at : at + 3] in ('"""', "'''") else char
            closing = _STRING_END[quote].match(text, at + len(quote))
            at = closing.end() if closing is not None else len(text)
            continue
        if char == "#":
            newline = text.find("\n", at)
            at = newline if newline != -1 else len(text)
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        elif depth == 0:  # a newline outside any bracket
            return at
        at += 1


def _find_key(lines: list[str], table: str | None, key: str) -> tuple[int, int] | None:
    """(text offset of the key's line, of its value's end) for `key` within `table`."""
    pattern = re.compile(rf"[ \t]*(?:{re.escape(key)}|\"{re.escape(key)}\")[ \t]*=[ \t]*")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for span in spans(lines):
        if span.name != table:
            continue
        for at in range(span.start, span.end):
            found = pattern.match(lines[at])
            if found is not None:
                return starts[at], _value_end("".join(lines), starts[at] + found.end())
    return None


def replace_array(text: str, table: str | None, key: str, values: Iterable[str]) -> str | None:
    """`text` with `key = [...]` in `table` rewritten to `values`, one string a line as uv
    writes them; None when the table holds no such key."""
    lines = text.splitlines(keepends=True)
    found = _find_key(lines, table, key)
    if found is None:
        return None
    line, end = found
    indent = re.match(r"[ \t]*", text[line:])
    pad = indent.group(0) if indent else ""
    # The file's own line ending (CRLF stays CRLF), as the key's line shows it.
    newline = text.find("\n", line)
    eol = "\r\n" if newline > 0 and text[newline - 1] == "\r" else "\n"
    items = "".join(f"{pad}    {json.dumps(v, ensure_ascii=False)},{eol}" for v in values)
    return f"{text[:line]}{pad}{key} = [{eol}{items}{pad}]{text[end:]}"


def drop_key(text: str, table: str | None, key: str) -> str:
    """`text` without `key` (its whole value, however many lines) in `table`."""
    lines = text.splitlines(keepends=True)
    found = _find_key(lines, table, key)
    if found is None:
        return text
    line, end = found
    newline = text.find("\n", end)
    return text[:line] + (text[newline + 1 :] if newline != -1 else "")


def drop_tables(text: str, doomed: Callable[[str], bool]) -> str:
    """`text` without the tables (header to the next header) whose dotted names `doomed` picks.
    Comment lines just above the next header stay: they speak of that table."""
    lines = text.splitlines(keepends=True)
    found = spans(lines)
    kept: list[str] = []
    for at, span in enumerate(found):
        if span.name is None or not doomed(span.name):
            kept.extend(lines[span.start : span.end])
            continue
        if at + 1 == len(found):
            continue
        above = span.end
        while above > span.start + 1 and lines[above - 1].lstrip().startswith("#"):
            above -= 1
        kept.extend(lines[above : span.end])
    return "".join(kept)
