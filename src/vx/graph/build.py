"""Build the task graph: walk dependsOn from the requested tasks, refuse bad edges and cycles."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.errors import ConfigError, CycleError, ErrorCode, UserError
from vx.graph import algo
from vx.graph.cause import cycle_causes
from vx.graph.deps import DepKind, DepSpec, parse_dep
from vx.graph.model import TaskGraph, TaskNode
from vx.ids import ROOT, TaskId
from vx.util.fuzzy import did_you_mean, listing
from vx.util.record import Record
from vx.util.text import clip
from vx.workspace.cycles import give_way
from vx.workspace.model import CacheSpec, TaskDef

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vx.workspace.model import Project, Workspace

BUILD = "build"


class ExcludeDeps(Record):
    """`--exclude-dependencies`: every edge (`all`), or only the tasks with these names."""

    all: bool = False
    names: frozenset[str] = frozenset()


def default_build() -> TaskDef:
    """The `build` a project gets when it declares none.

    A cached no-op keyed on every file of its project and on the builds below it, so a
    change in a package with no build of its own still reaches a dependant behind `^build`.
    """
    return TaskDef(
        name=BUILD,
        depends_on=(f"^{BUILD}",),
        cache_spec=CacheSpec(),
        default=True,
        resolved=MappingProxyType(
            {
                "dependsOn": [f"^{BUILD}"],
                "cache": {
                    "inputs": {"workspaceFiles": [], "env": [], "runtime": []},
                    "outputs": {"files": [], "workspaceFiles": []},
                },
            }
        ),
    )


class ProjectIndex:
    """Projects by name (`//` is the root project) and their tasks, default build included."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.by_name: dict[str, Project] = {p.name: p for p in ws.projects}
        self.root = ws.root_project
        self._default = default_build()

    def project(self, name: str) -> Project | None:
        """The project `name` spells, `//` included."""
        if name == ROOT:
            return self.root
        return self.by_name.get(name)

    def scoped(self, name: str) -> list[Project]:
        """The scoped packages `name` is the scope-less name of (`zod` for `@acme/zod`)."""
        if name.startswith("@") or "/" in name:
            return []
        tail = "/" + name
        return [p for n, p in self.by_name.items() if n.startswith("@") and n.endswith(tail)]

    def task(self, project: Project, name: str) -> TaskDef | None:
        """The task `name` of `project`: declared, or the default build when it declares none."""
        declared = project.tasks.get(name)
        if declared is not None:
            return declared
        return self._default if name == BUILD else None

    def ordering(self, name: str) -> tuple[str, ...]:
        """The package edges of `name` that always order tasks: all but the selection-only ones."""
        deps = self.ws.package_deps.get(name, ())
        weak = self.ws.selection_only.get(name)
        return tuple(d for d in deps if d not in weak) if weak else deps

    def linked(self, name: str) -> tuple[str, ...]:
        """Every package edge of `name`, the selection-only ones included."""
        return self.ws.package_deps.get(name, ())

    def declared_names(self) -> frozenset[str]:
        """Every task name some project declares (a default build is not declared)."""
        return frozenset(name for p in self.ws.projects for name in p.tasks)


def build_graph(
    ws: Workspace, roots: Iterable[TaskId], *, exclude: ExcludeDeps | None = None
) -> TaskGraph:
    """The graph of `roots` and everything their dependsOn reaches.

    A root may name the root project as `//`; the graph names every task by its project's
    name. Raises `UserError` for a spec that reaches no task, `ConfigError` for a malformed
    one, and `CycleError` naming every task on a cycle.
    """
    index = ProjectIndex(ws)
    if exclude is not None:
        _check_excluded_names(index, exclude.names)
    builder = _Builder(index)
    requested = [builder.add_root(tid) for tid in roots]
    builder.walk()
    return builder.freeze(requested, exclude)


