"""What `vx init` writes for a uv workspace: one `vx.workspace.*` whose tasks every package runs.

A uv workspace has no scripts to map: what its packages share is how uv builds them. So init
declares `build` once, at the root (config.md § Workspace-wide tasks), with a cache block:
`uv build --out-dir dist` writes the wheel and sdist into the package's own `dist/`, and reads
the package's files (a task's inputs when it names none) and the root `pyproject.toml`, where
uv finds the workspace (the tracer sees it read). That caches from the first run with nothing
written by hand.
"""

from __future__ import annotations

import tomllib
from typing import TYPE_CHECKING

from vx.adopt.init_tasks import BUILD, TaskDraft
from vx.workspace.manifests import PYPROJECT

if TYPE_CHECKING:
    from pathlib import Path

UV_BUILD = TaskDraft(
    name=BUILD,
    depends_on=(f"^{BUILD}",),
    command="uv build --out-dir dist",
    cache={"inputs": {"workspaceFiles": ["pyproject.toml"]}, "outputs": {"files": ["dist/**"]}},
)


def uv_tasks(root: Path, members: tuple[str, ...]) -> tuple[tuple[TaskDraft, ...], list[str]]:
    """The workspace's shared tasks, and notes naming the packages `uv build` cannot build."""
    unbuildable = [rel for rel in (".", *members) if _package(root / rel) is False]
    notes = []
    if unbuildable:
        shown = ", ".join(PYPROJECT if rel == "." else f"{rel}/{PYPROJECT}" for rel in unbuildable)
        notes.append(
            f"{shown}: no [build-system], so uv build falls back to setuptools, which also"
            " leaves build/ and *.egg-info beside dist/: give it one, or a"
            f" {BUILD} task of its own in a vx.config.json there"
        )
    return (UV_BUILD,), notes


def _package(directory: Path) -> bool | None:
    """Whether the pyproject.toml here is a package uv can build: None for no named project
    (a virtual root is no project), False for a project without a build system."""
    try:
        doc = tomllib.loads((directory / PYPROJECT).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = doc.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        return None
    uv = doc.get("tool", {}).get("uv", {}) if isinstance(doc.get("tool"), dict) else {}
    return "build-system" in doc or (isinstance(uv, dict) and uv.get("package") is True)
