"""The `--filter` DSL: text → Selector → the set of projects a list of them selects.

Grammar of one filter: `[!] [...[^]] CORE [[^]...] [[<ref>]]`, where CORE is a name
pattern, `tag:<pattern>`, `./<dir-or-glob>`, `{<dir-or-glob>}`, `.`, `//`, or nothing when a
`[<ref>]` follows. Evaluation takes every include first and every `!` exclude after them all.
The package edges come from the caller, so dependsOn edges the task graph knows count too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.graph.algo import invert, reach
from vx.ids import ROOT
from vx.selection.changes import check_ref
from vx.util.fuzzy import did_you_mean, listing
from vx.util.globs import glob_to_regex, has_magic
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from vx.workspace.model import Workspace

LISTED = 8


class Kind(StrEnum):
    """What a filter's core names projects by."""

    NAME = "name"  # a package-name pattern
    TAG = "tag"  # tag:<pattern>
    DIR = "dir"  # ./<dir>, {<dir>}, a glob over dirs, `.`
    ROOT = "root"  # `//`
    CHANGED = "changed"  # no core: `[<ref>]` alone


@dataclass(frozen=True, slots=True)
class Selector:
    """One parsed `--filter` value; `text` is what the user typed, kept for refusals.

    `dependents`/`dependencies` are the leading and trailing `...`; `only_dependents` and
    `only_dependencies` are their `^` forms, which leave the matched projects out.
    """

    kind: Kind
    pattern: str = ""
    exclude: bool = False
    dependents: bool = False
    dependencies: bool = False
    only_dependents: bool = False
    only_dependencies: bool = False
    ref: str | None = None
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        core = {
            Kind.NAME: self.pattern,
            Kind.TAG: f"tag:{self.pattern}",
            Kind.DIR: "." if self.pattern == "." else f"{{{self.pattern}}}",
            Kind.ROOT: ROOT,
            Kind.CHANGED: "",
        }[self.kind]
        head = ("..." + "^" * self.only_dependents) if self.dependents else ""
        tail = ("^" * self.only_dependencies + "...") if self.dependencies else ""
        ref = f"[{self.ref}]" if self.ref is not None else ""
        return "!" * self.exclude + head + core + tail + ref


FilterExpr = tuple[Selector, ...]


class FilterResult(Record):
    """The projects a filter list selects, and what to tell the user about an empty answer."""

    projects: frozenset[str]
    notes: tuple[str, ...] = ()


def parse_filters(texts: Iterable[str]) -> FilterExpr:
    """Parse every `--filter` value; the first bad one is refused in one line."""
    return tuple(parse_filter(t) for t in texts)


def parse_filter(text: str) -> Selector:
    """One `--filter` value as a Selector, its ref checked before git could see it."""
    shown = f'--filter "{text}"'
    rest = text
    exclude = rest.startswith("!")
    rest = rest.removeprefix("!")
    ref = None
    opening = _ref_start(rest)
    if opening is not None:
        ref = rest[opening + 1 : -1].strip()
        check_ref(ref, what=shown)
        rest = rest[:opening]
    dependents = only_dependents = dependencies = only_dependencies = False
    if rest.startswith("..."):
        dependents, rest = True, rest[3:]
        if rest.startswith("^"):
            only_dependents, rest = True, rest[1:]
    if rest.endswith("...") and rest != ".":
        dependencies, rest = True, rest[:-3]
        if rest.endswith("^"):
            only_dependencies, rest = True, rest[:-1]
    if only_dependents and only_dependencies:
        raise _usage(f"{shown}: ^ on both sides leaves nothing to walk from — keep one")
    kind, pattern = _core(rest, shown, has_ref=ref is not None)
    return Selector(
        kind,
        pattern,
        exclude=exclude,
        dependents=dependents,
        dependencies=dependencies,
        only_dependents=only_dependents,
        only_dependencies=only_dependencies,
        ref=ref,
        text=text,
    )


def _ref_start(rest: str) -> int | None:
    """Where a trailing `[<ref>]` opens, or None: in a `./` path a class like `[abc]` is a glob,
    unless `...` precedes it."""
    if not rest.endswith("]"):
        return None
    at = rest.rfind("[")
    if at < 0:
        return None
    if rest.startswith("./") and not rest[:at].endswith("..."):
        return None
    return at


def _core(core: str, shown: str, *, has_ref: bool) -> tuple[Kind, str]:
    if not core:
        if has_ref:
            return Kind.CHANGED, ""
        raise _usage(
            f"{shown} names no project: write a name, tag:<tag>, ./<dir> or [<ref>]"
            " beside the operators"
        )
    if core == ROOT:
        return Kind.ROOT, ""
    if core.startswith("tag:"):
        if not core[4:]:
            raise _usage(f"{shown}: tag: names no tag — write tag:<pattern>, e.g. tag:scope:web")
        return Kind.TAG, core[4:]
    if core.startswith("{") and core.endswith("}"):
        return Kind.DIR, _directory(core[1:-1], shown)
    if core in {".", "./"} or core.startswith("./"):
        return Kind.DIR, _directory(core, shown)
    if any(ch.isspace() for ch in core):
        raise _usage(f"{shown}: a package name holds no whitespace")
    return Kind.NAME, core


