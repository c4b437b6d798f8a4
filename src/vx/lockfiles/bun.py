"""bun.lock (the text lockfile: JSON with trailing commas) → LockGraph.

`workspaces` holds each member's declared dependencies by directory; `packages` is keyed by
where the install puts a package (`ms`, `lone/ms` nested under the member `lone`,
`is-odd/is-number` under `is-odd`), each entry `[name@version, registry, meta, integrity]`,
and a member's entry `name@workspace:dir`. A dependency resolves from the most nested key up.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from vx.lockfiles.model import Dep, LockfileError, LockGraph, Node, link_to, reachable

if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "bun.lock"
# A string is matched as runs of plain characters between escapes ("unrolled"): the engine
# steps through a run in one go, where `(?:[^"\\]|\\.)*` kept a backtracking frame per
# character (about 130 bytes each, and time growing faster than the text).
_TRAILING_COMMA = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|,(\s*[}\]])')
_FIELDS = (
    ("dependencies", False),
    ("optionalDependencies", False),
    ("peerDependencies", False),
    ("devDependencies", True),
)
_NODE_FIELDS = ("dependencies", "optionalDependencies", "peerDependencies")
_GRAPH_SECTIONS = frozenset({"workspaces", "packages"})
_WORKSPACE = "@workspace:"


def load(text: str) -> dict[str, Any]:
    """The lockfile's document, its trailing commas dropped."""
    plain = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)
    try:
        doc = json.loads(plain)
    except ValueError as exc:
        raise LockfileError(f"{NAME}: not readable ({exc})") from None
    except RecursionError:
        raise LockfileError(f"{NAME}: nested deeper than vx reads") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("packages"), dict):
        raise LockfileError(f"{NAME}: no `packages` map")
    if doc.get("lockfileVersion") not in (0, 1, 2):
        raise LockfileError(f"{NAME}: lockfileVersion {doc.get('lockfileVersion')} is not read")
    return doc


def read(text: str) -> LockGraph:
    """The lockfile's graph."""
    doc = load(text)
    packages: dict[str, Any] = doc["packages"]
    workspaces = doc.get("workspaces")
    if not isinstance(workspaces, dict):
        raise LockfileError(f"{NAME}: no `workspaces` map")
    prefix = {d: str(w.get("name", "")) for d, w in workspaces.items() if isinstance(w, dict)}
    importers: dict[str, dict[str, Dep]] = {}
    for rel_dir, body in workspaces.items():
        if not isinstance(body, dict):
            continue
        scope = prefix.get(rel_dir, "") if rel_dir else ""
        deps: dict[str, Dep] = {}
        for field, dev in _FIELDS:
            for name in _names(body, field):
                target = resolve(packages, scope, name)
                if target is not None:
                    deps.setdefault(name, Dep(target, dev))
        importers[rel_dir or "."] = deps
    nodes: dict[str, Node] = {}
    for key, entry in packages.items():
        if not isinstance(entry, list) or not entry:
            continue
        ident = str(entry[0])
        if _WORKSPACE in ident:
            continue
        meta = entry[2] if len(entry) > 2 and isinstance(entry[2], dict) else {}
        at = ident.rfind("@")
        children = (resolve(packages, key, n) for f in _NODE_FIELDS for n in _names(meta, f))
        nodes[key] = Node(
            ident[:at] if at > 0 else ident,
            ident[at + 1 :] if at > 0 else "",
            str(entry[3]) if len(entry) > 3 else str(entry[1:2]),
            tuple(c for c in children if c is not None),
        )
    install = {k: json.dumps(v, sort_keys=True) for k, v in doc.items() if k not in _GRAPH_SECTIONS}
    return LockGraph(importers, nodes, install)


def _names(body: dict[str, Any], field: str) -> list[str]:
    found = body.get(field)
    return sorted(found) if isinstance(found, dict) else []


def segments(key: str) -> list[str]:
    """`@s/a/b` → [`@s/a`, `b`]: a key's package names, nearest the root first."""
    parts = key.split("/")
    out: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i].startswith("@") and i + 1 < len(parts):
            out.append(f"{parts[i]}/{parts[i + 1]}")
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def resolve(packages: dict[str, Any], at: str, name: str) -> str | None:
    """The key `name` resolves to from the package (or member name) at `at`."""
    chain = segments(at) if at else []
    while True:
        key = "/".join([*chain, name])
        entry = packages.get(key)
        if isinstance(entry, list) and entry:
            ident = str(entry[0])
            if _WORKSPACE in ident:
                return link_to(ident.split(_WORKSPACE, 1)[1] or ".")
            return key
        if not chain:
            return None
        chain.pop()


def prune_text(text: str, keep: set[str], strike: Mapping[str, set[str]]) -> str:
    """The lockfile with the members `keep` and what they reach; struck workspace dependencies
    are dropped from their members' lists. Written as plain JSON, which bun reads as it is."""
    doc = load(text)
    graph = read(text)
    wanted = reachable(graph, keep, production=False)
    members: dict[str, Any] = {}
    for rel_dir, body in doc.get("workspaces", {}).items():
        where = rel_dir or "."
        if where not in keep or not isinstance(body, dict):
            continue
        gone = strike.get(where, set())
        members[rel_dir] = {
            k: {n: r for n, r in v.items() if n not in gone} if isinstance(v, dict) else v
            for k, v in body.items()
        }
    packages: dict[str, Any] = {}
    for key, entry in doc["packages"].items():
        ident = str(entry[0]) if isinstance(entry, list) and entry else ""
        if _WORKSPACE in ident:
            if (ident.split(_WORKSPACE, 1)[1] or ".") in keep:
                packages[key] = entry
        elif key in wanted:
            packages[key] = entry
    doc["workspaces"] = members
    doc["packages"] = packages
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
