"""Search the shipped manual: pages cut at their headings, sections ranked by where words hit.

A section matches when it holds every word of the query (in its heading or its text). A word
in the heading outranks any number of hits in the text, since a heading says what the section
is about; among equals, more text hits rank first, then the manual's own order.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from importlib.resources.abc import Traversable

_WORD = re.compile(r"\w+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
HEADING_WEIGHT = 1000


class Section(Record):
    """One heading of one page and the text under it, up to the next heading."""

    page: str
    heading: str
    anchor: str
    text: str


class Hit(Record):
    """A matching section and its rank (higher first)."""

    section: Section
    score: int

    @property
    def url(self) -> str:
        """Where the section is in the repository's docs/."""
        return f"docs/{self.section.page}.md#{self.section.anchor}"


def words(text: str) -> list[str]:
    """The lowercase words of `text`, as the search compares them."""
    return [w.lower() for w in _WORD.findall(text)]


def anchor(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading: lowercase, punctuation out, - for space."""
    kept = re.sub(r"[^\w\- ]", "", heading.lower())
    return kept.replace(" ", "-")


def sections(page: str, markdown: str) -> list[Section]:
    """Cut one page at its headings (a `#` inside a fenced code block is not one)."""
    found: list[Section] = []
    heading, body = page, list[str]()
    fenced = False

    def close() -> None:
        text = "\n".join(body).strip()
        if text or heading != page:
            found.append(Section(page, heading, anchor(heading), text))

    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            close()
            heading, body = match.group(2).replace("`", ""), []
        else:
            body.append(line)
    close()
    return found


def load(directory: Traversable) -> list[Section]:
    """Every section of every `.md` page in the directory, pages in name order."""
    pages = sorted((p for p in directory.iterdir() if p.name.endswith(".md")), key=lambda p: p.name)
    return [s for p in pages for s in sections(p.name[:-3], p.read_text(encoding="utf-8"))]


def search(all_sections: Iterable[Section], query: Sequence[str], limit: int) -> list[Hit]:
    """The best `limit` sections holding every query word, best first."""
    wanted = sorted(set(words(" ".join(query))))
    hits: list[tuple[int, int, Section]] = []
    for order, section in enumerate(all_sections):
        head = words(section.heading)
        text = words(section.text)
        if not all(w in head or w in text for w in wanted):
            continue
        score = sum(HEADING_WEIGHT for w in wanted if w in head) + sum(
            text.count(w) for w in wanted
        )
        hits.append((-score, order, section))
    hits.sort()
    return [Hit(section, -neg) for neg, _, section in hits[:limit]]
