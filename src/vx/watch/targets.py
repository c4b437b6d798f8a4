"""What `vx watch` watches, read off a run's plan: projects, root files, member bases, imports.

The set is what a cycle can run: every project with a task in the plan, the projects of the
scope, and what their manifests link to, transitively. Plus the root (not recursively) for
the files that re-key every task or shape every run, the directory each `<dir>/*` package
glob names (members coming and going), and the files configs import from outside the watched
projects. When a task reads `workspaceFiles`, whose globs can name any file, one recursive
root watcher replaces the per-project ones.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.cache.inputs import WORKSPACE_FILES
from vx.graph.algo import closure
from vx.util.globs import compile_globs, has_magic, normalize
from vx.util.record import Record
from vx.watch.judge import PathRules, TaskFiles, rebase
from vx.watch.members import member_globs

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from vx.run.plan import RunPlan
    from vx.util.globs import Matcher
    from vx.watch.members import MemberGlobs
    from vx.workspace.model import Workspace

# Root files whose edit re-keys every task (the workspace fingerprint) or shapes every run.
ROOT_FILES = frozenset(
    {
        *WORKSPACE_FILES,
        ".gitignore",
        "package.json",
        "pyproject.toml",
        "vx.workspace.json",
        "vx.workspace.toml",
        "vx.workspace.py",
    }
)
# A file whose edit can change what is watched: re-read the set after the cycle it starts.
SHAPE_NAMES = frozenset(
    {
        "package.json",
        "pyproject.toml",
        "pnpm-workspace.yaml",
        ".gitignore",
        *(f"vx.{kind}.{ext}" for kind in ("config", "workspace") for ext in ("json", "toml", "py")),
    }
)


class Project(Record):
    """A project as the watcher sees it: its name and absolute directory."""

    name: str
    dir: str


class WatchSet(Record):
    """Everything one arm of the loop watches, and the path rules its events pass through.

    `wide` means one recursive root watcher (a task reads `workspaceFiles`, or no plan could
    be made); `wide_globs` are then the root-relative globs, besides project trees and root
    files, whose matches count (`None`: every path does). `workspace_imports` are the files
    the workspace config imported: loaded once per process, an edit to one needs a restart.
    `members` are the root's member globs, of any shape: where a package can be added.
    """

    root: str
    watched: tuple[Project, ...]
    projects: tuple[Project, ...]
    bases: tuple[str, ...]
    imports: frozenset[str]
    workspace_imports: frozenset[str]
    wide: bool
    wide_globs: Matcher | None
    rules: PathRules
    members: MemberGlobs | None = None

    def owner(self, path: str) -> Project | None:
        """The deepest project holding `path`, watched or not (nested projects own their own)."""
        best: Project | None = None
        for project in self.projects:
            if (path == project.dir or path.startswith(project.dir + os.sep)) and (
                best is None or len(project.dir) > len(best.dir)
            ):
                best = project
        return best


def cache_dirs(
    ws: Workspace, *, cwd: Path, flag: str | None, env: Mapping[str, str]
) -> tuple[str, ...]:
    """Every place this run's cache may resolve to inside the tree: flag, config, environment."""
    found = []
    if flag:
        found.append(os.path.normpath(os.path.join(cwd, flag)))
    if ws.config.cache_dir:
        found.append(os.path.normpath(os.path.join(ws.root, ws.config.cache_dir)))
    if env.get("VX_CACHE_DIR"):
        found.append(os.path.normpath(os.path.join(ws.root, env["VX_CACHE_DIR"])))
    return tuple(found)


def member_bases(root: Path) -> tuple[str, ...]:
    """The directory each `<dir>/*` package glob names; members appear and vanish there."""
    from vx.errors import UserError
    from vx.workspace.discover import declaration

    try:
        found = declaration(root)
    except UserError:
        return ()
    if found is None:
        return ()
    bases = []
    for pattern in found.patterns:
        body = normalize(pattern)
        head, _, last = body.rpartition("/")
        if pattern.startswith("!") or last != "*" or not head or has_magic(head):
            continue
        bases.append(os.path.join(root, head))
    return tuple(sorted(set(bases)))


def from_plan(plan: RunPlan, *, cache: Iterable[str]) -> WatchSet:
    """The set a cycle of `plan` can touch."""
    ws = plan.workspace
    root = str(ws.root)
    every = tuple(Project(p.name, str(p.dir)) for p in ws.projects)
    names = closure(ws.package_deps, {n.project.name for n in plan.nodes.values()})
    watched = tuple(p for p in every if p.name in names)
    tasks: list[TaskFiles] = []
    for node in plan.nodes.values():
        spec = node.task.cache_spec
        if spec is None:
            continue
        rel = node.project.rel_dir
        tasks.append(
            TaskFiles(
                outputs=rebase(rel, spec.outputs.files) + spec.outputs.workspace_files,
                inputs=rebase(rel, spec.inputs.files or ()) + spec.inputs.workspace_files,
            )
        )
    wide_globs = [
        g
        for p in ws.projects
        for t in p.tasks.values()
        if t.cache_spec is not None
        for g in t.cache_spec.inputs.workspace_files
        if not g.startswith("!")
    ]
    imports = {os.path.join(root, f) for p in ws.projects if p.config for f in p.config.imports}
    workspace_imports = frozenset(os.path.join(root, f) for f in ws.config.imports)
    rules = PathRules(
        root,
        cache_dirs=cache,
        tasks=tasks,
        project_dirs=[p.rel_dir for p in ws.projects],
    )
    return WatchSet(
        root=root,
        watched=watched,
        projects=every,
        bases=member_bases(ws.root),
        imports=frozenset(imports | workspace_imports),
        workspace_imports=workspace_imports,
        wide=bool(wide_globs),
        wide_globs=compile_globs(wide_globs) if wide_globs else None,
        rules=rules,
        members=member_globs(ws.root),
    )


def fallback(root: Path, *, cache: Iterable[str]) -> WatchSet:
    """No plan could be made (a config that does not load): watch the whole tree until one can."""
    return WatchSet(
        root=str(root),
        watched=(),
        projects=(),
        bases=member_bases(root),
        imports=frozenset(),
        workspace_imports=frozenset(),
        wide=True,
        wide_globs=None,
        rules=PathRules(str(root), cache_dirs=cache),
        members=member_globs(root),
    )
