"""The plugin value a factory returns, and what each seam is handed."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import TextIO

    from vx.cache.remote.base import RemoteCache
    from vx.events import Event
    from vx.ids import TaskId

SEAMS = ("cache", "telemetry", "commands")
"""The seams a plugin may fill, in the order a run meets them (what `vx info` lists)."""


class CacheOff(Exception):  # noqa: N818  it names the outcome
    """A `cache` seam with nothing to offer this run (no token set): one notice, no remote."""


class CacheContext(Record):
    """What a `cache` seam is handed to build its remote layer: where, the environment, and
    where a warning about its settings goes (one line, shown with the run's notices)."""

    workspace_root: Path
    env: Mapping[str, str]
    note: Callable[[str], None] | None = None


class CommandContext(Record):
    """What a plugin verb is handed: where it runs, the environment and the two streams."""

    workspace_root: Path
    cwd: Path
    env: Mapping[str, str]
    out: TextIO
    err: TextIO
    plugin: str

    def warn(self, message: str) -> None:
        """One line on stderr, prefixed with the plugin's name."""
        self.err.write(f"[{self.plugin}] {message}\n")


class Command(Record):
    """A verb a plugin adds: `run(argv, ctx)` returns the exit code, an int from 0 to 255."""

    run: Callable[[Sequence[str], CommandContext], object]
    description: str = ""


class Plugin(Record):
    """What a plugin factory returns.

    `name` is what notices, `vx info` and `vx help` call it. `cache` builds the remote layer a
    run reads after the local cache and writes behind it; `telemetry` is called with every
    event of a run (on the run's threads: keep it quick); `commands` are verbs by name.
    `task_env`, part of the telemetry seam, is called as a worker takes a task up, with the
    task and its direct dependencies, and returns variables set in that task's environment
    (a trace context such as `TRACEPARENT`); they are never part of a cache key.
    """

    name: str
    cache: Callable[[CacheContext], RemoteCache] | None = None
    commands: Mapping[str, Command] = MappingProxyType({})
    telemetry: Callable[[Event], None] | None = None
    task_env: Callable[[TaskId, tuple[TaskId, ...]], Mapping[str, str]] | None = None

    @property
    def seams(self) -> tuple[str, ...]:
        """The seams this plugin fills, in `SEAMS` order."""
        filled = {
            "cache": self.cache is not None,
            "telemetry": self.telemetry is not None or self.task_env is not None,
            "commands": bool(self.commands),
        }
        return tuple(s for s in SEAMS if filled[s])