class _Builder:
    """Walks dependsOn over dense slot numbers.

    `TaskId` hashing and ordering run through dataclass methods; working on slots and plain
    tuples and making each id once, at freeze time, keeps thousands of tasks within budget.
    """

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.slots: dict[tuple[str, str], int] = {}
        self.keys: list[tuple[str, str]] = []
        self.entries: list[tuple[Project, str, TaskDef]] = []
        self.edges: list[list[int]] = []
        # (from, to) slots `^name` reached only through a selection-only package edge.
        self.weak: list[tuple[int, int]] = []
        self._specs: dict[str, DepSpec] = {}

    def add_root(self, tid: TaskId) -> int:
        project = self.index.project(tid.project)
        task = self.index.task(project, tid.task) if project is not None else None
        if project is None or task is None:
            raise UserError(
                ErrorCode.UNKNOWN_TASK, f"{clip(str(tid))} is not a task of this workspace"
            )
        return self._add(project, tid.task, task)

    def walk(self) -> None:
        weak = bool(self.index.ws.selection_only)
        slot = 0
        while slot < len(self.entries):
            project, name, task = self.entries[slot]
            for i, text in enumerate(task.depends_on):
                spec = self._parse(project, name, i, text)
                for dep_project, dep_task in self._resolve(project, name, spec):
                    self.edges[slot].append(self._add(dep_project, spec.task, dep_task))
                if weak and spec.kind is DepKind.UPSTREAM:
                    for dep_project, dep_task in self._weak_upstream(project, spec.task):
                        self.weak.append((slot, self._add(dep_project, spec.task, dep_task)))
            slot += 1

    def settle(self, requested: list[int]) -> list[int]:
        """Keep each weak edge that closes no task cycle; the slots the roots still reach.

        A selection-only package edge orders a task only where following it cannot lead
        back: `a#build → ^build → b#build` gives way when b#build reaches a#build, while
        `a#test → ^build → b#build` stays. Taken in id order, each kept unless what is
        kept so far leads from its target back to its source; a cycle left is one of
        runtime or explicit edges. What only a dropped edge reached leaves the graph.
        """
        if not self.weak:
            return list(range(len(self.entries)))
        keys = self.keys
        kept = {slot: set(deps) for slot, deps in enumerate(self.edges)}
        weak = sorted(set(self.weak), key=lambda e: (keys[e[0]], keys[e[1]]))
        give_way(kept, [(src, dst) for src, dst in weak if dst not in kept[src]])
        self.edges = [list(kept[slot]) for slot in range(len(self.edges))]
        live = set(requested)
        todo = list(requested)
        while todo:
            for dep in self.edges[todo.pop()]:
                if dep not in live:
                    live.add(dep)
                    todo.append(dep)
        return sorted(live)

    def freeze(self, requested: list[int], exclude: ExcludeDeps | None) -> TaskGraph:
        entries = self.entries
        order = sorted(self.settle(requested), key=self.keys.__getitem__)
        rank = [0] * len(entries)
        for r, slot in enumerate(order):
            rank[slot] = r
        edges = [sorted(set(map(rank.__getitem__, self.edges[slot]))) for slot in order]
        tids = [TaskId(*self.keys[slot]) for slot in order]
        if len(algo.dense_order(edges)) < len(edges):
            deps_by_id = {tids[r]: [tids[d] for d in ds] for r, ds in enumerate(edges)}
            cycle = algo.find_cycle(deps_by_id)
            raise CycleError(tuple(str(t) for t in cycle), cycle_causes(self.index, cycle))
        ups: list[list[int]] = [[] for _ in edges]
        for r, ds in enumerate(edges):
            for d in ds:
                ups[d].append(r)
        nodes = [entries[slot] for slot in order]
        roots = {rank[slot] for slot in requested}
        excluded = _excluded(nodes, edges, roots, exclude) if exclude is not None else set()
        return TaskGraph(
            nodes=MappingProxyType(
                {tid: TaskNode(tid, p, t) for tid, (p, _, t) in zip(tids, nodes, strict=True)}
            ),
            deps=MappingProxyType(
                {tids[r]: tuple(map(tids.__getitem__, ds)) for r, ds in enumerate(edges)}
            ),
            dependents=MappingProxyType(
                {tids[r]: tuple(map(tids.__getitem__, us)) for r, us in enumerate(ups)}
            ),
            requested=frozenset(tids[r] for r in roots),
            excluded=frozenset(tids[r] for r in excluded),
        )

    def _add(self, project: Project, name: str, task: TaskDef) -> int:
        key = (project.name, name)
        slot = self.slots.get(key)
        if slot is None:
            slot = self.slots[key] = len(self.entries)
            self.keys.append(key)
            self.entries.append((project, name, task))
            self.edges.append([])
        return slot

    def _parse(self, project: Project, name: str, i: int, text: str) -> DepSpec:
        spec = self._specs.get(text)
        if spec is None:
            try:
                spec = parse_dep(text)
            except ValueError as e:
                pointer = f"tasks.{clip(name)}.dependsOn[{i}]"
                raise ConfigError(_config_path(project), str(e), pointer) from None
            self._specs[text] = spec
        return spec

    def _resolve(self, origin: Project, name: str, spec: DepSpec) -> list[tuple[Project, TaskDef]]:
        if spec.kind is DepKind.UPSTREAM:
            return self._upstream(origin, spec.task)
        if spec.project is None:
            project: Project | None = origin
        else:
            project = self.index.project(spec.project)
        if project is None:
            raise _bad_edge(origin, name, self._no_project(spec))
        task = self.index.task(project, spec.task)
        if task is None:
            raise _bad_edge(origin, name, _no_task(project, spec.task))
        return [(project, task)]

    def _weak_upstream(self, origin: Project, name: str) -> list[tuple[Project, TaskDef]]:
        """What `^name` reaches only through a selection-only package edge."""
        strong = {p.name for p, _ in self._upstream(origin, name)}
        every = self._upstream(origin, name, self.index.linked)
        return [(p, t) for p, t in every if p.name not in strong]

    def _upstream(
        self,
        origin: Project,
        name: str,
        follow: Callable[[str], tuple[str, ...]] | None = None,
    ) -> list[tuple[Project, TaskDef]]:
        """`^name`: the task in each package dependency; a config-less one passes it on."""
        ordering = follow or self.index.ordering
        seen = {origin.name}
        todo = list(ordering(origin.name))
        found: list[tuple[Project, TaskDef]] = []
        while todo:
            dep_name = todo.pop()
            if dep_name in seen:
                continue
            seen.add(dep_name)
            project = self.index.by_name.get(dep_name)
            if project is None:
                continue
            task = self.index.task(project, name)
            if task is not None:
                found.append((project, task))
            elif project.config is None:
                todo.extend(ordering(dep_name))
        return found

    def _no_project(self, spec: DepSpec) -> str:
        if spec.is_root:
            return f'"{spec}" names the root project, and this workspace\'s root is not a project'
        name = spec.project or ""
        names = sorted(self.index.by_name)
        guess = did_you_mean(name, names)
        tail = f"did you mean {clip(guess)}?" if guess else f"projects: {listing(names)}"
        return f'no project is named {clip(name)} (in "{clip(str(spec))}"); {tail}'


