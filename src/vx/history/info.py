"""`vx info`'s facts, gathered once as one value: the pretty rows and the JSON both render it."""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vx.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from vx.history.flaky import FlakyTask
    from vx.util.cpu import CpuBudget
    from vx.util.memory import MemoryBudget
    from vx.workspace.model import TaskDef, WorkspaceConfig

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Workers:
    """The count a run defaults to, and what decided it (`workspace`, `cgroup` or `cores`)."""

    count: int
    source: str
    cores: int
    cpu_quota: float | None


@dataclass(frozen=True, slots=True)
class CacheFacts:
    """The cache a run here would use, read without creating anything."""

    directory: Path
    store: Path | None
    entries: int
    bytes: int
    orphans: int
    orphan_bytes: int
    older_than: str | None
    max_size: str | None
    max_bytes: int | None


@dataclass(frozen=True, slots=True)
class HistoryFacts:
    """Task runs in the last 24 hours (hits, and hits that restored outputs) and flaky tasks."""

    runs: int
    hits: int
    restored: int
    flaky: tuple[FlakyTask, ...]


@dataclass(frozen=True, slots=True)
class Info:
    """Every fact `vx info` prints."""

    vx: str
    python: str
    git: str | None
    fsmonitor: bool | None
    untracked_cache: bool | None
    root: Path
    projects: int
    tasks: int
    config_errors: tuple[tuple[str, str], ...]
    plugins: tuple[tuple[str, tuple[str, ...]], ...]  # (name, seams) in declaration order
    workers: Workers
    memory: MemoryBudget | None
    cache: CacheFacts | None
    history: HistoryFacts
    sandboxed: int = 0  # tasks declaring exec.sandbox


def python_version(module_globals: Mapping[str, object] | None = None) -> str:
    """The interpreter's version, or `bundled` in a frozen or Nuitka-compiled binary."""
    marks = globals() if module_globals is None else module_globals
    if getattr(sys, "frozen", False) or "__compiled__" in marks:
        return "bundled"
    return platform.python_version()


def gather(
    cwd: Path,
    *,
    env: Mapping[str, str],
    flag: str | None,
    clock: Callable[[], float] = time.time,
) -> Info:
    """Read the workspace, git and the cache; a config that does not load is counted, not
    raised (only a missing workspace is)."""
    from vx import __version__, git
    from vx.util.cpu import cpu_budget
    from vx.util.memory import memory_budget
    from vx.workspace.config_load import load_workspace_config
    from vx.workspace.discover import find_root

    root = find_root(cwd).root
    errors: list[tuple[str, str]] = []
    try:
        config: WorkspaceConfig | None = load_workspace_config(root)
    except ConfigError as e:
        config = None
        errors.append((e.path, e.message))
    projects, tasks, sandboxed, project_errors = _count(cwd)
    errors += project_errors
    cpus = cpu_budget()
    cache, history = _cache(root, config, cwd=cwd, env=env, flag=flag, now_ms=int(clock() * 1000))
    return Info(
        vx=__version__,
        python=python_version(),
        git=git.version(root, env=env),
        fsmonitor=git.config_flag(root, "core.fsmonitor", env=env),
        untracked_cache=git.config_flag(root, "core.untrackedCache", env=env),
        root=root,
        projects=projects,
        tasks=tasks,
        config_errors=tuple(errors),
        plugins=tuple((_plugin_name(p), ()) for p in config.plugins) if config else (),
        workers=_workers(config, cpus),
        memory=memory_budget(),
        cache=cache,
        history=history,
        sandboxed=sandboxed,
    )


def _plugin_name(entry: object) -> str:
    """A declared plugin as written (`module:factory`), or the name an object passed carries."""
    return entry if isinstance(entry, str) else str(getattr(entry, "name", type(entry).__name__))


def _count(cwd: Path) -> tuple[int, int, int, list[tuple[str, str]]]:
    """Projects, tasks and the tasks declaring `exec.sandbox`, as a run loads them; when a
    config refuses, each project is loaded alone, so the rest still count and every broken one
    is named."""
    from vx.workspace.config_load import load_project_config
    from vx.workspace.discover import find_root
    from vx.workspace.load import load_workspace

    try:
        ws = load_workspace(cwd)
    except ConfigError:
        pass
    else:
        every = [t for p in ws.projects for t in p.tasks.values()]
        return len(ws.projects), len(every), _sandboxed(every), []
    found = find_root(cwd)
    errors: list[tuple[str, str]] = []
    projects = tasks = sandboxed = 0
    for rel in (".", *found.members):
        try:
            config = load_project_config(found.root / rel, root=found.root)
        except ConfigError as e:
            errors.append((e.path, e.message))
            projects += 1
            continue
        if config is not None or rel != ".":
            projects += 1
            tasks += len(config.tasks) if config is not None else 0
            sandboxed += _sandboxed(config.tasks.values()) if config is not None else 0
    return projects, tasks, sandboxed, errors


def _sandboxed(tasks: Iterable[TaskDef]) -> int:
    return sum(1 for t in tasks if t.exec_spec is not None and t.exec_spec.sandbox is not None)


def _workers(config: WorkspaceConfig | None, cpus: CpuBudget) -> Workers:
    from vx.util.cpu import workers

    if config is not None and config.concurrency is not None:
        return Workers(
            workers(config.concurrency, cpus.usable), "workspace", cpus.cores, cpus.quota
        )
    source = "cgroup" if cpus.quota is not None and cpus.usable < cpus.cores else "cores"
    return Workers(cpus.usable, source, cpus.cores, cpus.quota)


def _cache(
    root: Path,
    config: WorkspaceConfig | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    flag: str | None,
    now_ms: int,
) -> tuple[CacheFacts | None, HistoryFacts]:
    """The store's counts and the history's, read only; None when no cache can be named."""
    import sqlite3

    from vx.cache.index import read_index
    from vx.cache.prune import list_cache, orphans
    from vx.history.flaky import HISTORY_MS, flaky_tasks
    from vx.history.store import find_cache
    from vx.util.units import size_bytes

    history = HistoryFacts(0, 0, 0, ())
    try:
        location = find_cache(root, config, cwd=cwd, env=env, flag=flag)
    except ConfigError:
        return None, history
    index = read_index(location.store)
    try:
        entries = size = 0
        if index is not None:
            with_stats = index.stats()
            entries, size = with_stats.entries, with_stats.bytes
            runs, hits, restored = index.task_runs_since(now_ms - DAY_MS)
            history = HistoryFacts(
                runs, hits, restored, flaky_tasks(index.key_outcomes(now_ms - HISTORY_MS))
            )
        loose = orphans(list_cache(location.store, index), now_ms)
    except sqlite3.Error:
        loose = ()
    finally:
        if index is not None:
            index.close()
    kept = config.cache_retention if config else None
    return (
        CacheFacts(
            directory=location.directory,
            store=None if location.named else location.store,
            entries=entries,
            bytes=size,
            orphans=len(loose),
            orphan_bytes=sum(v.bytes for v in loose),
            older_than=kept.older_than if kept else None,
            max_size=kept.max_size if kept else None,
            max_bytes=size_bytes(kept.max_size) if kept and kept.max_size else None,
        ),
        history,
    )
