"""ExecOptions and RunContext: one frozen bundle of what a run needs, handed to every part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.run.scheduler import ContinueMode
from vx.util.record import Record

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Collection, Mapping
    from pathlib import Path

    from vx.events import Event
    from vx.ids import TaskId
    from vx.run.caching import TaskCache
    from vx.run.groups.registry import ProcessRegistry
    from vx.run.plan import RunPlan
    from vx.run.remote.offload import Offload
    from vx.run.servers import Servers
    from vx.run.taskhistory import TaskHistory


class ExecOptions(Record):
    """The run's knobs, already resolved from flags, environment and workspace config.

    `timeout_ms` is the run-level default (`--timeout` > `VX_TASK_TIMEOUT` > workspace
    `timeout`); a task's own `exec.timeout` beats it. `retry` is `--retry`; a task's own
    `exec.retries` beats it, even an explicit 0.
    """

    concurrency: int
    continue_mode: ContinueMode = ContinueMode.DEPS_OK
    retry: int = 0
    timeout_ms: int | None = None
    kill_grace_ms: int = 2000
    ready_notice_ms: int = 10_000
    audit: str = "off"  # `off`, `warn` or `strict`: trace every executed task and compare


class RunContext(Record):
    """What the executor and scheduler share for one run; the world comes in injected.

    `stopping` is set by a stop signal, `halted` by fail-fast (`--continue=never`): either
    way an in-flight task finishes its attempt and starts no retry. `released` ends the wait
    for servers not yet ready (`RunOptions.release`). `task_env`, when a telemetry plugin
    supplies it, is asked for extra variables as a worker takes a task up.
    """

    plan: RunPlan
    options: ExecOptions
    cache: TaskCache
    history: TaskHistory
    registry: ProcessRegistry
    servers: Servers
    emit: Callable[[Event], None]
    env: Mapping[str, str]
    root: Path
    stopping: threading.Event
    halted: threading.Event
    released: threading.Event
    task_env: Callable[[TaskId, tuple[TaskId, ...]], Mapping[str, str]] | None = None
    remote: Offload | None = None  # `--executor reapi`: where cacheable tasks execute
    tracked: Collection[str] = frozenset()  # the paths git's index listed when the run planned