def _no_task(project: Project, name: str) -> str:
    tasks = sorted(project.tasks)
    guess = did_you_mean(name, tasks)
    if guess:
        tail = f"did you mean {clip(guess)}?"
    elif tasks:
        tail = f"{project.name}'s tasks: {listing(tasks)}"
    else:
        tail = f"{project.name} declares no tasks"
    return f'{project.name} has no task "{clip(name)}"; {tail}'


def _bad_edge(project: Project, name: str, why: str) -> UserError:
    where = f"{_config_path(project)}: tasks.{clip(name)}.dependsOn"
    return UserError(ErrorCode.UNKNOWN_TASK, f"{where}: {why}")


def _config_path(project: Project) -> str:
    return project.config.path if project.config is not None else project.rel_dir


def _check_excluded_names(index: ProjectIndex, names: frozenset[str]) -> None:
    declared = index.declared_names()
    for name in sorted(names - declared):
        guess = did_you_mean(name, declared)
        tail = f"did you mean {clip(guess)}?" if guess else f"tasks: {listing(sorted(declared))}"
        raise UserError(
            ErrorCode.USAGE,
            f'--exclude-dependencies: no project declares a task named "{clip(name)}"; {tail}',
        )


def _excluded(
    nodes: list[tuple[Project, str, TaskDef]],
    edges: list[list[int]],
    requested: set[int],
    exclude: ExcludeDeps,
) -> set[int]:
    """The tasks that stay in the graph for their keys but do not run.

    `all` keeps the requested tasks and, below a requested group, the members it stands for.
    Names keep whatever the requested tasks reach without passing a dropped task; a dropped
    task still orders what is above it after what is below it.
    """
    if exclude.all:
        kept = set(requested)
        groups = [r for r in requested if nodes[r][2].is_group]
        while groups:
            for dep in edges[groups.pop()]:
                if dep not in kept:
                    kept.add(dep)
                    if nodes[dep][2].is_group:
                        groups.append(dep)
    elif exclude.names:
        kept = set(requested)
        todo = list(requested)
        while todo:
            for dep in edges[todo.pop()]:
                if dep not in kept and nodes[dep][1] not in exclude.names:
                    kept.add(dep)
                    todo.append(dep)
    else:
        return set()
    return set(range(len(nodes))) - kept
