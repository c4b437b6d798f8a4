"""package-lock.json (lockfile versions 2 and 3): the `packages` map → LockGraph.

Entries are keyed by where the install puts them (`node_modules/ms`,
`packages/app/node_modules/ms`); a dependency resolves the way Node finds it, from the
requiring package's own `node_modules` up through each enclosing one. A `link` entry is a
workspace member, by the directory it resolves to.
"""

from __future__ import annotations

import json
from typing import Any

from vx.lockfiles.model import Dep, LockfileError, LockGraph, Node, link_to

NAME = "package-lock.json"
_NM = "node_modules/"
_IMPORTER_FIELDS = (
    ("dependencies", False),
    ("optionalDependencies", False),
    ("peerDependencies", False),
    ("devDependencies", True),
)
_NODE_FIELDS = ("dependencies", "optionalDependencies", "peerDependencies")


def load(text: str) -> dict[str, Any]:
    """The lockfile's JSON, refused unless it is version 2 or 3 with a `packages` map."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise LockfileError(f"{NAME}: not JSON ({exc})") from None
    except RecursionError:
        raise LockfileError(f"{NAME}: nested deeper than vx reads") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("packages"), dict):
        raise LockfileError(f"{NAME}: no `packages` map (lockfileVersion 1 is not read)")
    if doc.get("lockfileVersion") not in (2, 3):
        raise LockfileError(f"{NAME}: lockfileVersion {doc.get('lockfileVersion')} is not read")
    return doc


def read(text: str) -> LockGraph:
    """The lockfile's graph."""
    doc = load(text)
    packages: dict[str, Any] = doc["packages"]
    importers: dict[str, dict[str, Dep]] = {}
    nodes: dict[str, Node] = {}
    for key, entry in packages.items():
        if not isinstance(entry, dict) or entry.get("link"):
            continue
        if _is_importer(key):
            deps: dict[str, Dep] = {}
            for field, dev in _IMPORTER_FIELDS:
                for name in _names(entry, field):
                    target = resolve(packages, key, name)
                    if target is not None:
                        deps.setdefault(name, Dep(target, dev))
            importers[key or "."] = deps
            continue
        children = (resolve(packages, key, n) for f in _NODE_FIELDS for n in _names(entry, f))
        nodes[key] = Node(
            str(entry.get("name") or _name_of(key)),
            str(entry.get("version", "")),
            str(entry.get("integrity") or entry.get("resolved") or ""),
            tuple(c for c in children if c is not None),
        )
    install = {"lockfileVersion": str(doc.get("lockfileVersion"))}
    return LockGraph(importers, nodes, install)


def _is_importer(key: str) -> bool:
    return not key.startswith(_NM) and "/node_modules/" not in key


def _names(entry: dict[str, Any], field: str) -> list[str]:
    found = entry.get(field)
    return sorted(found) if isinstance(found, dict) else []


def _name_of(key: str) -> str:
    return key.rpartition(_NM)[2]


def resolve(packages: dict[str, Any], at: str, name: str) -> str | None:
    """The entry `name` resolves to from the package at `at`, or a link to a member."""
    while True:
        candidate = f"{at}/{_NM}{name}" if at else f"{_NM}{name}"
        entry = packages.get(candidate)
        if isinstance(entry, dict):
            if entry.get("link"):
                return link_to(str(entry.get("resolved", "")) or ".")
            return candidate
        if not at:
            return None
        at = _parent(at)


def _parent(at: str) -> str:
    if "/" + _NM in at:
        return at.rpartition("/" + _NM)[0]
    if at.startswith(_NM):
        return ""
    return at.rpartition("/")[0]
