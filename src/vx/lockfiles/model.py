"""What every lockfile reader returns, and the per-project closure walked over it.

A reader turns one lockfile into a `LockGraph`: the importers (workspace members, by their
root-relative directory) with their direct dependencies, the locked packages with theirs, and
the install-wide sections (overrides, patches, settings) as text. A dependency points at a
package id, or at another importer through `link_to`, so a member's closure runs through the
workspace packages it links to, as the install does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

_LINK = "\0link:"
_LOCKED = tuple.__new__  # builds a Locked without NamedTuple's Python-level __new__


class LockfileError(Exception):
    """A lockfile vx cannot read per project: an unknown version, damage, an unknown layout."""


def link_to(rel_dir: str) -> str:
    """The dependency id that stands for the workspace member at `rel_dir`."""
    return _LINK + rel_dir


def linked_dir(dep_id: str) -> str | None:
    """The member directory a dependency id links to, None for a locked package."""
    return dep_id[len(_LINK) :] if dep_id.startswith(_LINK) else None


class Dep(Record):
    """One direct dependency of an importer: the id it resolved to, and whether only dev."""

    target: str
    dev: bool


class Node(Record):
    """One locked package: what identifies what the install puts on disk, and its deps' ids."""

    name: str
    version: str
    integrity: str
    deps: tuple[str, ...]


class LockGraph(Record):
    """A lockfile read: importers by directory, packages by id, install-wide text by name."""

    importers: Mapping[str, Mapping[str, Dep]]
    nodes: Mapping[str, Node]
    install: Mapping[str, str]


class Locked(Record):
    """One external package of a closure; `via` the project's direct dependency that reaches it."""

    name: str
    version: str
    integrity: str
    via: str


def closure(graph: LockGraph, rel_dir: str) -> tuple[Locked, ...] | None:
    """Every package the member at `rel_dir` installs, through the members it links to; None
    when the lockfile has no importer for it (a new member not installed yet).

    Breadth first from the direct dependencies in name order, so a package's `via` is the
    direct dependency nearest to it (the first by name among equals).
    """
    return Walker(graph).closure(rel_dir)


def toolchain_closures(graph: LockGraph) -> dict[str, tuple[Locked, ...]]:
    """The root's toolchain: under "" the closure of the external packages the root directory
    installs for itself (a member it links left out: its packages are its own projects'), and
    under each of those packages' names its closure alone. Empty without a root importer."""
    own = graph.importers.get(".")
    if own is None:
        return {}
    external = {name: dep for name, dep in own.items() if not dep.target.startswith(_LINK)}
    walks = {"\0": external} | {f"\0{name}": {name: dep} for name, dep in external.items()}
    walker = Walker(graph._replace(importers={**graph.importers, **walks}))
    out: dict[str, tuple[Locked, ...]] = {}
    for key in walks:
        found = walker.closure(key)
        if found is not None:
            out[key[1:]] = found
    return out


class Walker:
    """Closures over one graph, sharing what every walk would recompute (a linked member's
    production dependencies in order), for the many members of one workspace."""

    __slots__ = ("_graph", "_linked", "_rank", "_silent")

    def __init__(self, graph: LockGraph) -> None:
        self._graph = graph
        self._linked: dict[str, list[str]] = {}
        self._silent = _silent_members(graph)
        # Each package id's place in (name, version, integrity) order: closures sort by it.
        nodes = graph.nodes
        ids = sorted(nodes, key=lambda i: (nodes[i].name, nodes[i].version, nodes[i].integrity))
        self._rank = {node_id: at for at, node_id in enumerate(ids)}

    def _production(self, member: str) -> list[str]:
        found = self._linked.get(member)
        if found is None:
            deps = self._graph.importers.get(member, {})
            found = self._linked[member] = [deps[n].target for n in sorted(deps) if not deps[n].dev]
        return found

    def closure(self, rel_dir: str) -> tuple[Locked, ...] | None:
        """`closure(graph, rel_dir)`."""
        own = self._graph.importers.get(rel_dir)
        if own is None:
            return None
        nodes = self._graph.nodes
        via_of: dict[str, str] = {}
        members = {rel_dir}
        layer = [(own[name].target, name) for name in sorted(own)]
        while layer:
            following: list[tuple[str, str]] = []
            for dep, via in layer:
                if dep.startswith(_LINK):
                    member = dep[len(_LINK) :]
                    if member not in members:
                        members.add(member)
                        if member in self._silent:
                            continue
                        following.extend([(t, via) for t in self._production(member)])
                    continue
                if dep in via_of:
                    continue
                node = nodes.get(dep)
                if node is None:
                    continue
                via_of[dep] = via
                following.extend([(child, via) for child in node.deps if child not in via_of])
            layer = following
        out: list[Locked] = []
        last: tuple[str, str, str] | None = None
        for dep in sorted(via_of, key=self._rank.__getitem__):
            node = nodes[dep]
            key = (node.name, node.version, node.integrity)
            if key != last:  # one package installed at several places counts once
                last = key
                out.append(_LOCKED(Locked, (*key, via_of[dep])))
        return tuple(out)


def _silent_members(graph: LockGraph) -> frozenset[str]:
    """The members whose production dependencies, through every member they link to, reach
    no locked package: a closure passing one gains nothing by walking it.

    Without this every member's walk re-enters the whole chain of members below it, which
    grows with the square of the workspace when members depend on members (ten thousand
    packages, a second and more).
    """
    nodes = graph.nodes
    linked_from: dict[str, list[str]] = {}
    todo: list[str] = []
    for rel_dir, deps in graph.importers.items():
        for dep in deps.values():
            if dep.dev:
                continue
            if dep.target.startswith(_LINK):
                linked_from.setdefault(dep.target[len(_LINK) :], []).append(rel_dir)
            elif dep.target in nodes:
                todo.append(rel_dir)
    loud = set(todo)
    while todo:
        for user in linked_from.get(todo.pop(), ()):
            if user not in loud:
                loud.add(user)
                todo.append(user)
    return frozenset(graph.importers.keys() - loud)


def reachable(graph: LockGraph, rel_dirs: set[str], *, production: bool) -> set[str]:
    """The package ids the members `rel_dirs` install (dev dependencies unless `production`)."""
    seen: set[str] = set()
    todo = [
        d.target
        for r in rel_dirs
        for d in graph.importers.get(r, {}).values()
        if not (production and d.dev)
    ]
    while todo:
        dep = todo.pop()
        if dep in seen or linked_dir(dep) is not None:
            continue
        seen.add(dep)
        node = graph.nodes.get(dep)
        if node is not None:
            todo.extend(node.deps)
    return seen


def member_edges(graph: LockGraph) -> dict[str, tuple[str, ...]]:
    """Each importer's directory → the member directories its dependencies link to."""
    out: dict[str, tuple[str, ...]] = {}
    for rel_dir, deps in graph.importers.items():
        linked = {linked_dir(d.target) for d in deps.values()}
        out[rel_dir] = tuple(sorted(d for d in linked if d is not None and d != rel_dir))
    return out
