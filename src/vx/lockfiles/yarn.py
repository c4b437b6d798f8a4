"""yarn.lock, classic (v1) and Berry (v2+, `__metadata`) → LockGraph.

Both key entries by the descriptors that resolved to them (`ms@^2.1.0, ms@^2.0.0`). Classic
does not list workspace members, so their direct dependencies come from their manifests; Berry
lists each member as a `name@workspace:dir` entry, and the manifests only say which of its
dependencies are dev ones (Berry merges them).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from vx.lockfiles.model import Dep, LockfileError, LockGraph, Node, link_to, reachable
from vx.lockfiles.yamlish import parse

if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "yarn.lock"
_MANIFEST_FIELDS = (
    ("dependencies", False),
    ("optionalDependencies", False),
    ("devDependencies", True),
)
_WORKSPACE = "@workspace:"


def read(text: str, manifests: Mapping[str, Mapping[str, Any]]) -> LockGraph:
    """The lockfile's graph; `manifests` are the members' package.json documents by directory."""
    if "__metadata:" in text[:2000]:
        return _berry(text, manifests)
    return _classic(text, manifests)


def _descriptors(key: str) -> list[str]:
    return [d.strip().strip('"') for d in key.split(", ")]


def _dev_names(manifest: Mapping[str, Any]) -> set[str]:
    dev = manifest.get("devDependencies")
    prod = {n for f in ("dependencies", "optionalDependencies") for n in (manifest.get(f) or {})}
    return {n for n in dev if n not in prod} if isinstance(dev, dict) else set()


def _member_by_name(manifests: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    return {str(m["name"]): d for d, m in manifests.items() if isinstance(m.get("name"), str)}


# classic


def _classic(text: str, manifests: Mapping[str, Mapping[str, Any]]) -> LockGraph:
    if "# yarn lockfile v1" not in text[:500]:
        raise LockfileError(f"{NAME}: neither a classic (v1) nor a Berry lockfile")
    entries = _classic_entries(text)
    by_descriptor: dict[str, str] = {}
    for key, _ in entries:
        for desc in _descriptors(key):
            by_descriptor[desc] = key
    members = _member_by_name(manifests)
    nodes: dict[str, Node] = {}
    for key, fields in entries:
        name = _descriptors(key)[0]
        name = name[: name.rfind("@")] if name.rfind("@") > 0 else name
        children = [
            _classic_target(dep, rng, by_descriptor, members)
            for dep, rng in [
                *fields.get("dependencies", {}).items(),
                *fields.get("optionalDependencies", {}).items(),
            ]
        ]
        nodes[key] = Node(
            name,
            str(fields.get("version", "")),
            str(fields.get("integrity") or fields.get("resolved") or ""),
            tuple(c for c in children if c is not None),
        )
    importers: dict[str, dict[str, Dep]] = {}
    for rel_dir, manifest in manifests.items():
        deps: dict[str, Dep] = {}
        for field, dev in _MANIFEST_FIELDS:
            table = manifest.get(field)
            for dep, rng in table.items() if isinstance(table, dict) else ():
                target = _classic_target(dep, str(rng), by_descriptor, members)
                if target is not None:
                    deps.setdefault(dep, Dep(target, dev))
        importers[rel_dir] = deps
    return LockGraph(importers, nodes, {})


def _classic_target(
    dep: str, rng: str, by_descriptor: dict[str, str], members: dict[str, str]
) -> str | None:
    found = by_descriptor.get(f"{dep}@{rng}")
    if found is not None:
        return found
    member = members.get(dep)
    return link_to(member) if member is not None else None


def _classic_entries(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Each entry's key line and its fields; nested blocks (`dependencies:`) as dicts."""
    out: list[tuple[str, dict[str, Any]]] = []
    fields: dict[str, Any] = {}
    block: dict[str, str] | None = None
    for line_no, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not raw.startswith(" "):
            if not raw.endswith(":"):
                raise LockfileError(f"{NAME}:{line_no}: expected an entry's descriptors")
            fields = {}
            out.append((raw[:-1], fields))
            block = None
            continue
        body = raw.strip()
        deep = raw.startswith("    ")
        if deep and block is not None:
            name, _, value = body.partition(" ")
            block[name.strip('"')] = value.strip().strip('"')
        elif body.endswith(":"):
            block = fields.setdefault(body[:-1], {})
        else:
            name, _, value = body.partition(" ")
            fields[name.strip('"')] = value.strip().strip('"')
            block = None
    return out


# berry


