"""Requested task names → root task ids; what forwarded args reach; what a group surfaces."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.graph.build import ProjectIndex
from vx.graph.deps import DepKind, parse_dep
from vx.ids import ROOT, TaskId, is_task_id
from vx.util.fuzzy import did_you_mean, listing
from vx.util.record import Record
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.graph.model import TaskGraph
    from vx.workspace.model import Workspace

LISTED = 12


class ScopeKind(StrEnum):
    """What chose the projects a bare task name is looked up in; it shapes the refusals."""

    CWD = "cwd"  # the project holding the working directory
    FILTER = "filter"  # --filter patterns
    ALL = "all"  # --all, or a whole workspace
    AFFECTED = "affected"  # a git diff (--affected, a `[ref]` filter)


class Selection(Record):
    """The tasks a request names.

    `undeclared` lists bare names some project declares but none in a diff-chosen scope:
    not an error (what changed decides where a name lives), and the caller may say so.
    """

    roots: tuple[TaskId, ...]
    requested: frozenset[TaskId]
    undeclared: tuple[str, ...] = ()


class FilterScope(Record):
    """The projects `--filter` values select; `by_ref` when a `[<ref>]` (a git diff) chose them."""

    projects: frozenset[str]
    by_ref: bool
    notes: tuple[str, ...] = ()


def filter_scope(ws: Workspace, texts: Sequence[str], *, env: Mapping[str, str]) -> FilterScope:
    """Evaluate `--filter` values over the package graph and the cross-project dependsOn edges.

    Each ref is asked of git once, however many filters name it.
    """
    from vx.selection.changes import changed_projects, changes_since, check_ref
    from vx.selection.filter import evaluate, parse_filters

    expr = parse_filters(texts)
    seen: dict[str, frozenset[str]] = {}

    def changed(ref: str) -> frozenset[str]:
        if ref not in seen:
            base = check_ref(ref, what=f'--filter "[{ref}]"')
            seen[ref] = changed_projects(ws, changes_since(ws.root, base, env=env).paths)
        return seen[ref]

    result = evaluate(ws, expr, edges=selection_edges(ws), changed=changed)
    by_ref = any(s.ref is not None for s in expr if not s.exclude)
    return FilterScope(result.projects, by_ref, result.notes)


def selection_edges(ws: Workspace) -> Mapping[str, tuple[str, ...]]:
    """Project → the projects it builds on: its manifest's workspace dependencies, and every
    project a `pkg#task` or `//#task` entry of its dependsOn names, as the task graph sees them.
    """
    index = ProjectIndex(ws)
    edges: dict[str, set[str]] = {p.name: set(ws.package_deps.get(p.name, ())) for p in ws.projects}
    for project in ws.projects:
        for task in project.tasks.values():
            for text in task.depends_on:
                try:
                    spec = parse_dep(text)
                except ValueError:
                    continue  # the graph builder refuses it, naming the file, if a run reaches it
                if spec.kind is not DepKind.ANCHORED or spec.project is None:
                    continue
                target = index.project(spec.project)
                if target is not None and target.name != project.name:
                    edges[project.name].add(target.name)
    return {name: tuple(sorted(deps)) for name, deps in edges.items()}


def resolve_requests(
    ws: Workspace,
    words: Iterable[str],
    *,
    scope: frozenset[str] | None,
    scope_kind: ScopeKind,
    verb: str = "vx run",
) -> Selection:
    """Resolve `build`, `pkg#task` and `//#task` words against the workspace.

    A bare name selects that task in every project of `scope` (None: every project) that
    declares it; a `pkg#task` ignores the scope. Every word must resolve somewhere, else one
    `UserError(VX_E_UNKNOWN_TASK)` line names all that did not, with a hint for each.
    """
    index = ProjectIndex(ws)
    declarers: dict[str, list[str]] = {}
    for project in ws.projects:
        for name in project.tasks:
            declarers.setdefault(name, []).append(project.name)
    roots: set[TaskId] = set()
    undeclared: list[str] = []
    missing: list[str] = []
    for word in dict.fromkeys(words):
        if is_task_id(word):
            tid = _anchored(index, word, verb)
            if tid is None:
                missing.append(word)
            else:
                roots.add(tid)
            continue
        here = [p for p in declarers.get(word, ()) if scope is None or p in scope]
        if here:
            roots.update(TaskId(p, word) for p in here)
        elif word in declarers and scope_kind is ScopeKind.AFFECTED:
            undeclared.append(word)
        else:
            missing.append(word)
    if missing:
        hints = _Hints(index, declarers, scope_kind, several=len(missing) > 1, scope=scope)
        raise UserError(ErrorCode.UNKNOWN_TASK, hints.message(verb, missing))
    ordered = tuple(sorted(roots))
    return Selection(ordered, frozenset(ordered), tuple(undeclared))


def _anchored(index: ProjectIndex, word: str, verb: str) -> TaskId | None:
    try:
        tid = TaskId.parse(word)
    except ValueError:
        raise UserError(
            ErrorCode.USAGE,
            f'{verb}: "{clip(word)}" names no task: write TASK, PKG#TASK or //#TASK',
        ) from None
    project = index.project(tid.project)
    if project is None and len(tails := index.scoped(tid.project)) == 1:
        project = tails[0]  # a scope-less name stands for the one package that carries it
    if project is None or tid.task not in project.tasks:
        return None
    return TaskId(project.name, tid.task)


class _Hints:
    """Builds the one-line refusal for names that resolved nowhere."""

    def __init__(
        self,
        index: ProjectIndex,
        declarers: dict[str, list[str]],
        scope_kind: ScopeKind,
        *,
        several: bool,
        scope: frozenset[str] | None = None,
    ) -> None:
        self.index = index
        self.declarers = declarers
        self.scope_kind = scope_kind
        self.several = several
        self.scope = scope

    def message(self, verb: str, missing: Sequence[str]) -> str:
        parts = [f"{verb}: no projects declare task(s): {', '.join(map(clip, missing))}."]
        scoped = self.scope_kind in (ScopeKind.CWD, ScopeKind.FILTER)
        outside = [w for w in missing if scoped and w in self.declarers]
        if outside:
            widen = "widen the filter" if self.scope_kind is ScopeKind.FILTER else "pass --all"
            parts.append(
                f"Only projects outside the selection declare {', '.join(map(clip, outside))}"
                f" — {widen}, or name one as pkg#task."
            )
        for word in missing:
            if word in outside:
                continue
            hint = self._anchored(word) if is_task_id(word) else self._bare(word)
            if hint not in parts:
                parts.append(hint)
        unadopted = self._unadopted(missing)
        if unadopted is not None and unadopted not in parts:
            parts.append(unadopted)
        return " ".join(parts)

    def _unadopted(self, missing: Sequence[str]) -> str | None:
        """The working directory's package runs these names as package.json scripts but has
        no vx.config: the way in is `vx init`, not another task name. A workspace with no
        config at all is told so by `_bare`."""
        if self.scope_kind is not ScopeKind.CWD or self.scope is None or len(self.scope) != 1:
            return None
        if not any(p.config for p in self.index.ws.projects):
            return None
        project = self.index.project(next(iter(self.scope)))
        if project is None or project.config is not None:
            return None
        from vx.adopt.init_runner import adoption_advice
        from vx.foreign.driver import read_scripts

        scripts = read_scripts(self.index.ws.root, project.rel_dir)
        named = [w for w in missing if not is_task_id(w) and w in scripts]
        if not named:
            return None
        return (
            f"{clip(project.name)} has package.json script(s) {', '.join(map(clip, named))} but"
            f" no vx.config — {adoption_advice(self.index.ws.root)}."
        )

    def _guess(self, word: str, guess: str) -> str:
        word, guess = clip(word), clip(guess)
        return f"Did you mean {guess} (for {word})?" if self.several else f"Did you mean {guess}?"

    def _bare(self, word: str) -> str:
        nx = self._nx_spelling(word)
        if nx is not None:
            return self._guess(word, nx)
        guess = did_you_mean(word, self.declarers)
        if guess is not None:
            return self._guess(word, guess)
        if not any(p.config for p in self.index.ws.projects):
            unlisted = self._unlisted_members()
            if unlisted:
                return unlisted
            from vx.adopt.init_runner import adoption_advice

            return f"No package declares a vx.config — {adoption_advice(self.index.ws.root)}."
        if not self.declarers:
            return "No project declares a task: add one under tasks in a vx.config, or run vx init."
        return f"Tasks: {listing(sorted(self.declarers), LISTED)}."

    def _unlisted_members(self) -> str | None:
        """A one-package root with packages below it that no workspace list names: the fix
        is to list them, not to write a config for the root."""
        from vx.adopt.init_root import unreached
        from vx.workspace.model import Manager

        ws = self.index.ws
        if ws.manager is not Manager.SINGLE:
            return None
        found = unreached(ws.root)
        return f"{found[0]}." if found else None

    def _nx_spelling(self, word: str) -> str | None:
        """Nx writes `web:build` for `web#build`; a target may carry `:configuration` after it."""
        return nx_spelling(self.index, word)

    def _anchored(self, word: str) -> str:
        tid = TaskId.parse(word)
        guess = did_you_mean(word, self._specs())
        if guess is not None:
            return self._guess(word, guess)
        project = self.index.project(tid.project)
        tails = self.index.scoped(tid.project) if project is None else []
        if len(tails) == 1:  # `lib-a` stands for its one scoped package, as `lib-a#build` does
            project = tails[0]
        if len(tails) > 1:
            specs = listing(sorted(f"{p.name}#{tid.task}" for p in tails), LISTED)
            return f"Did you mean one of {specs}?"
        if project is None:
            names = listing(sorted(self.index.by_name), LISTED)
            if tid.project == ROOT:
                return f"The workspace root is not a project; projects: {names}."
            return f"No project is named {clip(tid.project)}; projects: {names}."
        if not project.tasks:
            return f"{clip(tid.project)} declares no tasks."
        return f"{clip(tid.project)}'s tasks: {listing(sorted(project.tasks), LISTED)}."

    def _specs(self) -> list[str]:
        specs = [f"{p}#{t}" for t, ps in self.declarers.items() for p in ps]
        root = self.index.root
        if root is not None and root.name != ROOT:
            specs.extend(f"{ROOT}#{t}" for t in root.tasks)
        return specs


def nx_spelling(index: ProjectIndex, word: str) -> str | None:
    """`web#build` for Nx's `web:build` when web declares build (a `:configuration` after the
    target is dropped); a scope-less project name stands for its one scoped package."""
    name, sep, target = word.partition(":")
    if not sep:
        return None
    project = index.project(name)
    if project is None and len(tails := index.scoped(name)) == 1:
        project = tails[0]
    if project is None:
        return None
    for task in (target, target.partition(":")[0]):
        if task in project.tasks:
            return f"{project.name}#{task}"
    return None


def forward_targets(graph: TaskGraph, args: Sequence[str]) -> frozenset[TaskId]:
    """The requested tasks that take the args after `--`: those with a command.

    Args that no requested task would hear are refused rather than dropped in silence.
    """
    targets = frozenset(tid for tid in graph.requested if not graph.is_group(tid))
    if args and not targets:
        groups = sorted(graph.requested)
        what = "is a group" if len(groups) == 1 else "are groups"
        ids = ", ".join(str(t) for t in groups)
        raise UserError(
            ErrorCode.USAGE, f"args after `--` reach no task: {ids} {what} (no command)"
        )
    return targets


def surfaced_tasks(graph: TaskGraph) -> frozenset[TaskId]:
    """The tasks a run shows as requested: a requested group shows the real tasks it stands for.

    The walk descends through nested groups of the same project and stops at the first real
    task on each path; another project's tasks and excluded tasks are never surfaced.
    """
    shown: set[TaskId] = set()
    seen: set[TaskId] = set()
    todo = sorted(graph.requested)
    while todo:
        tid = todo.pop()
        if tid in seen:
            continue
        seen.add(tid)
        if not graph.is_group(tid):
            shown.add(tid)
            continue
        todo.extend(
            dep
            for dep in graph.deps[tid]
            if dep.project == tid.project and dep not in graph.excluded
        )
    return frozenset(shown)
