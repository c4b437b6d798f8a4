"""A lockfile cut down to what a subset of the workspace installs, so it still installs frozen.

The kept importers are the subset's members and the root; the kept packages are what they
reach. `strike` names, per member directory, workspace dependencies left out of the subset
(`--production`: reached only as dev dependencies), which are struck from the importer too.
npm, pnpm, Yarn (classic and Berry) and bun lockfiles are pruned here; uv.lock in uv_prune.py.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vx.lockfiles import bun, npm, pnpm, yarn
from vx.lockfiles.model import LockfileError, reachable

if TYPE_CHECKING:
    from collections.abc import Mapping

PRUNABLE = (npm.NAME, pnpm.NAME, yarn.NAME, bun.NAME)


def prune_lockfile(
    name: str,
    text: str,
    keep: set[str],
    strike: Mapping[str, set[str]],
    members: list[str],
    manifests: Mapping[str, Mapping[str, Any]],
) -> str:
    """`text` (the root lockfile `name`) kept to the member directories `keep` (the root `.`
    included); `members` is the subset's workspace list as the root manifest now writes it,
    `manifests` the kept package.json documents by directory, as the pruned tree holds them.
    LockfileError says why it cannot be, an entry of a shape the format never has included."""
    try:
        if name == npm.NAME:
            return _npm(text, keep, strike, members)
        if name == yarn.NAME:
            return yarn.prune_text(text, keep, manifests, strike)
        if name == bun.NAME:
            return bun.prune_text(text, keep, strike)
        return _pnpm(text, keep, strike)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise LockfileError(f"{name}: an entry vx does not understand ({exc!r})") from None
    except RecursionError:
        raise LockfileError(f"{name}: nested deeper than vx reads") from None


def _pnpm(text: str, keep: set[str], strike: Mapping[str, set[str]]) -> str:
    graph = pnpm.read(text)
    wanted = reachable(graph, keep, production=False)
    pruned = pnpm.prune_text(text, keep, wanted)
    return _strike_pnpm(pruned, strike) if strike else pruned


def _strike_pnpm(text: str, strike: Mapping[str, set[str]]) -> str:
    """Drop `importers.<dir>.<field>.<dep>` blocks for the struck dependencies."""
    from vx.lockfiles.yamlish import split_key

    out: list[str] = []
    section = importer = ""
    skipping = False
    for raw in text.splitlines():
        body = raw.lstrip(" ")
        indent = len(raw) - len(body)
        if body and indent == 0:
            section = split_key(body, pnpm.NAME, 0)[0]
        elif body and indent == 2 and section == "importers":
            importer = split_key(body, pnpm.NAME, 0)[0]
        if body and indent <= 6:
            skipping = (
                section == "importers"
                and indent == 6
                and split_key(body, pnpm.NAME, 0)[0] in strike.get(importer, set())
            )
        if not skipping:
            out.append(raw)
    return "\n".join(out) + "\n"


def _npm(text: str, keep: set[str], strike: Mapping[str, set[str]], members: list[str]) -> str:
    doc = npm.load(text)
    graph = npm.read(text)
    wanted = reachable(graph, keep, production=False)
    packages: dict[str, Any] = doc["packages"]
    kept: dict[str, Any] = {}
    for key, entry in packages.items():
        importer = key or "."
        if not key.startswith("node_modules/") and "/node_modules/" not in key:
            if importer in keep:
                kept[key] = _struck(entry, strike.get(importer, set()))
            continue
        if isinstance(entry, dict) and entry.get("link"):
            if str(entry.get("resolved", "")) in keep:
                kept[key] = entry
            continue
        if key in wanted:
            kept[key] = entry
    root = dict(kept.get("", {}))
    if "workspaces" in root:
        root["workspaces"] = members
        kept[""] = root
    doc["packages"] = kept
    doc.pop("dependencies", None)  # the v1-compatible tree: npm 7+ reads `packages`
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _struck(entry: Any, names: set[str]) -> Any:
    if not names or not isinstance(entry, dict):
        return entry
    out = dict(entry)
    for field in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        table = out.get(field)
        if isinstance(table, dict):
            out[field] = {k: v for k, v in table.items() if k not in names}
    return out