def _directory(text: str, shown: str) -> str:
    """A root-relative directory or glob without `./` or trailing `/`; `.` for the root."""
    parts = [p for p in text.strip().split("/") if p not in {"", "."}]
    if ".." in parts or text.startswith("/"):
        raise _usage(f"{shown}: a directory filter stays inside the workspace root")
    return "/".join(parts) or "."


def _usage(message: str) -> UserError:
    return UserError(ErrorCode.USAGE, message)


def evaluate(
    ws: Workspace,
    expr: Sequence[Selector],
    *,
    edges: Mapping[str, Iterable[str]],
    changed: Callable[[str], frozenset[str]],
) -> FilterResult:
    """The projects `expr` selects: the union of its includes, less every exclude.

    With no include the excludes take from every project, as pnpm reads `--filter '!docs'`.
    `edges` maps a project to those it depends on; `changed(ref)` names the projects whose
    files changed since `ref`. A filter that matches nothing, a walk that selects nothing and
    an exclusion that takes everything are refused; refs that changed nothing are a note.
    """
    graph = _Graph(ws, edges)
    includes = [s for s in expr if not s.exclude]
    excludes = [s for s in expr if s.exclude]
    unmatched: list[Selector] = []
    empty_walks: list[tuple[Selector, frozenset[str]]] = []
    chosen: set[str] = set() if includes else set(ws.names())
    for sel in includes:
        matched, picked = _select(ws, graph, sel, changed)
        if not matched:
            unmatched.append(sel)
        elif not picked and sel.ref is None:
            empty_walks.append((sel, matched))
        chosen |= picked
    removed: dict[str, set[str]] = {}
    for sel in excludes:
        matched, picked = _select(ws, graph, sel, changed)
        if not matched:
            unmatched.append(sel)
        removed[sel.text or str(sel)] = set(picked) & chosen
    if unmatched:
        raise UserError(ErrorCode.USAGE, _unmatched_message(ws, unmatched))
    if empty_walks:
        sel, matched = empty_walks[0]
        raise UserError(ErrorCode.USAGE, _empty_walk_message(sel, matched))
    taken = set().union(*removed.values()) if removed else set()
    final = frozenset(chosen - taken)
    if chosen and not final:
        names = ", ".join(name for name, gone in removed.items() if gone)
        raise UserError(
            ErrorCode.USAGE,
            f"no projects selected: {names} excluded every project the other filters matched",
        )
    notes: tuple[str, ...] = ()
    if not final:
        refs = list(dict.fromkeys(s.ref for s in includes if s.ref is not None))
        notes = (
            f"no project selected: nothing the filters name changed since {' or '.join(refs)}",
        )
    return FilterResult(final, notes)


class _Graph:
    """The package graph both ways, for walks."""

    def __init__(self, ws: Workspace, edges: Mapping[str, Iterable[str]]) -> None:
        names = set(ws.names())
        self.deps: dict[str, tuple[str, ...]] = {
            n: tuple(d for d in edges.get(n, ()) if d in names) for n in names
        }
        self.dependents = invert(self.deps)

    def reach(self, starts: Iterable[str], *, down: bool) -> frozenset[str]:
        """Every project an edge path from `starts` reaches; a start only if a path returns."""
        return reach(self.deps if down else self.dependents, starts)


def _select(
    ws: Workspace, graph: _Graph, sel: Selector, changed: Callable[[str], frozenset[str]]
) -> tuple[frozenset[str], set[str]]:
    """What the selector's core matched, and what it picks after its ref and walks."""
    matched = _match(ws, sel)
    base: set[str] = set(matched)
    walk_down = sel.dependencies
    if sel.ref is not None:
        moved = changed(sel.ref)
        if sel.dependencies:
            # `<sel>...[ref]`: kept when it or something it builds on changed; nothing added.
            base = {
                name
                for name in matched
                if (name in moved and not sel.only_dependencies)
                or graph.reach((name,), down=True) & moved
            }
            walk_down = False
        else:
            base &= moved
    only_self_left_out = sel.only_dependents or (sel.only_dependencies and walk_down)
    picked: set[str] = set() if only_self_left_out else set(base)
    if sel.dependents:
        picked |= graph.reach(base, down=False)
    if walk_down:
        picked |= graph.reach(picked | base if sel.dependents else base, down=True)
    return matched, picked


def _match(ws: Workspace, sel: Selector) -> frozenset[str]:
    if sel.kind is Kind.CHANGED:
        return frozenset(ws.names())
    if sel.kind is Kind.ROOT:
        root = ws.root_project
        return frozenset({root.name}) if root is not None else frozenset()
    if sel.kind is Kind.TAG:
        regex = _name_regex(sel.pattern)
        return frozenset(p.name for p in ws.projects if any(regex.fullmatch(t) for t in p.tags))
    if sel.kind is Kind.DIR:
        return _match_dir(ws, sel.pattern)
    return _match_name(ws, sel.pattern)