def _berry(text: str, manifests: Mapping[str, Mapping[str, Any]]) -> LockGraph:
    tree, sections = parse(text, NAME)
    by_descriptor: dict[str, str] = {}
    workspace_of: dict[str, str] = {}
    for key, body in tree.items():
        if key == "__metadata" or not isinstance(body, dict):
            continue
        for desc in _descriptors(key):
            by_descriptor[desc] = key
        resolution = str(body.get("resolution", ""))
        if _WORKSPACE in resolution:
            where = resolution.split(_WORKSPACE, 1)[1]
            workspace_of[key] = posixpath.normpath(where)
    importers: dict[str, dict[str, Dep]] = {}
    nodes: dict[str, Node] = {}
    for key, body in tree.items():
        if key == "__metadata" or not isinstance(body, dict):
            continue
        raw_deps = body.get("dependencies")
        pairs = list(raw_deps.items()) if isinstance(raw_deps, dict) else []
        targets = [
            (dep, _berry_target(dep, str(rng), by_descriptor, workspace_of)) for dep, rng in pairs
        ]
        member = workspace_of.get(key)
        if member is not None:
            dev = _dev_names(manifests.get(member, {}))
            importers[member] = {d: Dep(t, d in dev) for d, t in targets if t is not None}
            continue
        resolution = str(body.get("resolution", ""))
        at = resolution.find("@", 1)
        nodes[key] = Node(
            resolution[:at] if at > 0 else key,
            str(body.get("version", "")),
            str(body.get("checksum") or resolution),
            tuple(t for _, t in targets if t is not None),
        )
    install = {"__metadata": sections.get("__metadata", "")}
    return LockGraph(importers, nodes, install)


def _berry_target(
    dep: str, rng: str, by_descriptor: dict[str, str], workspace_of: dict[str, str]
) -> str | None:
    for desc in (f"{dep}@{rng}", f"{dep}@npm:{rng}"):
        key = by_descriptor.get(desc)
        if key is not None:
            member = workspace_of.get(key)
            return link_to(member) if member is not None else key
    return None


# pruning


def prune_text(
    text: str,
    keep: set[str],
    manifests: Mapping[str, Mapping[str, Any]],
    strike: Mapping[str, set[str]],
) -> str:
    """The lockfile with the entries the members `keep` reach; each kept entry's key lists only
    the descriptors something kept still asks for, as Yarn writes it after an install.

    `manifests` are the kept members' package.json documents as the pruned tree has them.
    """
    berry = "__metadata:" in text[:2000]
    graph = _berry(text, manifests) if berry else _classic(text, manifests)
    wanted = reachable(graph, keep, production=False)
    fields = _berry_fields(text) if berry else dict(_classic_entries(text))
    workspace_dir = {k: _workspace_dir(f) for k, f in fields.items()} if berry else {}
    asked: set[str] = set()
    for rel_dir in keep:
        for field, _ in _MANIFEST_FIELDS:
            table = manifests.get(rel_dir, {}).get(field)
            for dep, rng in table.items() if isinstance(table, dict) else ():
                asked.update((f"{dep}@{rng}", f"{dep}@npm:{rng}"))
    kept_keys = {k for k in fields if k in wanted or workspace_dir.get(k) in keep}
    for key in kept_keys:
        for table in ("dependencies", "optionalDependencies"):
            deps = fields[key].get(table)
            for dep, rng in deps.items() if isinstance(deps, dict) else ():
                asked.update((f"{dep}@{rng}", f"{dep}@npm:{rng}"))
    out: list[str] = []
    current: str | None = None
    struck: set[str] = set()
    for raw in text.splitlines():
        if raw.startswith("#"):
            out.append(raw)
            continue
        if raw and not raw.startswith(" "):
            key = raw.removesuffix(":")
            name = _entry_name(key, fields)
            if name == "__metadata":
                out.append(raw)
                current = "__metadata"
                continue
            if name is None or name not in kept_keys:
                current = None
                continue
            current = name
            struck = strike.get(workspace_dir.get(name) or "", set())
            out.append(_key_line(key, fields[name], asked, berry=berry))
            continue
        if current is None and raw.strip():
            continue
        if struck and raw.startswith("    ") and not raw.startswith("     "):
            dep = raw.strip().split(":", 1)[0].split(" ", 1)[0].strip('"')
            if dep in struck:
                continue
        out.append(raw)
    return _squeeze(out)


def _berry_fields(text: str) -> dict[str, dict[str, Any]]:
    tree, _ = parse(text, NAME)
    return {k: v for k, v in tree.items() if isinstance(v, dict)}


def _workspace_dir(fields: Mapping[str, Any]) -> str | None:
    resolution = str(fields.get("resolution", ""))
    if _WORKSPACE not in resolution:
        return None
    return posixpath.normpath(resolution.split(_WORKSPACE, 1)[1])


def _entry_name(key: str, fields: Mapping[str, Any]) -> str | None:
    if key in fields:
        return key
    unquoted = key.strip('"')
    return unquoted if unquoted in fields else None


def _key_line(key: str, fields: Mapping[str, Any], asked: set[str], *, berry: bool) -> str:
    """The entry's key line with only the descriptors still asked for (a workspace keeps its
    own locator)."""
    if berry:
        descs = _descriptors(key.strip('"'))
        own = str(fields.get("resolution", ""))
        kept = [d for d in descs if d in asked or d == own] or descs
        joined = ", ".join(kept)
        return f'"{joined}":' if key.startswith('"') else f"{joined}:"
    tokens = key.split(", ")
    kept_tokens = [t for t in tokens if t.strip('"') in asked] or tokens
    return ", ".join(kept_tokens) + ":"


def _squeeze(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if not line.strip() and out and not out[-1].strip():
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + "\n"
