"""The root tasks of an `--affected` run: what the change reaches, what the filters add, and the
notes when nothing is left (every one of them exits 0: a docs-only commit must not fail CI)."""

from __future__ import annotations

from collections import deque
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import AffectedReason
from vx.graph.algo import closure, invert
from vx.graph.build import build_graph
from vx.graph.select import ScopeKind, filter_scope, resolve_requests, selection_edges
from vx.ids import TaskId, is_task_id
from vx.selection.affected import reach, resolve_base
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.graph.build import ExcludeDeps
    from vx.graph.model import TaskGraph
    from vx.run.prepare import RunOptions
    from vx.selection.affected import Reach
    from vx.workspace.model import Project, TaskDef, Workspace

_NAMED = AffectedReason("named", "named as pkg#task")


class AffectedRoots(Record):
    """The requested tasks an `--affected` run keeps, why each was kept, and what to say."""

    roots: tuple[TaskId, ...]
    reasons: Mapping[TaskId, AffectedReason]
    notes: tuple[str, ...]


def affected_reach(
    ws: Workspace, affected: str | None, ci_bases: Sequence[str], env: Mapping[str, str]
) -> Reach:
    """The base resolved and the change seeded, as `vx run` and `vx show` both ask it."""
    base = resolve_base(ws, affected or "", ci_bases=ci_bases, env=env)
    return reach(ws, base, env=env)


def affected_projects(
    ws: Workspace, found: Reach, *, task: str | None, among: Iterable[str]
) -> frozenset[str]:
    """The projects `vx run [<task>] --affected` keeps, for `vx show --affected` to list.

    With no task, the run's candidates: the changed projects and every project building on
    them (`--filter "...[<base>]"`). With one, those of `among` whose task the run keeps.
    """
    if task is None:
        return closure(invert(selection_edges(ws)), found.candidates)
    roots = [TaskId(name, task) for name in among]
    if not roots:
        return frozenset()
    return frozenset(t.project for t in keep(build_graph(ws, roots), found, ws))


def affected_roots(
    ws: Workspace,
    options: RunOptions,
    words: Sequence[str],
    *,
    exclude: ExcludeDeps | None,
    env: Mapping[str, str],
) -> AffectedRoots:
    """Keep each requested task whose `dependsOn` closure holds a task the change seeded.

    A `pkg#task` runs whatever the diff; a `--filter` include adds its projects' tasks (the
    union), and a `!` exclude drops projects from both. A name no project declares is refused
    as a plain run refuses it, unless the diff touched nothing (then no name is checked).
    """
    found = affected_reach(ws, options.affected, options.ci_bases, env)
    anchored = [w for w in words if is_task_id(w)]
    bare = [w for w in words if not is_task_id(w)]
    reasons: dict[TaskId, AffectedReason] = {}
    if anchored:
        named = resolve_requests(ws, anchored, scope=None, scope_kind=ScopeKind.ALL)
        reasons.update(dict.fromkeys(named.roots, _NAMED))
    notes: list[str] = []
    allowed, selected = _filters(ws, options.filters, env)
    if not found.candidates:
        note = f"nothing affected since {found.ref}"
        if found.at_head:
            note += (
                f" — {found.ref} is the commit HEAD is on; to compare with another base pass"
                " --affected=origin/main or --affected=HEAD~1"
            )
        if reasons:
            note += f" — running {', '.join(str(t) for t in sorted(reasons))} only"
        notes.append(note)
        bare = []
    if bare:
        every = resolve_requests(ws, bare, scope=None, scope_kind=ScopeKind.ALL)
        graph = build_graph(ws, every.roots, exclude=exclude)
        kept = {
            t: why
            for t, why in keep(graph, found, ws).items()
            if allowed is None or t.project in allowed
        }
        for tid, why in kept.items():
            reasons.setdefault(tid, why)
        if selected is not None:
            chosen = resolve_requests(ws, bare, scope=selected, scope_kind=ScopeKind.AFFECTED)
            for tid in chosen.roots:
                reasons.setdefault(tid, AffectedReason("selected", "selected by --filter"))
        reached = frozenset(t.task for t in kept)
        notes.extend(_unreached(ws, bare, found, reached, others_run=bool(reasons)))
    ordered = tuple(sorted(reasons))
    return AffectedRoots(ordered, MappingProxyType(reasons), tuple(notes))


