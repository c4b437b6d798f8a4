"""pnpm-lock.yaml (lockfile versions 6 and 9): importers, packages and snapshots → LockGraph.

Version 6 keys packages `/name@version(peers)` and keeps their dependencies beside their
resolution; version 9 keys them `name@version` in `packages` (resolution) and
`name@version(peers)` in `snapshots` (dependencies). A dependency's `version` is a version to
key with its name, an alias's own key, or `link:` to another importer.
"""

from __future__ import annotations

import posixpath
from typing import Any

from vx.lockfiles.model import Dep, LockfileError, LockGraph, Node, link_to
from vx.lockfiles.yamlish import flow_map, parse, split_key

NAME = "pnpm-lock.yaml"
_SUPPORTED = ("6", "7", "9")
_FIELDS = (("dependencies", False), ("optionalDependencies", False), ("devDependencies", True))
_NODE_FIELDS = ("dependencies", "optionalDependencies")
_GRAPH_SECTIONS = frozenset({"importers", "packages", "snapshots", *(f for f, _ in _FIELDS)})


def read(text: str) -> LockGraph:
    """The lockfile's graph; LockfileError for a version or shape this reader does not know."""
    tree, sections = parse(text, NAME)
    version = str(tree.get("lockfileVersion", ""))
    if version.split(".", maxsplit=1)[0] not in _SUPPORTED:
        raise LockfileError(f"{NAME}: lockfileVersion {version or '(none)'} is not one vx reads")
    packages = _table(tree, "packages")
    snapshots = _table(tree, "snapshots")
    importers_raw = _table(tree, "importers")
    if not importers_raw:
        importers_raw = {".": {f: tree[f] for f, _ in _FIELDS if f in tree}}
    known = set(packages) | set(snapshots)
    importers: dict[str, dict[str, Dep]] = {}
    for rel_dir, body in importers_raw.items():
        deps: dict[str, Dep] = {}
        if isinstance(body, dict):
            for field, dev in _FIELDS:
                for name, spec in _table(body, field).items():
                    version_of = spec.get("version", "") if isinstance(spec, dict) else str(spec)
                    target = _target(name, version_of, rel_dir, known)
                    if target is not None:
                        deps.setdefault(name, Dep(target, dev))
        importers[posixpath.normpath(rel_dir)] = deps
    nodes: dict[str, Node] = {}
    for key in known:
        meta = snapshots.get(key) if key in snapshots else packages.get(key)
        body = meta if isinstance(meta, dict) else {}
        base = _without_peers(key)
        resolved = packages.get(key, packages.get(base))
        resolution = resolved.get("resolution", "") if isinstance(resolved, dict) else ""
        name, version = _name_version(key)
        if isinstance(resolved, dict):
            name = str(resolved.get("name", name))
        children = [
            _target(dep, str(ver), ".", known)
            for field in _NODE_FIELDS
            for dep, ver in _table(body, field).items()
        ]
        nodes[key] = Node(
            name,
            version,
            _integrity(str(resolution)),
            tuple(c for c in children if c is not None),
        )
    install = {k: v for k, v in sections.items() if k not in _GRAPH_SECTIONS}
    return LockGraph(importers, nodes, install)


def _table(tree: dict[str, Any], key: str) -> dict[str, Any]:
    found = tree.get(key)
    return found if isinstance(found, dict) else {}


def _target(name: str, version: str, rel_dir: str, known: set[str]) -> str | None:
    if version.startswith("link:"):
        return link_to(posixpath.normpath(posixpath.join(rel_dir, version[5:])))
    for candidate in (version, f"/{name}@{version}", f"{name}@{version}"):
        if candidate in known:
            return candidate
    return None


def _without_peers(key: str) -> str:
    at = key.find("(")
    return key if at < 0 else key[:at]


def _name_version(key: str) -> tuple[str, str]:
    """`/@scope/name@1.0.0(peer@2)` → (`@scope/name`, `1.0.0(peer@2)`)."""
    bare = key.removeprefix("/")
    base = _without_peers(bare)
    at = base.rfind("@")
    if at <= 0:
        return base, bare
    return base[:at], bare[at + 1 :]


def _integrity(resolution: str) -> str:
    fields = flow_map(resolution)
    return fields.get("integrity") or fields.get("tarball") or resolution


def prune_text(text: str, keep_importers: set[str], keep_packages: set[str]) -> str:
    """The lockfile with only the named importers and package ids, as pnpm wrote the rest."""
    bases = {_without_peers(k) for k in keep_packages} | keep_packages
    out: list[str] = []
    section = ""
    keeping = True
    for raw in text.splitlines():
        body = raw.lstrip(" ")
        indent = len(raw) - len(body)
        if body and indent == 0:
            section = body.split(":", 1)[0]
            keeping = True
        elif body and indent == 2 and section in ("importers", "packages", "snapshots"):
            key = split_key(body, NAME, 0)[0]
            if section == "importers":
                keeping = posixpath.normpath(key) in keep_importers
            else:
                keeping = key in (bases if section == "packages" else keep_packages)
        if keeping or not body:
            out.append(raw)
    return _squeeze_blank(out) + "\n"


def _squeeze_blank(lines: list[str]) -> str:
    """No two blank lines in a row, none at the end: the spacing pnpm writes."""
    out: list[str] = []
    for line in lines:
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)
