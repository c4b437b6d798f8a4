"""Assembling a Workspace: discovery, manifests, configs and package edges, frozen in one value."""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.ids import ROOT
from vx.workspace.config_load import load_project_config, load_workspace_config
from vx.workspace.cycles import selection_only
from vx.workspace.discover import find_root, member_manifest
from vx.workspace.manifests import (
    PACKAGE_JSON,
    PYPROJECT,
    normalize_python_name,
    read_package_json,
    read_pyproject,
)
from vx.workspace.model import Manager, Project, Workspace
from vx.workspace.packages import package_links
from vx.workspace.task_defaults import root_takes_tasks, sharing, with_workspace_tasks

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from vx.foreign.driver import LiveRead
    from vx.workspace.config_load import ParsedConfigs
    from vx.workspace.discover import Discovery
    from vx.workspace.manifests import Manifest
    from vx.workspace.model import ProjectConfig
    from vx.workspace.task_defaults import ConfigReader

    ConfigSource = Callable[[Path, Path], "ProjectConfig | None"]
    """(project dir, workspace root) → its config: evaluated live, or (`--frozen`) locked."""


def _live(
    directory: Path, root: Path, /, *, shared: Mapping[str, object] = MappingProxyType({})
) -> ProjectConfig | None:
    return load_project_config(directory, root=root, shared=shared)


def _live_once() -> ConfigReader:
    """`_live` for one workspace load: each distinct config text is validated once."""
    parsed: ParsedConfigs = {}

    def read(
        directory: Path, root: Path, /, *, shared: Mapping[str, object] = MappingProxyType({})
    ) -> ProjectConfig | None:
        return load_project_config(directory, root=root, shared=shared, parsed=parsed)

    return read


def _manifest_path(rel_dir: str, file: str) -> str:
    return file if rel_dir == "." else f"{rel_dir}/{file}"


def _read(directory: Path, rel_dir: str, file: str) -> Manifest | None:
    path = directory / file
    if not path.is_file():
        return None
    shown = _manifest_path(rel_dir, file)
    return read_pyproject(path, shown) if file == PYPROJECT else read_package_json(path, shown)


def _project(
    name: str,
    directory: Path,
    rel_dir: str,
    root: Path,
    manifest: Manifest | None,
    *,
    is_root: bool,
    config: ProjectConfig | None = None,
    source: ConfigSource = _live,
) -> Project:
    return Project(
        name=name,
        dir=directory,
        rel_dir=rel_dir,
        manifest=_manifest_path(rel_dir, manifest.file) if manifest else None,
        version=manifest.version if manifest else None,
        dependencies=manifest.dependencies if manifest else MappingProxyType({}),
        config=config if config is not None else source(directory, root),
        is_root=is_root,
        dependency_fields=manifest.dependency_fields if manifest else MappingProxyType({}),
    )


def _single(root: Path, source: ConfigSource) -> Project:
    """A root with no member list is the one project, named by whichever manifest names it."""
    found = [m for m in (_read(root, ".", f) for f in (PACKAGE_JSON, PYPROJECT)) if m]
    manifest = next((m for m in found if m.name), found[0] if found else None)
    name = manifest.name if manifest and manifest.name else ROOT
    return _project(name, root, ".", root, manifest, is_root=True, source=source)


def root_project_name(cwd: Path) -> str:
    """The name the workspace holding `cwd` gives its root project, which `//` names too: a
    single package's or a uv root's manifest name (as `load_workspace` names them), else `//`.
    Reads the root manifest only, never a config, so the history verbs can map `//#task`."""
    found = find_root(cwd)
    if found.manager is Manager.SINGLE:
        files: tuple[str, ...] = (PACKAGE_JSON, PYPROJECT)
    elif found.manager is Manager.UV:
        files = (PYPROJECT,)
    else:
        return ROOT
    named = [m.name for m in (_read(found.root, ".", f) for f in files) if m and m.name]
    return named[0] if named else ROOT


def _uv_name(root: Path, found: Discovery) -> str | None:
    """A uv root's `[project]` name, which makes the root a package like its members."""
    manifest = _read(root, ".", PYPROJECT) if found.manager is Manager.UV else None
    return manifest.name if manifest else None


def _nameless_note(shown: str, file: str) -> str:
    field = '"name"' if file == PACKAGE_JSON else "[project] name"
    return f"{shown} has no {field}; skipped"


