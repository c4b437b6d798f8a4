"""Naming what makes a task cycle: the dependsOn entries and manifest fields behind each edge.

A user who wrote only `^build` did not write the edge that closes a loop; the manifests did.
The refusal names, for each edge on the cycle, the config entry or the manifest field that
made it, so the user knows which file to edit. Runs only on the refusal path.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from vx.graph.deps import DepKind, parse_dep
from vx.workspace.cycles import describe_hop
from vx.workspace.packages import package_links

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.graph.build import ProjectIndex
    from vx.ids import TaskId
    from vx.workspace.model import Project

DEPENDS_ON = "dependsOn"
MANIFEST = "manifest"


def cycle_causes(index: ProjectIndex, cycle: Sequence[TaskId]) -> tuple[tuple[str, str], ...]:
    """(kind, text) per edge of `cycle` in order: `dependsOn` or `manifest`, and what made it."""
    links: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None
    out: list[tuple[str, str]] = []
    for i, here in enumerate(cycle):
        there = cycle[(i + 1) % len(cycle)]
        project = index.by_name.get(here.project)
        task = index.task(project, here.task) if project is not None else None
        if project is None or task is None:
            continue
        upstream = False
        found: str | None = None
        for text in task.depends_on:
            try:
                spec = parse_dep(text)
            except ValueError:
                continue
            if spec.task != there.task:
                continue
            if spec.kind is DepKind.UPSTREAM:
                upstream = True
                continue
            target = project if spec.project is None else index.project(spec.project)
            if target is not None and target.name == there.project:
                where = project.config.path if project.config else project.rel_dir
                found = f'{where}: tasks.{here.task}.dependsOn lists "{text}"'
                break
        if found is not None:
            out.append((DEPENDS_ON, found))
        elif upstream:
            if links is None:
                links = package_links(index.ws.projects, index.ws.manager)
            hops = _package_path(index, here.project, there.project)
            out.extend(
                (MANIFEST, _hop(index.by_name[a], b, links)) for a, b in hops if a in index.by_name
            )
    return tuple(out)


def _hop(owner: Project, target: str, links: Mapping[str, Mapping[str, tuple[str, ...]]]) -> str:
    return describe_hop(owner, target, links.get(owner.name, {}).get(target, ()))


def _package_path(index: ProjectIndex, start: str, goal: str) -> list[tuple[str, str]]:
    """The package edges `^task` followed from `start` to `goal`, through config-less packages."""
    parent: dict[str, str] = {}
    todo = [start]
    seen = {start}
    while todo:
        name = todo.pop(0)
        for dep in index.ordering(name):
            if dep in seen:
                continue
            seen.add(dep)
            parent[dep] = name
            if dep == goal:
                path = [dep]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                return list(pairwise(path))
            project = index.by_name.get(dep)
            if project is not None and project.config is None:
                todo.append(dep)
    return []
