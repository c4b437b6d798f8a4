"""Packages whose builds form a cycle, for `vx init`: `^build` there would refuse every run.

Package managers tolerate a cycle of workspace dependencies (pnpm sorts it away: nuxt's
`@nuxt/nitro-server` devDepends on `nuxt`, which depends on it); a task graph cannot. A
package on such a cycle gets an edge to each build outside its cycle instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.workspace.manifests import PACKAGE_JSON, read_package_json
from vx.workspace.model import Project
from vx.workspace.packages import package_edges

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.workspace.model import Manager

CYCLE_REASON = (
    "its package is on a cycle of workspace dependencies, where ^build would refuse the run:"
    " it waits on the builds outside the cycle instead; order the cycle's builds by hand"
)


def _reach(edges: Mapping[str, tuple[str, ...]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def cycle_builds(
    root: Path, members: Mapping[str, str], manager: Manager
) -> dict[str, tuple[str, ...]]:
    """Member name → the `pkg#build` edges that replace its `^build`, for members on a cycle.

    `members` maps each member's name to its root-relative dir.
    """
    projects = []
    for name, rel in members.items():
        manifest = read_package_json(root / rel / PACKAGE_JSON, f"{rel}/{PACKAGE_JSON}")
        projects.append(
            Project(
                name=name,
                dir=root / rel,
                rel_dir=rel,
                version=manifest.version,
                dependencies=manifest.dependencies,
            )
        )
    edges = package_edges(projects, manager)
    reach = {name: _reach(edges, name) for name in edges}
    out: dict[str, tuple[str, ...]] = {}
    for name, reached in reach.items():
        if name not in reached:
            continue
        cycle = {other for other in reached if name in reach[other]}
        outside = {dep for member in cycle for dep in edges[member] if dep not in cycle}
        out[name] = tuple(f"{dep}#build" for dep in sorted(outside))
    return out
