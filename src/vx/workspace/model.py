"""Frozen values for a loaded workspace: its projects, their configs and task definitions."""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Manager(StrEnum):
    """Which package manager's workspace list named the members."""

    NPM = "npm"
    PNPM = "pnpm"
    YARN = "yarn"
    BUN = "bun"
    UV = "uv"
    SINGLE = "single"


class EnvSpec(Record):
    """What a task's process sees beyond the baseline environment."""

    pass_through: tuple[str, ...] = ()
    define: Mapping[str, str] = _EMPTY
    secret: tuple[str, ...] = ()


class SandboxSpec(Record):
    """`exec.sandbox.allow`: the project-relative paths (globs) a sandboxed task may read, and
    those it may write; nothing else in the workspace is there for it."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()


class ExecSpec(Record):
    """How a task runs: its shell command and the knobs around the process."""

    command: str
    env: EnvSpec = EnvSpec()
    timeout_ms: int | None = None
    retries: int | None = None
    persistent: bool = False
    ready_when: str | None = None
    interactive: bool = False
    sandbox: SandboxSpec | None = None


class CacheInputs(Record):
    """What a cached task's key reads. `files=None` means every file of the project."""

    files: tuple[str, ...] | None = None
    workspace_files: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    tasks: tuple[str, ...] | None = None
    runtime: tuple[str, ...] = ()
    workspace_runtime: tuple[str, ...] = ()


class CacheOutputs(Record):
    """What a cached task produces; `!` entries take paths back."""

    files: tuple[str, ...] = ()
    workspace_files: tuple[str, ...] = ()


class CacheSpec(Record):
    """A task's `cache` block: present means the task is cacheable."""

    inputs: CacheInputs = CacheInputs()
    outputs: CacheOutputs = CacheOutputs()


class TaskDef(Record):
    """One task as its config resolved it.

    `resolved` is the task's config as a plain JSON value with defaults applied: it is what
    `vx show --format json` prints and what the cache key's `config` component hashes.
    `default` marks the `build` vx supplies for a project that declares none.
    """

    name: str
    depends_on: tuple[str, ...] = ()
    description: str | None = None
    exec_spec: ExecSpec | None = None
    cache_spec: CacheSpec | None = None
    resolved: Mapping[str, Any] = _EMPTY
    default: bool = False

    @property
    def is_group(self) -> bool:
        """A task with no command stands for its `dependsOn` and runs nothing."""
        return self.exec_spec is None


class ProjectConfig(Record):
    """A project's `vx.config.*`: its tags and declared tasks."""

    path: str
    tags: tuple[str, ...] = ()
    tasks: Mapping[str, TaskDef] = _EMPTY
    imports: tuple[str, ...] = ()  # root-relative files a `.py` config imported
    live: str | None = None  # "turbo.json" or "nx.json" when read live, not from a vx.config


class Project(Record):
    """A workspace member (or the root) with a name.

    `dir` is the path as the workspace lists it (a member reached through a symlink keeps the
    link's path); `rel_dir` is that path relative to the root, POSIX-style, `.` for the root.
    `dependencies` holds every dependency spec the manifest declares, by package name; which
    of them are workspace edges is `Workspace.package_deps`'s business; `dependency_fields`
    names the manifest fields that list each one.
    """

    name: str
    dir: Path
    rel_dir: str
    manifest: str | None = None
    version: str | None = None
    dependencies: Mapping[str, str] = _EMPTY
    config: ProjectConfig | None = None
    is_root: bool = False
    dependency_fields: Mapping[str, tuple[str, ...]] = _EMPTY

    @property
    def tags(self) -> tuple[str, ...]:
        """The config's tags; a config-less project has none."""
        return self.config.tags if self.config else ()

    @property
    def tasks(self) -> Mapping[str, TaskDef]:
        """The tasks the project declares (never the default `build`)."""
        return self.config.tasks if self.config else _EMPTY


class CacheRetention(Record):
    """`cacheRetention`: what each run's end may evict."""

    older_than: str | None = None
    max_size: str | None = None


class WorkspaceConfig(Record):
    """The root's optional `vx.workspace.*`."""

    path: str | None = None
    cache_dir: str | None = None
    concurrency: int | str | None = None
    timeout_ms: int | None = None
    cache_retention: CacheRetention | None = None
    affected_base: str | None = None
    plugins: tuple[object, ...] = ()  # "module:factory" specs; a `.py` config may pass objects
    imports: tuple[str, ...] = ()  # root-relative files a `.py` config imported
    pass_through: tuple[str, ...] = ()  # variables every task sees, outside every key
    tasks_from: str | None = None  # "turbo" or "nx": config-less packages read it live
    audit: str | None = None  # "off", "warn" or "strict": trace executed tasks (vx run --audit)
    tasks: Mapping[str, TaskDef] = _EMPTY  # declared once for every package (task_defaults.py)
    raw_tasks: Mapping[str, object] = _EMPTY  # those tasks as the file wrote them, for merging
    executor: str | None = None  # "local" or "reapi": where cacheable tasks execute


class Workspace(Record):
    """A discovered workspace: root, members and configs, frozen once loaded.

    `projects` is sorted by name. `package_deps` maps a project name to the names of the
    workspace projects its manifest links (the package graph's edges). `selection_only` holds
    those of them a dev, peer or dependency-group entry makes that would close a cycle: they
    select (the filter DSL follows them) and order only a task they cannot loop back to.
    `notes` are things discovery wants the user told (a nameless member skipped, a pnpm/npm
    glob mismatch).
    """

    root: Path
    manager: Manager
    projects: tuple[Project, ...]
    config: WorkspaceConfig = WorkspaceConfig()
    package_deps: Mapping[str, tuple[str, ...]] = _EMPTY
    notes: tuple[str, ...] = ()
    selection_only: Mapping[str, tuple[str, ...]] = _EMPTY
    warnings: tuple[str, ...] = ()  # what a live turbo.json / nx.json holds that vx cannot honour

    def project(self, name: str) -> Project | None:
        """The project called `name` (`//` is the root project when there is one)."""
        for p in self.projects:
            if p.name == name:
                return p
        return None

    @property
    def root_project(self) -> Project | None:
        """The root as a project, when it is one."""
        for p in self.projects:
            if p.is_root:
                return p
        return None

    def names(self) -> tuple[str, ...]:
        """Every project name, sorted."""
        return tuple(p.name for p in self.projects)
