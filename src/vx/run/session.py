"""One run from plan to verdict: announce, schedule, execute, keep requested servers, tear down."""

from __future__ import annotations

import threading
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Self

from vx.events import (
    CacheOutcome,
    PlannedTask,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskOutput,
    TaskStarted,
    TaskStatus,
)
from vx.run.context import RunContext
from vx.run.deferral import NOT_STARTED_REASON, deferred_servers
from vx.run.executor import Executor
from vx.run.groups.registry import ProcessRegistry
from vx.run.groups.signals import RunSignals
from vx.run.outcome import RunOutcome
from vx.run.scheduler import ContinueMode, Lanes, NodeKind, Result, Schedule, run_schedule
from vx.run.servers import HeldServers, Servers
from vx.util.uuid7 import uuid7

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from pathlib import Path

    from vx.events import Event
    from vx.ids import TaskId
    from vx.run.caching import TaskCache
    from vx.run.context import ExecOptions
    from vx.run.plan import RunPlan
    from vx.run.remote.offload import Offload
    from vx.run.servers import Release
    from vx.run.taskhistory import TaskHistory

_EXECUTES = frozenset({NodeKind.TASK, NodeKind.INTERACTIVE})
_BAD = frozenset({TaskStatus.FAILED, TaskStatus.SKIPPED, TaskStatus.ABORTED, TaskStatus.NOT_RUN})


