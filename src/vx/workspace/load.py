"""Assembling a Workspace: discovery, manifests, configs and package edges, frozen in one value."""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.ids import ROOT
from vx.workspace.config_load import load_project_config, load_workspace_config
from vx.workspace.discover import find_root, member_manifest
from vx.workspace.manifests import (
    PACKAGE_JSON,
    PYPROJECT,
    normalize_python_name,
    read_package_json,
    read_pyproject,
)
from vx.workspace.model import Manager, Project, Workspace
from vx.workspace.packages import package_edges

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.workspace.manifests import Manifest
    from vx.workspace.model import ProjectConfig


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
) -> Project:
    return Project(
        name=name,
        dir=directory,
        rel_dir=rel_dir,
        manifest=_manifest_path(rel_dir, manifest.file) if manifest else None,
        version=manifest.version if manifest else None,
        dependencies=manifest.dependencies if manifest else MappingProxyType({}),
        config=config if config is not None else load_project_config(directory, root=root),
        is_root=is_root,
    )


def _single(root: Path) -> Project:
    """A root with no member list is the one project, named by whichever manifest names it."""
    found = [m for m in (_read(root, ".", f) for f in (PACKAGE_JSON, PYPROJECT)) if m]
    manifest = next((m for m in found if m.name), found[0] if found else None)
    name = manifest.name if manifest and manifest.name else ROOT
    return _project(name, root, ".", root, manifest, is_root=True)


def _nameless_note(shown: str, file: str) -> str:
    field = '"name"' if file == PACKAGE_JSON else "[project] name"
    return f"{shown} has no {field}; skipped"


def load_workspace(cwd: Path) -> Workspace:
    """The workspace holding `cwd`, loaded and frozen; reads files only and spawns nothing."""
    found = find_root(cwd)
    root = found.root
    notes = list(found.notes)
    projects: list[Project] = []
    if found.manager is Manager.SINGLE:
        projects.append(_single(root))
    else:
        file = member_manifest(found.manager)
        root_config = load_project_config(root, root=root)
        if root_config is not None:
            manifest = _read(root, ".", file)
            projects.append(
                _project(ROOT, root, ".", root, manifest, is_root=True, config=root_config)
            )
        claimed: dict[str, str] = {}
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
                _project(manifest.name, directory, rel_dir, root, manifest, is_root=False)
            )
    projects.sort(key=lambda p: p.name)
    edges = package_edges(projects, found.manager)
    if found.manager is Manager.UV:
        edges = _with_locked_edges(root, projects, edges)
    return Workspace(
        root=root,
        manager=found.manager,
        projects=tuple(projects),
        config=load_workspace_config(root),
        package_deps=edges,
        notes=tuple(notes),
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
    from vx.workspace.lockfiles.uv import locked_edges

    locked = locked_edges(text, {p.name: p.rel_dir for p in projects})
    if not locked:
        return edges
    merged = {name: tuple(sorted({*deps, *locked.get(name, ())})) for name, deps in edges.items()}
    return MappingProxyType(merged)


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
