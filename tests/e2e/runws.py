"""Helpers for `vx run` end-to-end tests: npm workspaces whose tasks are plain `sh`."""

from __future__ import annotations

from typing import Any


def package(name: str, deps: tuple[str, ...] = (), version: str = "1.0.0") -> dict[str, Any]:
    """A package.json that links `deps` through the workspace protocol."""
    doc: dict[str, Any] = {"name": name, "version": version}
    if deps:
        doc["dependencies"] = dict.fromkeys(deps, "workspace:*")
    return doc


def tree(packages: dict[str, tuple[tuple[str, ...], dict[str, Any]]]) -> dict[str, Any]:
    """{name: (deps, tasks)} → the files of an npm workspace with one vx.config.json each."""
    files: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
    }
    for name, (deps, tasks) in packages.items():
        files[f"packages/{name}/package.json"] = package(name, deps)
        files[f"packages/{name}/vx.config.json"] = {"tasks": tasks}
        files[f"packages/{name}/src/index.txt"] = f"{name}\n"
    return files