def _name_regex(pattern: str) -> re.Pattern[str]:
    """`*` matches any characters, `/` included; everything else is literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def _match_name(ws: Workspace, pattern: str) -> frozenset[str]:
    """By name; else the one scoped package a scope-less pattern names; else, when the pattern
    holds a `/` outside a scope, the directory it spells (Nx reads `apps/*` so)."""
    regex = _name_regex(pattern)
    found = frozenset(p.name for p in ws.projects if regex.fullmatch(p.name))
    if found:
        return found
    if not pattern.startswith("@"):
        scoped = [n for n in _scoped(ws) if regex.fullmatch(n.split("/", 1)[1])]
        if len(scoped) == 1:
            return frozenset(scoped)
    if "/" in _unscoped(pattern):
        return _match_dir(ws, _directory(pattern, f'--filter "{pattern}"'))
    return frozenset()


def _unscoped(pattern: str) -> str:
    return pattern.split("/", 1)[1] if pattern.startswith("@") and "/" in pattern else pattern


def _scoped(ws: Workspace) -> list[str]:
    return [p.name for p in ws.projects if p.name.startswith("@") and "/" in p.name]


def _dirs(ws: Workspace) -> dict[str, str]:
    """Root-relative project dirs → names: as listed, then where a member's link points."""
    out = {p.rel_dir: p.name for p in ws.projects}
    root = os.path.realpath(ws.root)
    for p in ws.projects:
        real = os.path.realpath(p.dir)
        if real.startswith(root + os.sep):
            out.setdefault(os.path.relpath(real, root).replace(os.sep, "/"), p.name)
    return out


def _match_dir(ws: Workspace, directory: str) -> frozenset[str]:
    """`.`: the root project, else every project. A project's dir: that project. A glob:
    the dirs it matches. Any other dir: the projects under it."""
    dirs = _dirs(ws)
    if directory == ".":
        root = ws.root_project
        return frozenset({root.name}) if root is not None else frozenset(ws.names())
    if directory in dirs:
        return frozenset({dirs[directory]})
    if has_magic(directory):
        regex = re.compile(glob_to_regex(directory))
        return frozenset(name for rel, name in dirs.items() if rel != "." and regex.match(rel))
    prefix = directory + "/"
    return frozenset(name for rel, name in dirs.items() if rel.startswith(prefix))


def _unmatched_message(ws: Workspace, unmatched: Sequence[Selector]) -> str:
    shown = ", ".join(s.text or str(s) for s in unmatched)
    hints: list[str] = []
    for sel in unmatched:
        hint = _hint(ws, sel)
        if len(unmatched) > 1 and hint.startswith("Did you mean"):
            hint = hint[:-1] + f" (for {sel.text or sel})?"
        if hint not in hints:
            hints.append(hint)
    return " ".join([f"no projects matched filter(s): {shown}.", *hints])


def _hint(ws: Workspace, sel: Selector) -> str:
    names = list(ws.names())
    if sel.kind is Kind.TAG:
        tags = sorted({t for p in ws.projects for t in p.tags})
        near = did_you_mean(sel.pattern, tags)
        if near is not None:
            return f"Did you mean tag:{near}?"
        return f"Tags: {listing(tags, LISTED)}." if tags else "No project has tags."
    if sel.kind is Kind.ROOT:
        return f"The workspace root is not a project; projects: {listing(names, LISTED)}."
    if sel.kind is Kind.DIR:
        dirs = sorted(rel for rel in _dirs(ws) if rel != ".")
        near = did_you_mean(sel.pattern, dirs)
        if near is not None:
            return f"Did you mean ./{near}?"
        return f"Project dirs: {listing(dirs, LISTED)}."
    near = did_you_mean(sel.pattern, names)
    if near is None:
        tails = [n for n in _scoped(ws) if did_you_mean(sel.pattern, [n.split("/", 1)[1]])]
        tails += [n for n in _scoped(ws) if n.split("/", 1)[1] == sel.pattern]
        if len(set(tails)) == 1:
            near = tails[0]
        elif len(set(tails)) > 1:
            return f"Did you mean one of {listing(sorted(set(tails)), LISTED)}?"
    if near is not None:
        return f"Did you mean {near}?"
    return f"Projects: {listing(names, LISTED)}."


def _empty_walk_message(sel: Selector, matched: frozenset[str]) -> str:
    names = ", ".join(sorted(matched))
    one = len(matched) == 1
    if sel.only_dependents or (sel.dependents and not sel.dependencies):
        why = "no project depends on it" if one else "no project depends on any of them"
    else:
        why = "it depends on no project" if one else "none of them depends on a project"
    return f'no projects selected: filter "{sel.text or sel}" matched {names}, and {why}'
