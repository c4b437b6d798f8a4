"""uv.lock (TOML) → LockGraph: members by their editable or virtual source, the rest by name.

A member's dependencies, extras and dependency groups name packages (with a version where
several are locked); a named member is a workspace edge, which is how a member whose
`dependencies` are dynamic still shows the members it needs.
"""

from __future__ import annotations

import json
import posixpath
from typing import TYPE_CHECKING, Any

from vx.lockfiles.model import (
    Dep,
    LockfileError,
    LockGraph,
    Node,
    link_to,
    member_edges,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "uv.lock"
_MEMBER_SOURCES = ("editable", "virtual")
_GRAPH_SECTIONS = frozenset({"package"})


def read(text: str) -> LockGraph:
    """The lockfile's graph."""
    import tomllib  # an npm workspace's run never needs it

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LockfileError(f"{NAME}: not TOML ({exc})") from None
    except RecursionError:
        raise LockfileError(f"{NAME}: nested deeper than vx reads") from None
    if doc.get("version") != 1 or not isinstance(doc.get("package"), list):
        raise LockfileError(f"{NAME}: version {doc.get('version')} is not read")
    packages = [p for p in doc["package"] if isinstance(p, dict) and "name" in p]
    members = set(_members(doc))
    by_name: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    member_dir: dict[str, str] = {}
    for pkg in packages:
        name = str(pkg["name"])
        pid = package_id(pkg)
        by_name.setdefault(name, []).append((pid, pkg))
        where = member_source(pkg.get("source"))
        if where is not None and (not members or name in members):
            member_dir[pid] = posixpath.normpath(where)
    importers: dict[str, dict[str, Dep]] = {}
    nodes: dict[str, Node] = {}
    for group in by_name.values():
        for pid, pkg in group:
            edges = _edges(pkg, by_name, member_dir)
            where = member_dir.get(pid)
            if where is not None:
                importers[where] = _direct(edges)
                continue
            nodes[pid] = Node(
                str(pkg["name"]),
                str(pkg.get("version", "")),
                _integrity(pkg),
                tuple(t for _, t, _ in edges),
            )
    install = {
        k: json.dumps(v, sort_keys=True, default=str)
        for k, v in doc.items()
        if k not in _GRAPH_SECTIONS
    }
    return LockGraph(importers, nodes, install)


def _members(doc: dict[str, Any]) -> list[str]:
    manifest = doc.get("manifest")
    found = manifest.get("members") if isinstance(manifest, dict) else None
    return [str(m) for m in found] if isinstance(found, list) else []


def package_id(pkg: Mapping[str, Any]) -> str:
    """The id a `[[package]]` entry goes by in the graph: name, version and source."""
    return (
        f"{pkg['name']}=={pkg.get('version', '')}@{json.dumps(pkg.get('source'), sort_keys=True)}"
    )


def member_source(source: object) -> str | None:
    """The directory an editable or virtual source names (a workspace member's), else None."""
    if not isinstance(source, dict):
        return None
    for kind in _MEMBER_SOURCES:
        if isinstance(source.get(kind), str):
            return str(source[kind])
    return None


def _edges(
    pkg: dict[str, Any],
    by_name: dict[str, list[tuple[str, dict[str, Any]]]],
    member_dir: dict[str, str],
) -> list[tuple[str, str, bool]]:
    """(dependency name, target id, dev) for every dependency, extra and group entry."""
    lists: list[tuple[Any, bool]] = [(pkg.get("dependencies"), False)]
    for table, dev in (("optional-dependencies", False), ("dev-dependencies", True)):
        found = pkg.get(table)
        if isinstance(found, dict):
            lists.extend((v, dev) for v in found.values())
    out: list[tuple[str, str, bool]] = []
    for entries, dev in lists:
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict) or "name" not in entry:
                continue
            for pid, locked in by_name.get(str(entry["name"]), ()):
                if "version" in entry and locked.get("version") != entry["version"]:
                    continue
                if "source" in entry and locked.get("source") != entry["source"]:
                    continue
                member = member_dir.get(pid)
                out.append((str(entry["name"]), link_to(member) if member else pid, dev))
    return out


def _direct(edges: list[tuple[str, str, bool]]) -> dict[str, Dep]:
    """A member's direct dependencies from its edges: one entry per locked target, so two
    versions of a package split by a marker both stay (keyed `name==version` then), and a
    target is dev only when every list naming it is a dependency group."""
    targets: dict[str, dict[str, bool]] = {}
    for name, target, dev in edges:
        found = targets.setdefault(name, {})
        found[target] = found.get(target, True) and dev
    out: dict[str, Dep] = {}
    for name, found in targets.items():
        # A package id reads `name==version@source`; a member link has no version.
        versions = [t.partition("==")[2].partition("@")[0] for t in found]
        for (target, dev), version in zip(found.items(), versions, strict=True):
            key = name
            if len(found) > 1:  # one version from several sources: the id tells them apart
                key = f"{name}=={version}" if versions.count(version) == 1 else target
            out[key] = Dep(target, dev)
    return out


def _integrity(pkg: dict[str, Any]) -> str:
    sdist = pkg.get("sdist")
    if isinstance(sdist, dict) and "hash" in sdist:
        return str(sdist["hash"])
    wheels = pkg.get("wheels")
    if isinstance(wheels, list):
        return ",".join(str(w.get("hash", "")) for w in wheels if isinstance(w, dict))
    return json.dumps(pkg.get("source"), sort_keys=True)


def locked_edges(text: str, dirs: Mapping[str, str]) -> dict[str, set[str]]:
    """Member name → the member names its locked dependencies link, for the members `dirs`
    (name → root-relative directory) names; {} when the lockfile cannot be read.

    A member with dynamic dependencies (a build hook fills them in) shows its workspace edges
    only here, since its pyproject.toml names none.
    """
    try:
        graph = read(text)
    except LockfileError:
        return {}
    by_dir = {d: n for n, d in dirs.items()}
    out: dict[str, set[str]] = {}
    for rel_dir, linked in member_edges(graph).items():
        owner = by_dir.get(rel_dir)
        if owner is None:
            continue
        out[owner] = {by_dir[d] for d in linked if d in by_dir and by_dir[d] != owner}
    return out