def _filters(
    ws: Workspace, texts: Sequence[str], env: Mapping[str, str]
) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """What `--filter` values do beside `--affected`: the projects the `!` excludes leave (None:
    every one), and the projects the includes select (None: no include)."""
    if not texts:
        return None, None
    from vx.selection.filter import parse_filters

    excludes = [t for t, sel in zip(texts, parse_filters(texts), strict=True) if sel.exclude]
    allowed = filter_scope(ws, excludes, env=env).projects if excludes else None
    selected = filter_scope(ws, texts, env=env).projects if len(excludes) < len(texts) else None
    return allowed, selected


def _unreached(
    ws: Workspace, names: Sequence[str], found: Reach, reached: frozenset[str], *, others_run: bool
) -> list[str]:
    """The notes for bare names the change kept no task of: declared by no project it touched,
    or declared there but no such task's inputs or dependencies changed."""
    touched = found.candidates
    undeclared: list[str] = []
    missed: list[str] = []
    for name in dict.fromkeys(names):
        if name in reached:
            continue
        if any(p.name in touched and name in p.tasks for p in ws.projects):
            missed.append(name)
        else:
            undeclared.append(name)
    notes: list[str] = []
    if undeclared:
        notes.append(f"No affected project declares task(s): {', '.join(undeclared)}.")
    if missed:
        tasks = f"{', '.join(missed)} task{'s' if len(missed) > 1 else ''}"
        if others_run:  # other requested tasks do run: "nothing affected" would be untrue
            notes.append(f"The change reaches no {tasks}; the other requested tasks run.")
        else:
            notes.append(f"Nothing affected: the change reaches no {tasks}.")
    return notes


def keep(graph: TaskGraph, found: Reach, ws: Workspace) -> dict[TaskId, AffectedReason]:
    """The requested tasks whose `dependsOn` closure holds a seeded task, with the reason: the
    nearest seed, breadth first, and the chain to it (`via`, nearest first).

    A `^name` edge that passed through a package with no config (so no such task) reaches a
    change in that package too, as the `package` reason: the graph holds no node for it.

    Each task's own reason is judged once, and a walk enters only tasks from which one is
    reachable: walking every root's whole closure made ten thousand packages quadratic. The
    tasks left out reach no reason, so the walk's order and its chains are unchanged.
    """
    by_name = {p.name: p for p in ws.projects}
    reasons: dict[TaskId, AffectedReason] = {}
    for tid, node in graph.nodes.items():
        own = found.seed(tid, node.task) or _passed_through(
            ws, by_name, node.project.name, node.task, found
        )
        if own is not None:
            reasons[tid] = own
    leads = graph.downstream(reasons)
    kept: dict[TaskId, AffectedReason] = {}
    for root in sorted(graph.requested & leads):
        parent: dict[TaskId, TaskId | None] = {root: None}
        todo = deque([root])
        while todo:
            tid = todo.popleft()
            why = reasons.get(tid)
            if why is not None:
                chain: list[TaskId] = []
                at: TaskId | None = tid
                while at is not None and at != root:
                    chain.append(at)
                    at = parent[at]
                kept[root] = why._replace(via=tuple(reversed(chain)))
                break
            for dep in graph.deps.get(tid, ()):
                if dep in leads and dep not in parent:
                    parent[dep] = tid
                    todo.append(dep)
    return kept


def _passed_through(
    ws: Workspace, by_name: Mapping[str, Project], project: str, task: TaskDef, found: Reach
) -> AffectedReason | None:
    """The first changed config-less package a `^name` edge of the task passes on through."""
    if not found.whole:
        return None
    from vx.graph.build import BUILD

    for text in task.depends_on:
        if not text.startswith("^"):
            continue
        name = text[1:]
        seen = {project}
        todo = list(ws.package_deps.get(project, ()))
        while todo:
            dep = todo.pop(0)
            at = by_name.get(dep)
            if dep in seen or at is None:
                continue
            seen.add(dep)
            if name in at.tasks or name == BUILD or at.config is not None:
                continue
            if dep in found.whole:
                return AffectedReason("package", f"{found.whole[dep]}, passed by ^{name}")
            todo.extend(ws.package_deps.get(dep, ()))
    return None
