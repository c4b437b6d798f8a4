"""Packages whose builds form a cycle, for `vx init`: `^build` there would refuse every run.

Package managers tolerate a cycle of workspace dependencies; a task graph cannot. A cycle that
a dev or peer entry closes needs nothing from init: the runner lets that entry give way where
it would loop back (workspace/cycles.py), so `^build` stays. `a` devDepends on `b`, which
depends on `a`: both keep `^build`, and b's build waits for a's. Only a cycle of runtime
entries (`a` depends on `b`, which depends on `a`, both on `kit`) would refuse the run: each
of its packages gets explicit edges instead: to every build the cycle depends on outside it,
and to those inside it that close no loop, taken in name order (`a` → `b#build`, `kit#build`;
`b` → `kit#build`), with a TODO to check that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.workspace.cycles import components, give_way, selection_only
from vx.workspace.manifests import PACKAGE_JSON, read_package_json
from vx.workspace.model import Project
from vx.workspace.packages import package_links

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.workspace.model import Manager

CYCLE_REASON = (
    "its package is on a cycle of runtime workspace dependencies, where ^build would refuse"
    " the run: its builds are listed instead, leaving out the edge that closes the cycle"
    " (taken in name order); check that the cycle's builds run in the order they need"
)


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
                dependency_fields=manifest.dependency_fields,
            )
        )
    links = package_links(projects, manager)
    weak = selection_only(projects, links)
    ordering = {
        owner: tuple(t for t in targets if t not in weak.get(owner, ()))
        for owner, targets in links.items()
    }
    part = components(ordering)
    sizes: dict[int, int] = {}
    for number in part.values():
        sizes[number] = sizes.get(number, 0) + 1
    cyclic = sorted(name for name in ordering if sizes[part[name]] > 1)
    if not cyclic:
        return {}
    inside = [(o, t) for o in cyclic for t in ordering[o] if part[t] == part[o]]
    kept: dict[str, set[str]] = {name: set() for name in cyclic}
    give_way(kept, inside)
    outside: dict[int, set[str]] = {}
    for name in cyclic:
        outside.setdefault(part[name], set()).update(
            t for t in ordering[name] if part[t] != part[name]
        )
    return {
        name: tuple(f"{dep}#build" for dep in sorted(kept[name] | outside[part[name]]))
        for name in cyclic
    }