class RunSession:
    """A run as a context manager: signals are vx's while it is open; `run()` then `hold()`."""

    def __init__(
        self,
        plan: RunPlan,
        options: ExecOptions,
        *,
        cache: TaskCache,
        history: TaskHistory,
        emit: Callable[[Event], None],
        env: Mapping[str, str],
        root: Path,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        tick: Callable[[], None] = lambda: None,
        cache_label: str = "local cache",
        release: Release | None = None,
        task_env: Callable[[TaskId, tuple[TaskId, ...]], Mapping[str, str]] | None = None,
        remote: Offload | None = None,
        tracked: Collection[str] = frozenset(),
    ) -> None:
        self.plan = plan
        self.options = options
        self.run_id = uuid7()
        self._clock = clock
        self._wall = wall
        self._tick = tick
        self._cache_label = cache_label
        self._release = release
        self._lock = threading.Lock()
        self._waiting_on: set[TaskId] = set()  # skipped for a server let go unready
        self._finished: dict[TaskId, TaskFinished] = {}
        self._starts: dict[TaskId, int] = {}
        self._spans: dict[TaskId, tuple[int, int]] = {}
        self._logs: dict[TaskId, list[str]] = {}
        self._emit_out = emit
        self.registry = ProcessRegistry()
        self.signals = RunSignals(self.registry, kill_grace_ms=options.kill_grace_ms)
        self.servers = Servers()
        self.ctx = RunContext(
            plan=plan,
            options=options,
            cache=cache,
            history=history,
            registry=self.registry,
            servers=self.servers,
            emit=self._emit,
            env=env,
            root=root,
            stopping=self.signals.stopping,
            halted=threading.Event(),
            released=release.event if release is not None else threading.Event(),
            task_env=task_env,
            remote=remote,
            tracked=tracked,
        )
        self._started_at = wall()
        self._t0 = clock()
        self._handed_over = False

    def __enter__(self) -> Self:
        self.signals.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.servers.stop_all(self.options.kill_grace_ms)
        self.signals.__exit__(None, None, None)
        if not self._handed_over:  # else the held servers' owner closes it once they stop
            self.registry.close(self.options.kill_grace_ms)

    def _emit(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, TaskOutput):
                self._logs.setdefault(event.id, []).append(event.text)
            elif isinstance(event, TaskStarted):
                self._starts.setdefault(event.id, self._since_start_ns())
            elif isinstance(event, TaskFinished):
                if event.status is not TaskStatus.FAILED:
                    self._logs.pop(event.id, None)
                self._finished[event.id] = event
                end = self._since_start_ns()
                start = self._starts.get(event.id, end - int(event.duration_ms * 1e6))
                self._spans[event.id] = (max(0, start), end)
            self._emit_out(event)

    def _on_tick(self, busy: int) -> None:
        """The live region's redraw, serialized with the events worker threads emit; then the
        release's word, outside the lock (its judge may take its time: a worker's emit, a
        server's output among them, must not wait on it)."""
        with self._lock:
            self._tick()
        if self._release is not None:
            self._release.tick(waiting=busy > 0 and busy == self.servers.waiting())

    def _since_start_ns(self) -> int:
        return int((self._clock() - self._t0) * 1e9)

    def run(self) -> RunOutcome:
        """Announce the plan, walk it, and emit the verdict; ready servers stay up."""
        plan = self.plan
        self._emit(
            RunStarted(
                run_id=self.run_id,
                tasks=tuple(
                    PlannedTask(
                        id=n.id,
                        command=n.command,
                        requested=n.surfaced,
                        group=n.task.is_group,
                        persistent=bool(n.task.exec_spec and n.task.exec_spec.persistent),
                        interactive=bool(n.task.exec_spec and n.task.exec_spec.interactive),
                        cached=self.ctx.cache.cached(n.id),
                    )
                    for n in (plan.nodes[t] for t in plan.order)
                    if not n.excluded
                ),
                projects_in_run=plan.projects_in_run,
                projects_total=len(plan.workspace.projects),
                concurrency=self.options.concurrency,
                cache_label=self._cache_label,
            )
        )
        executor = Executor(self.ctx)
        results = run_schedule(
            self._schedule(),
            lanes=Lanes(self.options.concurrency, 2 * self.options.concurrency),
            mode=self.options.continue_mode,
            run_task=executor.run,
            on_skip=self._skipped,
            on_not_run=self._not_run,
            stopping=self.signals.stopping,
            halted=self.ctx.halted,
            tick=self._on_tick,
        )
        for tid in plan.order:
            if results.get(tid) is Result.NOT_STARTED:
                self._not_started(tid)
        if self._failed() and self.servers.alive() and not self._keeps_going():
            self.servers.stop_all(self.options.kill_grace_ms)
        return self._outcome()

    def _keeps_going(self) -> bool:
        return self.options.continue_mode is ContinueMode.ALWAYS

    def _schedule(self) -> Schedule:
        kinds: dict[TaskId, NodeKind] = {}
        for tid, node in self.plan.nodes.items():
            spec = node.task.exec_spec
            if node.excluded:
                kinds[tid] = NodeKind.EXCLUDED
            elif spec is None:
                kinds[tid] = NodeKind.GROUP
            elif spec.interactive:
                kinds[tid] = NodeKind.INTERACTIVE
            elif self.ctx.cache.predicted_hit(tid):
                kinds[tid] = NodeKind.RESTORE
            else:
                kinds[tid] = NodeKind.TASK
        for tid in deferred_servers(self.plan, lambda d: kinds[d] is NodeKind.RESTORE):
            kinds[tid] = NodeKind.DEFERRED
        return Schedule(self.plan.order, self.plan.graph.deps, kinds, self._priorities(kinds))

    def _priorities(self, kinds: Mapping[TaskId, NodeKind]) -> Mapping[TaskId, float]:
        """Each node's critical path through the history's durations, when anything executes.

        A run of hits and groups has no execution lane to order, so it reads no history.
        """
        executing = [tid for tid in self.plan.order if kinds[tid] in _EXECUTES]
        if not executing:
            return {}
        from vx.graph.critical import estimate_costs, longest_remaining

        cost = estimate_costs(executing, self.ctx.history.durations(executing))
        return longest_remaining(self.plan.order, self.plan.graph.deps, cost)

    def _skipped(self, tid: TaskId, blocked_by: TaskId | None) -> None:
        reason = None
        if blocked_by is not None and blocked_by in self.servers.let_go():
            with self._lock:
                self._waiting_on.add(tid)
            reason = f"waiting on {blocked_by}, not ready"
        self._emit(
            TaskFinished(
                tid,
                TaskStatus.SKIPPED,
                self._cache_axis(tid),
                exit_code=1,
                key=self.ctx.cache.key(tid),
                blocked_by=blocked_by,
                reason=reason,
            )
        )

    def _not_run(self, tid: TaskId) -> None:
        self._emit(
            TaskFinished(
                tid, TaskStatus.NOT_RUN, self._cache_axis(tid), key=self.ctx.cache.key(tid)
            )
        )

    def _not_started(self, tid: TaskId) -> None:
        """A deferred server no dependant needed: not run, and no failure."""
        self._emit(
            TaskFinished(
                tid,
                TaskStatus.NOT_RUN,
                self._cache_axis(tid),
                key=self.ctx.cache.key(tid),
                reason=NOT_STARTED_REASON,
                not_started=True,
            )
        )

    def _cache_axis(self, tid: TaskId) -> CacheOutcome:
        return CacheOutcome.MISS if self.ctx.cache.cached(tid) else CacheOutcome.NO_CACHE

    def _failed(self) -> bool:
        """Some task failed, or did not run for a failure; a skip behind a server let go
        unready is neither (the run was told to stop waiting)."""
        with self._lock:
            return any(
                f.status in _BAD and f.id not in self._waiting_on and not f.not_started
                for f in self._finished.values()
            )

    def _verdict(self) -> int:
        code = self.signals.exit_code()
        if code is not None:
            return code
        return 1 if self._failed() else 0

    def _outcome(self) -> RunOutcome:
        ended = self._clock()
        with self._lock:
            finished = tuple(self._finished.values())
            spans = MappingProxyType(dict(self._spans))
            logs = MappingProxyType(
                {
                    f.id: "".join(self._logs.get(f.id, ()))
                    for f in finished
                    if f.status is TaskStatus.FAILED
                }
            )
        return RunOutcome(
            run_id=self.run_id,
            exit_code=self._verdict(),
            signal=self.signals.signal,
            finished=finished,
            started_at=self._started_at,
            ended_at=self._wall(),
            wall_ms=(ended - self._t0) * 1000,
            spans=spans,
            failure_logs=logs,
        )

    def finish(self, outcome: RunOutcome) -> None:
        """Emit the verdict event the footer renders."""
        self._emit(
            RunFinished(outcome.exit_code, outcome.wall_ms, interrupted=outcome.signal is not None)
        )

    def held_servers(self) -> list[TaskId]:
        """The requested servers that keep vx in the foreground after the summary."""
        if self.signals.signal is not None or (self._failed() and not self._keeps_going()):
            return []
        return [s.id for s in self.servers.kept() if s.requested and not s.exited.is_set()]

    def hand_over(self) -> HeldServers:
        """Give the requested ready servers (and those whose wait was let go) to the caller,
        running, instead of holding them."""
        kept = [s for s in self.servers.kept() if s.requested and not s.exited.is_set()]
        self.servers.release(kept)
        self._handed_over = True
        return HeldServers(kept, self.registry, self.options.kill_grace_ms)

    def hold(self) -> tuple[TaskId, int, int] | None:
        """Wait until the first requested server exits (or a stop signal); stop the rest.

        Returns (server, its exit code, how many others were stopped), or None after a signal.
        """
        held = {s.id: s for s in self.servers.kept() if s.requested}
        while True:
            for server in held.values():
                if server.exited.is_set():
                    others = self.servers.stop_all(self.options.kill_grace_ms)
                    code = server.result.exit_code if server.result else 1
                    return server.id, code, len(others)
            if self.signals.stopping.is_set():
                self.servers.stop_all(self.options.kill_grace_ms)
                return None
            self.servers.changed.wait(0.1)
            self.servers.changed.clear()
