"""`--affected`: which base to diff from, which tasks a change seeds, which requested tasks it
reaches along `dependsOn`, and why each one was kept.

A change seeds the tasks whose inputs it touches; a whole project is seeded when vx cannot
tell which of its tasks a change re-keys (its manifest or config, a path no cached task
declares, a submodule, a lockfile, a dropped edge, a new project below it, a config import).
A requested task is kept when its `dependsOn` closure holds a seeded task.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vx import git
from vx.errors import ErrorCode, UserError
from vx.events import AffectedReason
from vx.ids import ROOT, TaskId
from vx.lockfiles.moved import moved_projects
from vx.lockfiles.read import LOCKFILES, NEEDS_MANIFESTS
from vx.selection.changes import BaseRef, Changes, changes_since, check_ref
from vx.util.globs import compile_globs
from vx.workspace.discover import member_manifest
from vx.workspace.manifests import PACKAGE_JSON, PYPROJECT, read_package_json, read_pyproject
from vx.workspace.model import Manager, Project
from vx.workspace.packages import package_edges

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.workspace.manifests import Manifest
    from vx.workspace.model import TaskDef, Workspace

# Root files folded into every task's key: a change there may re-key anything.
MANAGER_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "bun.lockb",
        "uv.lock",
        "pnpm-workspace.yaml",
        ".yarnrc.yml",
        ".npmrc",
        "bunfig.toml",
    }
)
# The lockfiles keyed per project: a change selects the projects whose closure moved.
KEYED_LOCKFILES = frozenset(LOCKFILES) - {"bun.lockb"}
_DEFAULT_BASES = ("origin/main", "origin/master", "main", "master")
_FLAG = "--affected"


@dataclass(frozen=True, slots=True)
class Reach:
    """What a change since `ref` seeds: whole projects and single tasks, each with its reason.

    `at_head` is True when the base is the commit HEAD is on, so nothing committed differs.
    """

    ref: str
    at_head: bool
    paths: frozenset[str]
    whole: Mapping[str, str]
    seeds: Mapping[TaskId, AffectedReason]

    @property
    def candidates(self) -> frozenset[str]:
        """The projects the change touched: whole ones and those holding a seeded task."""
        return frozenset(self.whole) | {t.project for t in self.seeds}

    def seed(self, tid: TaskId, task: TaskDef) -> AffectedReason | None:
        """Why the change seeds `tid` itself, None when it does not (a group seeds nothing)."""
        if task.is_group:
            return None
        found = self.seeds.get(tid)
        if found is None and tid.project in self.whole:
            return AffectedReason("project", self.whole[tid.project])
        return found


def default_bases(configured: str | None, ci_bases: Sequence[str]) -> list[str]:
    """Every ref a bare `--affected` may try, in the order `resolve_base` tries them."""
    if configured:
        return [configured]
    return [*ci_bases, "origin/HEAD", *_DEFAULT_BASES, "HEAD~1"]


def resolve_base(
    ws: Workspace, given: str, *, ci_bases: Sequence[str], env: Mapping[str, str]
) -> BaseRef:
    """The base `--affected[=<given>]` diffs from.

    An empty `given` takes the workspace's `affectedBase`, else (reading turbo.json live)
    `TURBO_SCM_BASE`, as `turbo --affected` does, else the CI's (`ci_bases`: the
    pull request's base or the push's `before`, first that resolves; none resolving is
    refused, never replaced by a guess), else `origin/HEAD`, else
    the first of origin/main, origin/master, main, master that is not HEAD itself, else
    HEAD~1; a clone with none of them says why instead of failing on a ref nobody typed.
    """
    if given:  # a blank value is refused by name, never read as the default
        return check_ref(given, what=f"{_FLAG}={given}")
    if ws.config.affected_base:
        return check_ref(ws.config.affected_base, what=f"affectedBase in {ws.config.path}")
    scm_base = env.get("TURBO_SCM_BASE", "").strip()
    if ws.config.tasks_from == "turbo" and scm_base:
        return check_ref(scm_base, what=f"TURBO_SCM_BASE={scm_base}")
    root = ws.root
    head = git.resolve_commit(root, "HEAD", env=env)  # no commit yet: says so, in git's words
    for ref in ci_bases:
        if git.try_commit(root, ref, env=env) is not None:
            return check_ref(ref, what=f"{_FLAG} (the CI's base {ref})")
    if ci_bases:  # the CI named a base this clone never fetched: any other base is a guess
        shallow = " (a shallow clone)" if git.is_shallow(root, env=env) else ""
        raise UserError(
            ErrorCode.USAGE,
            f"{_FLAG}: the CI's base {' or '.join(ci_bases)} is not in this clone{shallow}"
            f" — fetch it (git fetch origin {ci_bases[-1]}; in CI: fetch-depth: 0),"
            f" or name one: {_FLAG}=<ref>",
        )
    if git.try_commit(root, "origin/HEAD", env=env) is not None:
        return BaseRef("origin/HEAD")
    for ref in _DEFAULT_BASES:
        commit = git.try_commit(root, ref, env=env)
        if commit is not None and commit != head:
            return BaseRef(ref)
    if git.try_commit(root, "HEAD~1", env=env) is not None:
        return BaseRef("HEAD~1")
    if git.is_shallow(root, env=env):
        why = (
            "this clone is shallow (a CI checkout at fetch-depth: 1?) — fetch the history"
            " (git fetch --unshallow; in CI: fetch-depth: 0)"
        )
    else:
        why = "HEAD is the repository's first commit"
    raise UserError(
        ErrorCode.USAGE,
        f"{_FLAG} has no base here: no origin/HEAD, main or master, and no HEAD~1 — {why},"
        f" or name one: {_FLAG}=<ref>",
    )


def _is_package_root(ws: Workspace) -> bool:
    """The root project is a workspace package: uv's root with a `[project]` name."""
    root = ws.root_project
    return root is not None and ws.manager is Manager.UV and root.name != ROOT