def load_workspace(
    cwd: Path, *, configs: ConfigReader | None = None, live: bool = True
) -> Workspace:
    """The workspace holding `cwd`, loaded and frozen; reads files only and spawns nothing,
    unless its tasks come from turbo.json or nx.json (one `git ls-files`, see foreign/driver.py).

    `configs` gives each project directory its config: evaluated from its `vx.config.*`,
    unless `vx run --frozen` passes one that reads them from `vx-lock.json`. `live=False`
    leaves turbo.json / nx.json unread: `vx migrate` reads them itself, to write them out.
    """
    found = find_root(cwd)
    root = found.root
    notes = list(found.notes)
    ws_config = load_workspace_config(root)
    root_takes = bool(ws_config.tasks) and root_takes_tasks(found.manager, _uv_name(root, found))
    reader = configs if configs is not None else _live_once()
    source = sharing(reader, ws_config, root_takes=root_takes)
    projects: list[Project] = []
    if found.manager is Manager.SINGLE:
        projects.append(_single(root, source))
    else:
        file = member_manifest(found.manager)
        root_config = source(root, root)
        manifest = _read(root, ".", file) if root_config is not None or file == PYPROJECT else None
        # uv counts a root with a `[project]` name as a member, so it carries that name.
        root_name = manifest.name if file == PYPROJECT and manifest and manifest.name else None
        claimed: dict[str, str] = {}
        if root_name is not None:
            claimed[normalize_python_name(root_name)] = file
        if root_config is not None or root_name is not None:
            projects.append(
                _project(
                    root_name or ROOT,
                    root,
                    ".",
                    root,
                    manifest,
                    is_root=True,
                    config=root_config,
                    source=source,
                )
            )
        for rel_dir in found.members:
            directory = root / rel_dir
            manifest = _read(directory, rel_dir, file)
            shown = _manifest_path(rel_dir, file)
            if manifest is None:
                continue
            if manifest.name is None:
                notes.append(_nameless_note(shown, file))
                continue
            # uv reads `My_Lib` and `my-lib` as one distribution, so they clash there too.
            key = normalize_python_name(manifest.name) if file == PYPROJECT else manifest.name
            if key in claimed:
                raise UserError(
                    ErrorCode.CONFIG,
                    f'two workspace members are named "{manifest.name}": {claimed[key]} '
                    f"and {shown} — give each package its own name",
                )
            claimed[key] = shown
            projects.append(
                _project(
                    manifest.name, directory, rel_dir, root, manifest, is_root=False, source=source
                )
            )
    warnings: list[str] = []
    if live and ws_config.tasks_from is not None:
        warnings = _read_live(ws_config.tasks_from, root, found.manager, projects)
    with_workspace_tasks(ws_config, projects, root_takes=root_takes)
    projects.sort(key=lambda p: p.name)
    links = package_links(projects, found.manager)
    edges: Mapping[str, tuple[str, ...]] = MappingProxyType({o: tuple(t) for o, t in links.items()})
    if found.manager is Manager.UV:
        edges = _with_locked_edges(root, projects, edges)
    return Workspace(
        root=root,
        manager=found.manager,
        projects=tuple(projects),
        config=ws_config,
        package_deps=edges,
        notes=tuple(notes),
        selection_only=selection_only(projects, links),
        warnings=tuple(warnings),
    )


def _with_locked_edges(
    root: Path, projects: list[Project], edges: Mapping[str, tuple[str, ...]]
) -> Mapping[str, tuple[str, ...]]:
    """`edges` plus the member edges uv.lock records (a member whose dependencies are dynamic
    declares none in its pyproject.toml, but its lock entry names them)."""
    try:
        text = (root / "uv.lock").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return edges
    from vx.lockfiles.uv import locked_edges

    locked = locked_edges(text, {p.name: p.rel_dir for p in projects})
    if not locked:
        return edges
    merged = {name: tuple(sorted({*deps, *locked.get(name, ())})) for name, deps in edges.items()}
    return MappingProxyType(merged)


def _read_live(kind: str, root: Path, manager: Manager, projects: list[Project]) -> list[str]:
    """Give every project without a vx config the tasks turbo.json / nx.json describe, in
    place; the root becomes a project when they give it tasks. Returns the warnings."""

    from vx.foreign.driver import live_config

    read = read_live_projects(kind, root, manager, projects)
    for i, project in enumerate(projects):
        tasks = read.projects.get(project.name)
        if tasks is not None and project.config is None:
            config = live_config(tasks, read.label)
            projects[i] = project._replace(config=config)
    root_tasks = read.projects.get(ROOT)
    if root_tasks is not None and not any(p.is_root for p in projects):
        manifest = _read(root, ".", member_manifest(manager))
        config = live_config(root_tasks, read.label)
        projects.append(_project(ROOT, root, ".", root, manifest, is_root=True, config=config))
    return read.warnings


def read_live_projects(
    kind: str, root: Path, manager: Manager, projects: Sequence[Project]
) -> LiveRead:
    """The raw task configs turbo.json / nx.json give the projects without a vx config (and
    the root, named `//`, when it is no project yet)."""
    from vx.foreign.driver import LiveProject, read_live, read_scripts

    live = [
        LiveProject(p.name, p.rel_dir, read_scripts(root, p.rel_dir), p.is_root)
        for p in projects
        if p.config is None
    ]
    if not any(p.is_root for p in projects):
        live.append(LiveProject(ROOT, ".", read_scripts(root, "."), is_root=True))
    others = {p.name: frozenset(p.tasks) for p in projects if p.config is not None}
    return read_live(kind, root, live, manager, others)


def _holds(directory: str, path: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def cwd_project(ws: Workspace, cwd: Path) -> Project | None:
    """The deepest project whose directory holds `cwd`, as listed or through its links."""
    listed = os.path.normpath(cwd.absolute())
    real = os.path.realpath(cwd)
    best: tuple[int, Project] | None = None
    for project in ws.projects:
        for directory, path in (
            (os.path.normpath(project.dir), listed),
            (os.path.realpath(project.dir), real),
        ):
            if _holds(directory, path) and (best is None or len(directory) > best[0]):
                best = (len(directory), project)
    return best[1] if best else None
