"""Where the workspace's member globs can grow a package, and the directories to watch for one.

A package can be added under any member glob, not only `<dir>/*`. A glob is walked from its
literal prefix one segment at a time, as discovery walks it: each directory a leading part of
the glob matches is watched alone (a child made there may be the next step), and a full match
with no manifest yet is watched for its manifest. A glob holding `**` can match at any depth,
so its literal prefix is watched with its whole tree instead, and only a manifest under a
matching directory is kept from it. Nothing here reads the plan: what is watched follows the
disk, so it holds even while a cycle cannot be planned.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.util.globs import compile_globs, expand_braces, has_magic, normalize, segment_regex
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from vx.util.globs import Matcher

_SKIPPED = "node_modules"


class MemberWatch(Record):
    """The directories to watch for members: `steps` alone (a partial match, where the next
    segment may appear), `waiting` alone (a full match with no manifest yet, heard whole) and
    `deep` with their trees (a `**` glob's literal prefix)."""

    steps: tuple[str, ...]
    waiting: tuple[str, ...]
    deep: tuple[str, ...]


class MemberGlobs(Record):
    """The root's member globs (negations kept), and the manifest a member must hold."""

    root: str
    patterns: tuple[str, ...]
    matcher: Matcher
    manifest: str

    def is_member_manifest(self, path: str) -> bool:
        """`path` is a manifest in a directory the globs select: a package come or gone."""
        name = os.path.basename(path)
        if name != self.manifest:
            return False
        rel = os.path.relpath(os.path.dirname(path), self.root)
        if rel.startswith("..") or rel == ".":
            return False
        rel = rel.replace(os.sep, "/")
        return _SKIPPED not in rel.split("/") and self.matcher.match(rel)

    def watch(self, projects: Iterable[str]) -> MemberWatch:
        """What to watch now, read off the disk; `projects` are the known project dirs."""
        known = set(projects)
        steps: set[str] = set()
        waiting: set[str] = set()
        deep: set[str] = set()
        for include in self.matcher.includes:
            for alternative in expand_braces(include):
                segments = [s for s in normalize(alternative).split("/") if s not in ("", ".")]
                if not segments:
                    continue
                if "**" in segments:
                    literal = segments[: _first_magic(segments)]
                    base = os.path.join(self.root, *literal)
                    if os.path.isdir(base):
                        deep.add(base)
                    else:
                        steps.update(_nearest(base, self.root))
                    continue
                partial, full = _walk(self.root, segments)
                steps.update(partial)
                waiting.update(d for d in full if d not in known and self._selects(d))
        steps -= waiting  # its watcher hears both: the manifest, and a child made there
        return MemberWatch(tuple(sorted(steps)), tuple(sorted(waiting)), tuple(sorted(deep)))

    def leads(self, rel: str) -> bool:
        """Whether `rel` (root-relative, POSIX) is matched by a leading part of some glob: a
        directory there may become, or hold, a member."""
        parts = rel.split("/")
        for include in self.matcher.includes:
            for alternative in expand_braces(include):
                segments = [s for s in normalize(alternative).split("/") if s not in ("", ".")]
                if _leads(segments, parts):
                    return True
        return False

    def unknown(self, projects: Iterable[str]) -> list[str]:
        """The manifest of each member on disk that is not among `projects` (absolute dirs):
        one that landed between the plan's discovery and its watcher going up."""
        from pathlib import Path

        from vx.errors import UserError
        from vx.workspace.discover import list_members

        known = set(projects)
        try:
            members = list_members(Path(self.root), self.patterns, self.manifest)
        except (UserError, OSError):
            return []
        found = (os.path.join(self.root, *m.split("/")) for m in members)
        return [os.path.join(d, self.manifest) for d in found if d not in known]

    def _selects(self, directory: str) -> bool:
        rel = os.path.relpath(directory, self.root).replace(os.sep, "/")
        return self.matcher.match(rel)


def _leads(segments: list[str], parts: list[str]) -> bool:
    for i, part in enumerate(parts):
        if i >= len(segments):
            return False
        segment = segments[i]
        if segment == "**":
            return True
        if has_magic(segment):
            if not segment_regex(segment).match(part):
                return False
        elif segment != part:
            return False
    return True


def _first_magic(segments: list[str]) -> int:
    return next((i for i, s in enumerate(segments) if has_magic(s)), len(segments))


def _nearest(path: str, root: str) -> list[str]:
    """The nearest existing ancestor of a missing `path`, short of the root (which the root
    watcher covers): where its first missing part will appear."""
    current = os.path.dirname(path)
    while current != root and len(current) > len(root) and not os.path.isdir(current):
        current = os.path.dirname(current)
    return [] if current == root or len(current) <= len(root) else [current]


def _walk(root: str, segments: list[str]) -> tuple[list[str], list[str]]:
    """The existing directories each leading part of a glob matches (from its literal
    prefix on), and those the whole glob matches."""
    first = _first_magic(segments)
    prefix = os.path.join(root, *segments[:first])
    if not os.path.isdir(prefix):
        return _nearest(prefix, root), []
    current = [prefix]
    partial: list[str] = []
    for segment in segments[first:]:
        partial.extend(current)
        if has_magic(segment):
            regex = segment_regex(segment)
            current = [p for base in current for p, name in _children(base) if regex.match(name)]
        else:
            current = [os.path.join(base, segment) for base in current]
            current = [c for c in current if os.path.isdir(c)]
    return partial, current


def _children(base: str) -> list[tuple[str, str]]:
    """(path, name) of each child directory, skipping dot-dirs and node_modules, as discovery
    does."""
    try:
        with os.scandir(base) as entries:
            return [
                (e.path, e.name)
                for e in entries
                if not e.name.startswith(".") and e.name != _SKIPPED and e.is_dir()
            ]
    except OSError:
        return []


def member_globs(root: Path) -> MemberGlobs | None:
    """The globs the root declares its members with, or None (no declaration, or a bad one)."""
    from vx.errors import UserError
    from vx.workspace.discover import declaration, member_manifest

    try:
        found = declaration(root)
    except UserError:
        return None
    if found is None or not found.patterns:
        return None
    negated = [p for p in found.patterns if p.startswith("!")]
    ordered = [*(p for p in found.patterns if not p.startswith("!")), *negated]
    return MemberGlobs(
        str(root), tuple(ordered), compile_globs(ordered), member_manifest(found.manager)
    )