def reach(ws: Workspace, base: BaseRef, *, env: Mapping[str, str]) -> Reach:
    """Diff from `base` and seed what the changed paths touch."""
    changes = changes_since(ws.root, base, env=env)
    at_head = changes.base == git.resolve_commit(ws.root, "HEAD", env=env)
    seeder = _Seeder(ws)
    seeder.paths(changes, env)
    seeder.edges(changes, env)
    return Reach(
        base.ref,
        at_head,
        changes.paths,
        MappingProxyType(dict(seeder.whole)),
        MappingProxyType(dict(seeder.seeds)),
    )


class _Seeder:
    """Walks the changed paths once, marking whole projects and seeded tasks."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.whole: dict[str, str] = {}
        self.seeds: dict[TaskId, AffectedReason] = {}
        self.by_name = {p.name: p for p in ws.projects}
        self.prefixes: dict[str, Project] = {}
        real_root = os.path.realpath(ws.root)
        for project in ws.projects:
            if project.is_root:
                continue
            self.prefixes[project.rel_dir] = project
            real = os.path.realpath(project.dir)
            if real.startswith(real_root + os.sep):
                rel = os.path.relpath(real, real_root).replace(os.sep, "/")
                self.prefixes.setdefault(rel, project)
        self.root_project = next((p for p in ws.projects if p.is_root), None)

    def mark(self, project: str, change: str) -> None:
        self.whole.setdefault(project, change)

    def everything(self, change: str) -> None:
        for project in self.ws.projects:
            self.mark(project.name, change)

    def owner(self, path: str) -> tuple[Project, str] | None:
        """The deepest project holding `path`, and the path relative to its directory."""
        at = path
        while at:
            project = self.prefixes.get(at)
            if project is not None:
                return project, path[len(at) + 1 :]
            at = at.rpartition("/")[0]
        if self.root_project is not None:
            return self.root_project, path
        return None

    def paths(self, changes: Changes, env: Mapping[str, str]) -> None:
        ws_config = self.ws.config.path
        importers: dict[str, list[str]] = {}
        for project in self.ws.projects:
            for file in project.config.imports if project.config else ():
                importers.setdefault(file, []).append(project.name)
        for path in sorted(changes.paths):
            if path in changes.repos:
                self.repository(path)
                continue
            if path in KEYED_LOCKFILES:
                self.lockfile(path, changes.base, env)
                continue
            if path in MANAGER_FILES:
                self.everything(f"{path} changed (a lockfile or package-manager file)")
                continue
            if path == ws_config or path in self.ws.config.imports:
                self.everything(f"{path} changed (the workspace config)")
                continue
            for name in importers.get(path, ()):
                self.mark(name, f"{path} changed (its config imports it)")
            self.workspace_files(path)
            found = self.owner(path)
            if found is not None:
                self.file(found[0], found[1], path)

    def lockfile(self, path: str, base: str, env: Mapping[str, str]) -> None:
        """A lockfile keyed per project: the projects whose closure moved between the base and
        the working tree; everything when either side cannot be read, saying why."""
        try:
            now: bytes | None = (self.ws.root / path).read_bytes()
        except OSError:
            now = None
        old = git.show_file(self.ws.root, base, path, env=env)
        manifests = None
        if path in NEEDS_MANIFESTS:
            manifests = _base_documents(self.ws, base, env)
        found = moved_projects(self.ws, path, old, now, base=base[:12], old_manifests=manifests)
        if isinstance(found, str):
            self.everything(found)
            return
        for name, why in found.items():
            self.mark(name, why)

    def repository(self, path: str) -> None:
        """A submodule or embedded repository: every project in it, and the one holding it."""
        change = f"{path} changed (a repository inside the project)"
        for prefix, project in self.prefixes.items():
            if prefix.startswith(path + "/"):
                self.mark(project.name, change)
        found = self.owner(path)
        if found is not None:
            self.mark(found[0].name, change)

    def workspace_files(self, path: str) -> None:
        """A root path another task declares (`workspaceFiles`) seeds that task."""
        for project in self.ws.projects:
            for task in project.tasks.values():
                spec = task.cache_spec
                if spec is None or not spec.inputs.workspace_files or task.is_group:
                    continue
                if compile_globs(spec.inputs.workspace_files).match(path):
                    tid = TaskId(project.name, task.name)
                    self.seeds.setdefault(
                        tid, AffectedReason("input", f"{path} changed (an input)")
                    )

    def file(self, project: Project, rel: str, path: str) -> None:
        """A path in `project`: the tasks whose inputs read it, or the whole project."""
        if project.manifest == path or rel.startswith("vx.config."):
            self.mark(project.name, f"{path} changed (in its project)")
            return
        declared = False
        for task in project.tasks.values():
            if task.is_group:
                continue
            tid = TaskId(project.name, task.name)
            spec = task.cache_spec
            if spec is None:
                self.seeds.setdefault(
                    tid, AffectedReason("project", f"{path} changed (in its project)")
                )
                continue
            files = spec.inputs.files
            if files is None:
                reads = not compile_globs(spec.outputs.files).match(rel)
            else:
                reads = compile_globs(files).match(rel)
            if reads:
                declared = True
                self.seeds.setdefault(tid, AffectedReason("input", f"{path} changed (an input)"))
        if not declared:
            self.mark(project.name, f"{path} changed (in its project)")

    def edges(self, changes: Changes, env: Mapping[str, str]) -> None:
        """Manifests as the base had them: a dropped edge selects its dependent, a workspace
        edit selects everything, a new project selects the one holding it."""
        file = member_manifest(self.ws.manager)
        manifests = sorted(p for p in changes.paths if p == file or p.endswith("/" + file))
        if not manifests:
            return
        at_base = _base_manifests(self.ws.root, changes.base, manifests, env)
        root_manifest = at_base.pop(file, None)
        if file in manifests:  # the root manifest's member list: npm's "workspaces", uv's
            now = _read_manifest(self.ws.root / file, file)
            members = root_manifest.workspaces if root_manifest else None
            if (now.workspaces if now else None) != members:
                self.everything(f"{file} changed (the workspace's members)")
        # A root that a manifest names (uv's root `[project]`) is a package like the members:
        # its edges count, and its manifest at the base says what they were.
        named = self.ws.root_project if _is_package_root(self.ws) else None
        projects: dict[str, Project] = {
            p.rel_dir: p for p in self.ws.projects if not p.is_root or p is named
        }
        if named is not None and root_manifest is not None and root_manifest.name:
            projects[named.rel_dir] = Project(
                name=root_manifest.name,
                dir=self.ws.root,
                rel_dir=named.rel_dir,
                manifest=file,
                version=root_manifest.version,
                dependencies=root_manifest.dependencies,
            )
        for path in manifests:
            rel_dir = path.rpartition("/")[0]
            old = at_base.get(path)
            current = projects.get(rel_dir)
            if old is None or old.name is None:
                if current is not None:
                    self.new_project(current, path)
                    del projects[rel_dir]
                continue
            if current is None or current.name != old.name:
                self.removed(old.name, path)
            projects[rel_dir] = Project(
                name=old.name,
                dir=self.ws.root / rel_dir,
                rel_dir=rel_dir,
                manifest=path,
                version=old.version,
                dependencies=old.dependencies,
            )
        then = package_edges(list(projects.values()), self.ws.manager)
        dirs_then = {p.name: p.rel_dir for p in projects.values()}
        name_then = {p.rel_dir: p.name for p in projects.values()}
        dirs_now = {p.name: p.rel_dir for p in self.ws.projects}
        for project in self.ws.projects:
            if project.is_root and project is not named:
                continue
            before = {dirs_then[n] for n in then.get(name_then.get(project.rel_dir, ""), ())}
            after = {dirs_now[n] for n in self.ws.package_deps.get(project.name, ())}
            if before != after:
                self.mark(project.name, f"{project.manifest} changed (its workspace edges moved)")
                dropped = sorted(before - after)
                if dropped:
                    self.whole[project.name] = f"an edge to {', '.join(dropped)} was dropped"

    def new_project(self, project: Project, path: str) -> None:
        parent = self.owner(project.rel_dir.rpartition("/")[0]) if "/" in project.rel_dir else None
        holder = parent[0] if parent else self.root_project
        if holder is not None and holder.name != project.name:
            self.mark(holder.name, f"{path} changed (a new project below it)")

    def removed(self, name: str, path: str) -> None:
        """A package gone or renamed: dependents whose dependsOn named it lose that edge."""
        for project in self.ws.projects:
            for task in project.tasks.values():
                if any(text.partition("#")[0] == name for text in task.depends_on):
                    self.mark(project.name, f"{path} changed ({name} is gone)")
                    break


def _base_documents(
    ws: Workspace, commit: str, env: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Each project's package.json document as `commit` held it, by directory, and the root's
    (its toolchain) even when it is no project."""
    out: dict[str, dict[str, Any]] = {}
    for rel_dir in dict.fromkeys([".", *(p.rel_dir for p in ws.projects)]):
        path = PACKAGE_JSON if rel_dir == "." else f"{rel_dir}/{PACKAGE_JSON}"
        data = git.show_file(ws.root, commit, path, env=env)
        try:
            doc = json.loads(data or b"")
        except ValueError:
            continue
        if isinstance(doc, dict):
            out[rel_dir] = doc
    return out


def _base_manifests(
    root: Path, commit: str, paths: Sequence[str], env: Mapping[str, str]
) -> dict[str, Manifest]:
    """Each manifest as `commit` held it, parsed; one absent or unreadable there is left out."""
    found: dict[str, Manifest] = {}
    with tempfile.TemporaryDirectory(prefix="vx-base-") as scratch:
        for path in paths:
            data = git.show_file(root, commit, path, env=env)
            if data is None:
                continue
            name = path.rpartition("/")[2]
            copy = Path(scratch) / name
            copy.write_bytes(data)
            manifest = _read_manifest(copy, path)
            if manifest is not None:
                found[path] = manifest
    return found


def _read_manifest(path: Path, shown: str) -> Manifest | None:
    """A manifest, or None when it is not there or does not parse (the base may hold anything)."""
    if not path.is_file():
        return None
    try:
        return (
            read_pyproject(path, shown)
            if path.name == PYPROJECT
            else read_package_json(path, shown)
        )
    except UserError:
        return None
