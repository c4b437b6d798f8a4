"""Path globs as regular expressions, and ordered lists of them where `!` takes paths back."""

from __future__ import annotations

import functools
import itertools
import re
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

_META = frozenset("*?[{\\")
_CLASS_ESCAPE = frozenset("\\[]^&~|")


def normalize(pattern: str) -> str:
    """The pattern without a leading `./` or `/` and without trailing slashes.

    Workspace lists and cache globs are written relative to a directory, and people write
    `./packages/*` and `dist/` as often as `packages/*` and `dist`.
    """
    if pattern and pattern[0] not in "./" and pattern[-1] != "/":
        return pattern  # already clean: the usual case, asked for every path a match sees
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.lstrip("/")
    pattern = pattern.rstrip("/")
    return pattern or "."


def climbs(pattern: str) -> bool:
    r"""Whether `pattern` (a leading `!` allowed) holds a `..` segment in any `{a,b}` alternative.

    Such a glob names paths above the directory it is relative to, even when it comes back
    down (`a/../../x`); an escaped `\.\.` is the same two dots.
    """
    body = pattern.removeprefix("!")
    if ".." not in body.replace("\\", ""):
        return False
    for alternative in expand_braces(body):
        if any(part.replace("\\", "") == ".." for part in alternative.split("/")):
            return True
    return False


def has_magic(text: str) -> bool:
    """Whether `text` holds a glob metacharacter (and so is no literal path)."""
    return any(ch in _META for ch in text)


def expand_braces(pattern: str) -> tuple[str, ...]:
    """`src/*.{ts,tsx}` → `src/*.ts`, `src/*.tsx`; nested and repeated groups expand fully.

    A `{` with no matching `}` or no `,` inside stays literal, as in shells.
    """
    depth = 0
    start = -1
    commas: list[int] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            if depth == 0:
                start = i
                commas = []
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                if not commas:
                    start = -1
                    i += 1
                    continue
                head, tail = pattern[:start], pattern[i + 1 :]
                bounds = [start, *commas, i]
                out: list[str] = []
                for lo, hi in itertools.pairwise(bounds):
                    out.extend(expand_braces(head + pattern[lo + 1 : hi] + tail))
                return tuple(dict.fromkeys(out))
        elif ch == "," and depth == 1:
            commas.append(i)
        i += 1
    return (pattern,)


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """The regex for the `[...]` starting at `i`, and the index after it; None if unclosed."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    raw = pattern[i + 1 + int(negate) : j].replace("/", "")
    body = "".join("\\" + ch if ch in _CLASS_ESCAPE else ch for ch in raw)
    if negate:
        return f"[^/{body}]", j + 1
    return (f"[{body}]" if body else "(?!)"), j + 1


def _segment(segment: str) -> str:
    """Regex for one path segment (no `/`, not `**`)."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            cls = _class(segment, i)
            if cls is not None:
                out.append(cls[0])
                i = cls[1]
                continue
            out.append(re.escape(ch))
        elif ch == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def segment_regex(segment: str) -> re.Pattern[str]:
    """One path segment's glob compiled on its own, for walking a tree a level at a time."""
    return re.compile("(?s:" + _segment(segment) + r")\Z")


def glob_to_regex(pattern: str) -> str:
    """The regex source matching exactly the relative paths `pattern` (no `!`, no braces) names.

    `**` as a whole segment spans zero or more directories, so `a/**/b` holds `a/b` and `a/**`
    holds `a` itself; `*`, `?` and `[...]` never cross a `/`. Dotfiles match like any other name.
    """
    parts: list[str] = []
    for part in normalize(pattern).split("/"):
        if not (part == "**" and parts and parts[-1] == "**"):
            parts.append(part)
    out = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            if last:
                out = out[:-1] + "(?:/.*)?" if out else ".*"
            else:
                out += "(?:.*/)?"
        else:
            out += _segment(part) + ("" if last else "/")
    return "(?s:" + out + r")\Z"


@functools.lru_cache(maxsize=4096)
def fixed_prefix(pattern: str) -> str:
    """The leading run of whole literal segments: where a walk for `pattern` may start.

    `packages/*` → `packages`, `src/**/*.ts` → `src`, `*.md` → `` and a literal path is itself.
    A leading `!` is ignored, so a caller may pass the entries of a negation list as they are.
    Kept per pattern: every restore and output walk asks again, and tasks share patterns.
    """
    body = normalize(pattern.removeprefix("!"))
    if body == ".":
        return ""
    literal: list[str] = []
    for part in body.split("/"):
        if has_magic(part):
            break
        literal.append(part)
    return "/".join(literal)


class Matcher(Record):
    """An ordered glob list: the last pattern that matches a path decides, and `!` says no.

    So `["dist/**", "!dist/cache/**"]` keeps `dist/a.js` and drops `dist/cache/x`, and a later
    positive pattern can take back what an earlier `!` removed.
    """

    patterns: tuple[str, ...]
    rules: tuple[tuple[bool, re.Pattern[str]], ...]

    def match(self, relpath: str) -> bool:
        """Whether the POSIX path `relpath` (relative to the globs' base) is selected."""
        path = normalize(relpath)
        for include, regex in reversed(self.rules):
            if regex.match(path):
                return include
        return False

    @property
    def includes(self) -> tuple[str, ...]:
        """The positive patterns, in order, without their negations."""
        return tuple(p for p in self.patterns if not p.startswith("!"))


def compile_globs(patterns: Iterable[str]) -> Matcher:
    """Compile `patterns` (`!` for a negation, `{a,b}` alternatives) into one `Matcher`.

    Kept per pattern list: a restore asks for the same task's globs several times, and
    hundreds of tasks share a handful of lists.
    """
    return _compiled(tuple(patterns))


@functools.lru_cache(maxsize=1024)
def _compiled(kept: tuple[str, ...]) -> Matcher:
    rules: list[tuple[bool, re.Pattern[str]]] = []
    for pattern in kept:
        include = not pattern.startswith("!")
        body = pattern if include else pattern[1:]
        rules.extend((include, re.compile(glob_to_regex(alt))) for alt in expand_braces(body))
    return Matcher(kept, tuple(rules))


def covered(patterns: Sequence[str], files: Iterable[str]) -> list[str]:
    """The paths among `files` that the glob list selects, in their order.

    What an output glob would clean among files a caller must keep (committed sources): only
    a path under some positive pattern's literal prefix is matched, so a caller may pass a
    whole project's file list. One owner for the check that turbo.json outputs and native
    `cache.outputs` both go through.
    """
    matcher = compile_globs(patterns)
    prefixes = {fixed_prefix(p) for p in matcher.includes}
    if not prefixes:
        return []
    return [
        f
        for f in files
        if any(not p or f == p or f.startswith(p + "/") for p in prefixes) and matcher.match(f)
    ]
