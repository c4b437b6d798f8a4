"""Workspaces built straight from the model, for graph tests that need no file system."""

from __future__ import annotations

from pathlib import Path

from vx.workspace.model import ExecSpec, Manager, Project, ProjectConfig, TaskDef, Workspace

ROOT_DIR = Path("/ws")


GROUP = "group:"


def task(name: str, deps: list[str]) -> TaskDef:
    """A real task, or a group when the list starts with GROUP."""
    if deps and deps[0] == GROUP:
        return TaskDef(name=name, depends_on=tuple(deps[1:]))
    return TaskDef(name=name, depends_on=tuple(deps), exec_spec=ExecSpec(f"echo {name}"))


def make_ws(
    projects: dict[str, dict[str, list[str]] | None],
    links: dict[str, list[str]] | None = None,
    root: str | None = None,
) -> Workspace:
    """Projects by name: a task table, or None for a package with no vx config."""
    made = []
    for name, tasks in sorted(projects.items()):
        is_root = name == root
        rel = "." if is_root else f"packages/{name}"
        config = None
        if tasks is not None:
            defs = {t: task(t, d) for t, d in tasks.items()}
            config = ProjectConfig(path=f"{rel}/vx.config.json".removeprefix("./"), tasks=defs)
        made.append(
            Project(name=name, dir=ROOT_DIR / rel, rel_dir=rel, config=config, is_root=is_root)
        )
    package_deps = {k: tuple(v) for k, v in (links or {}).items()}
    return Workspace(ROOT_DIR, Manager.NPM, tuple(made), package_deps=package_deps)
