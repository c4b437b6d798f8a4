"""Workspace-wide tasks: `tasks` in `vx.workspace.*` given to every package, merged field by field.

A repo of uniform packages (a uv workspace, a set of libraries built alike) declares a task once
at the root instead of copying one `vx.config.*` into each package. A package's own config may
still declare the same task: its fields win, merged into the workspace's one object level at a
time, so `"exec": {"timeout": 60000}` keeps the workspace's command and `"cache": {"outputs": …}`
keeps its inputs. Lists and plain values are replaced whole, never concatenated: what a package
writes for a field is what that field holds. The merged task is parsed like any other, so its
`resolved` value (and with it the cache key's `config` component) is the task as it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from vx.workspace.model import Manager, ProjectConfig

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vx.workspace.model import Project, TaskDef, WorkspaceConfig

_NONE: Mapping[str, object] = MappingProxyType({})


class ConfigReader(Protocol):
    """Where a project's config comes from (its file, or `vx-lock.json`), given the
    workspace-wide tasks its own tasks merge over."""

    def __call__(
        self, directory: Path, root: Path, /, *, shared: Mapping[str, object] = _NONE
    ) -> ProjectConfig | None: ...


def root_takes_tasks(manager: Manager, root_name: str | None) -> bool:
    """Whether the root is a package that gets the workspace-wide tasks: a single-package
    repo's, or a uv root with a `[project]` name (uv builds it as a member). A JavaScript
    workspace's root (`//`) runs the members rather than being one, and gets none."""
    return manager is Manager.SINGLE or (manager is Manager.UV and root_name is not None)


def sharing(
    configs: ConfigReader, config: WorkspaceConfig, *, root_takes: bool
) -> Callable[[Path, Path], ProjectConfig | None]:
    """`configs` reading each package's tasks merged over the workspace's."""

    def read(directory: Path, root: Path) -> ProjectConfig | None:
        takes = root_takes or directory != root
        return configs(directory, root, shared=config.raw_tasks if takes else _NONE)

    return read


def with_workspace_tasks(
    config: WorkspaceConfig, projects: list[Project], *, root_takes: bool
) -> None:
    """Give each package in `projects` the workspace's tasks it does not declare, in place.

    A package without a config gets one standing for the workspace file, so messages about its
    tasks name the file that declared them. The workspace's tasks come first, in its order.
    """
    if not config.tasks or config.path is None:
        return
    for i, project in enumerate(projects):
        if project.is_root and not root_takes:
            continue
        own = project.config
        if own is None:
            inherited = ProjectConfig(path=config.path, tasks=config.tasks)
            projects[i] = project._replace(config=inherited)
            continue
        tasks: dict[str, TaskDef] = {n: own.tasks.get(n, t) for n, t in config.tasks.items()}
        tasks.update(own.tasks)
        projects[i] = project._replace(config=own._replace(tasks=MappingProxyType(tasks)))


def merge_task(base: object, over: object) -> object:
    """A package's task laid on the workspace's (both validated task objects).

    A command string under `exec` stands for `{"command": …}`, so a package that only changes
    the command keeps the workspace's timeout and environment.
    """
    if not isinstance(base, Mapping) or not isinstance(over, Mapping):
        return over
    base, over = dict(base), dict(over)
    for doc in (base, over):
        if isinstance(doc.get("exec"), str):
            doc["exec"] = {"command": doc["exec"]}
    return merge_values(base, over)


def merge_values(base: object, over: object) -> object:
    """`over` laid on `base`: objects merge key by key, anything else in `over` replaces."""
    if not isinstance(base, Mapping) or not isinstance(over, Mapping):
        return over
    merged: dict[str, object] = dict(base)
    for key, value in over.items():
        merged[key] = merge_values(base[key], value) if key in base else value
    return merged
