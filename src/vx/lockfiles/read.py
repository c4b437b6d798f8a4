"""Which root files are lockfiles, and reading one into a LockGraph and per-project closures."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vx.lockfiles import bun, npm, pnpm, uv, yarn
from vx.lockfiles.model import LockfileError, Walker

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.lockfiles.model import Locked, LockGraph
    from vx.workspace.model import Workspace

# Root lockfiles keyed per project; the binary bun.lockb is one vx cannot read.
LOCKFILES = (pnpm.NAME, npm.NAME, yarn.NAME, bun.NAME, "bun.lockb", uv.NAME)
NEEDS_MANIFESTS = frozenset({yarn.NAME})


def read_lockfile(name: str, data: bytes, manifests: Mapping[str, Mapping[str, Any]]) -> LockGraph:
    """`data` (the root file `name`) read; LockfileError says why it cannot be."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LockfileError(f"{name}: not UTF-8 text") from None
    try:
        if name == pnpm.NAME:
            return pnpm.read(text)
        if name == npm.NAME:
            return npm.read(text)
        if name == yarn.NAME:
            return yarn.read(text, manifests)
        if name == bun.NAME:
            return bun.read(text)
        if name == uv.NAME:
            return uv.read(text)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise LockfileError(f"{name}: an entry vx does not understand ({exc!r})") from None
    except RecursionError:
        raise LockfileError(f"{name}: nested deeper than vx reads") from None
    raise LockfileError(f"{name}: a format vx does not read")


def member_manifests(ws: Workspace) -> dict[str, dict[str, Any]]:
    """Each JS project's package.json document by directory (Yarn's importers live there), and
    the root's even when it is no project: what it installs for itself is the toolchain."""
    out: dict[str, dict[str, Any]] = {}
    for rel_dir in dict.fromkeys([".", *(p.rel_dir for p in ws.projects)]):
        path = ws.root / rel_dir / "package.json"
        try:
            doc = json.loads(path.read_text("utf-8-sig"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict):
            out[rel_dir] = doc
    return out


def project_closures(ws: Workspace, graph: LockGraph) -> dict[str, tuple[Locked, ...] | None]:
    """Each project's closure by project name; None for one the lockfile does not list."""
    walker = Walker(graph)
    return {p.name: walker.closure(p.rel_dir) for p in ws.projects}
