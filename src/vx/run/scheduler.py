"""Walk the task graph: dispatch ready tasks to worker threads, propagate failures, stop on signal.

Workers are threads, not an asyncio loop: a warm run must not pay asyncio's import, and each
task is one blocking process wait anyway. The scheduler never runs a task itself; it hands ids
to `run_task` on a worker and gets a `Done` back, so stop-on-failure is one code path here and
the executor keeps its own errors.

Among the tasks ready when a worker frees, the one with the highest priority starts first (the
session passes the critical path through recorded durations, `vx.graph.critical`); equal
priorities, or none, start in the graph's stable topological order.
"""

from __future__ import annotations

import heapq
import queue
import threading
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.ids import TaskId


class ContinueMode(StrEnum):
    """`--continue`: what a failed task takes down with it."""

    NEVER = "never"
    DEPS_OK = "deps-ok"
    ALWAYS = "always"


class NodeKind(StrEnum):
    """How the scheduler treats a node."""

    TASK = "task"  # runs on the execution lane
    RESTORE = "restore"  # a predicted cache hit: runs on the restore lane
    GROUP = "group"  # runs nothing; done when its dependencies are
    EXCLUDED = "excluded"  # dropped by --exclude-dependencies: never runs, orders like a group
    INTERACTIVE = "interactive"  # owns the terminal: runs alone
    DEFERRED = "deferred"  # a server only predicted hits depend on: started if one misses


class Result(StrEnum):
    """What a finished node means for its dependants."""

    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"
    ABORTED = "aborted"
    REQUEUE = "requeue"  # a restore that could not restore: run it on the execution lane
    UNREADY = "unready"  # a server let go before ready: its dependants wait, nothing failed
    NOT_STARTED = "not started"  # a deferred server no dependant needed: it never ran


class Done(Record):
    """A worker's answer for one task."""

    result: Result


class Ticket(Record):
    """What a worker is told when it runs a task.

    `tainted` marks a task that runs behind a failed or excluded dependency: its key is a
    healthy run's, its bytes are not, so the executor must not save it. `hands_back` marks a
    restore a deferred server was not started for: if it cannot restore, the worker answers
    `REQUEUE` instead of executing, so the server starts first. `missed` marks that requeued
    run: its restore already failed once, so it executes without asking the cache again.
    """

    id: TaskId
    tainted: bool
    attempts_allowed: bool
    hands_back: bool = False
    missed: bool = False


class Schedule(Record):
    """The graph as the scheduler needs it: ids in a stable topological order and their edges.

    `priority` ranks ready nodes (higher first); a node without one ranks as 0.
    """

    order: tuple[TaskId, ...]
    deps: Mapping[TaskId, tuple[TaskId, ...]]
    kind: Mapping[TaskId, NodeKind]
    priority: Mapping[TaskId, float] = MappingProxyType({})


class Lanes(Record):
    """Worker counts: tasks that execute, and cache restores (disk work, up to twice as many)."""

    execute: int
    restore: int


class _State:
    """What one walk has settled so far; the walk's own, so mutable."""

    __slots__ = ("blocked_root", "result", "tainted")

    def __init__(self) -> None:
        self.result: dict[TaskId, Result] = {}
        self.blocked_root: dict[TaskId, TaskId | None] = {}
        self.tainted: set[TaskId] = set()


def run_schedule(
    schedule: Schedule,
    *,
    lanes: Lanes,
    mode: ContinueMode,
    run_task: Callable[[Ticket], Done],
    on_skip: Callable[[TaskId, TaskId | None], None],
    on_not_run: Callable[[TaskId], None],
    stopping: threading.Event,
    halted: threading.Event | None = None,
    tick: Callable[[int], None] = lambda _busy: None,
    tick_seconds: float = 0.05,
) -> dict[TaskId, Result]:
    """Run every node once its dependencies are done; return each node's result.

    `halted` is set on a fail-fast stop (`--continue=never`) so in-flight work starts no retry.
    `tick` is called between results with how many tickets the workers hold (restores too).
    A node behind an `UNREADY` server is skipped under every `--continue` mode: what it would
    talk to never said it was there. A `DEFERRED` server is parked as `NOT_STARTED` once its
    dependencies are done; a dependant whose restore then misses starts it and waits for it
    (its readiness, as any dependant of a server would) before executing.
    """
    walker = _Walker(schedule, lanes, mode, run_task, on_skip, on_not_run, stopping)
    walker.halted = halted or threading.Event()
    return walker.walk(tick, tick_seconds)


class _Walker:
    def __init__(
        self,
        schedule: Schedule,
        lanes: Lanes,
        mode: ContinueMode,
        run_task: Callable[[Ticket], Done],
        on_skip: Callable[[TaskId, TaskId | None], None],
        on_not_run: Callable[[TaskId], None],
        stopping: threading.Event,
    ) -> None:
        self.s = schedule
        self.lanes = lanes
        self.mode = mode
        self.run_task = run_task
        self.on_skip = on_skip
        self.on_not_run = on_not_run
        self.stopping = stopping
        self.position = {tid: i for i, tid in enumerate(schedule.order)}
        self.rank = self.position
        if schedule.priority:
            prio = schedule.priority
            # sorted() is stable: equal priorities keep their topological order.
            by_priority = sorted(schedule.order, key=lambda t: -prio.get(t, 0.0))
            self.rank = {tid: i for i, tid in enumerate(by_priority)}
        self.waiting = {tid: len(schedule.deps.get(tid, ())) for tid in schedule.order}
        self.dependents: dict[TaskId, list[TaskId]] = {tid: [] for tid in schedule.order}
        for tid in schedule.order:
            for dep in schedule.deps.get(tid, ()):
                self.dependents[dep].append(tid)
        self.ready: list[TaskId] = [t for t in schedule.order if self.waiting[t] == 0]
        self.requeued_ids: set[TaskId] = set()
        self.parked: set[TaskId] = set()  # deferred servers not started (yet)
        self.waking: dict[TaskId, list[TaskId]] = {}  # started late: the misses waiting on it
        self.heaps: dict[str, list[tuple[int, TaskId]]] = {"execute": [], "restore": []}
        self.st = _State()
        self.busy = {"execute": 0, "restore": 0}
        self.workers = {"execute": 0, "restore": 0}
        self.jobs: dict[str, queue.SimpleQueue[Ticket | None]] = {
            "execute": queue.SimpleQueue(),
            "restore": queue.SimpleQueue(),
        }
        self.alone = False  # an interactive task holds the terminal
        self.fail_fast = False
        self.halted = threading.Event()
        self.done_q: queue.SimpleQueue[tuple[TaskId, str, Done | BaseException]] = (
            queue.SimpleQueue()
        )

    def walk(self, tick: Callable[[int], None], tick_seconds: float) -> dict[TaskId, Result]:
        try:
            return self._walk(tick, tick_seconds)
        finally:
            for lane, count in self.workers.items():
                for _ in range(count):
                    self.jobs[lane].put(None)

    def _walk(self, tick: Callable[[int], None], tick_seconds: float) -> dict[TaskId, Result]:
        while True:
            self._dispatch()
            if not any(self.busy.values()):
                if self.ready:
                    continue
                break
            try:
                tid, lane, done = self.done_q.get(timeout=tick_seconds)
            except queue.Empty:
                tick(sum(self.busy.values()))
                continue
            self.busy[lane] -= 1
            if isinstance(done, BaseException):
                raise done
            if self.s.kind.get(tid) is NodeKind.INTERACTIVE:
                self.alone = False
            if done.result is Result.REQUEUE:
                self.requeued_ids.add(tid)
                self._requeue(tid)
                continue
            self._finish(tid, done.result)
        for tid in self.s.order:
            if tid not in self.st.result:
                self.st.result[tid] = Result.SKIPPED
                if self.s.kind.get(tid) not in (NodeKind.GROUP, NodeKind.EXCLUDED):
                    self.on_not_run(tid)
        return self.st.result

    def _halted(self) -> bool:
        return self.stopping.is_set() or self.fail_fast

    def _dispatch(self) -> None:
        """Settle what needs no worker, then start lane work by rank (priority, then order).

        A node's blocker is final once all its dependencies are done, so each newly ready node
        is looked at once: groups, exclusions and skips finish on the spot, the rest wait in a
        per-lane heap, and a full lane costs nothing to ask again.
        """
        while not self._halted():
            while self.ready:
                tid = self.ready.pop()
                if self._passes(tid):
                    self._try_start(tid)
                else:
                    lane = self._lane_of(tid)
                    heapq.heappush(self.heaps[lane], (self.rank[tid], tid))
            started = False
            for heap in self.heaps.values():
                while heap and not self._halted() and self._try_start(heap[0][1]):
                    heapq.heappop(heap)
                    started = True
            if not started and not self.ready:
                break
        if self._halted():
            self._drain_unstarted()

    def _lane_of(self, tid: TaskId) -> str:
        if self.s.kind.get(tid) is NodeKind.RESTORE and tid not in self.requeued_ids:
            return "restore"
        return "execute"

    def _passes(self, tid: TaskId) -> bool:
        """A node that finishes without a worker: a group, an exclusion, a skip."""
        kind = self.s.kind.get(tid, NodeKind.TASK)
        if kind in (NodeKind.GROUP, NodeKind.EXCLUDED):
            return True
        if kind is NodeKind.DEFERRED and tid not in self.waking:
            return True
        return self._stops(tid) is not None

    def _try_start(self, tid: TaskId) -> bool:
        kind = self.s.kind.get(tid, NodeKind.TASK)
        blocked = self._blocker(tid)
        stopped = self._stops(tid)
        if stopped is not None:
            self.st.blocked_root[tid] = stopped[1]
            if kind not in (NodeKind.GROUP, NodeKind.EXCLUDED):
                self.on_skip(tid, stopped[1])
            self._finish(tid, Result.SKIPPED)
            return True
        if kind in (NodeKind.GROUP, NodeKind.EXCLUDED):
            if blocked is not None or kind is NodeKind.EXCLUDED:
                self.st.tainted.add(tid)
            self._finish(tid, Result.OK)
            return True
        if kind is NodeKind.DEFERRED and tid not in self.waking:
            if blocked is not None:
                self.st.tainted.add(tid)
            self.parked.add(tid)
            self._finish(tid, Result.NOT_STARTED)
            return True
        if self.alone:
            return False
        lane = self._lane_of(tid)
        if kind is NodeKind.INTERACTIVE:
            if any(self.busy.values()):
                return False
            self.alone = True
        elif self.busy[lane] >= getattr(self.lanes, lane):
            return False
        tainted = blocked is not None or any(d in self.st.tainted for d in self.s.deps.get(tid, ()))
        if tainted:
            self.st.tainted.add(tid)
        self.busy[lane] += 1
        deps = self.s.deps.get(tid, ())
        ticket = Ticket(
            tid,
            tainted,
            attempts_allowed=not self._halted(),
            hands_back=any(d in self.parked or d in self.waking for d in deps),
            missed=tid in self.requeued_ids,
        )
        self.jobs[lane].put(ticket)
        if self.workers[lane] < self.busy[lane]:
            self.workers[lane] += 1
            threading.Thread(
                target=self._work, args=(lane,), name=f"vx-{lane}", daemon=True
            ).start()
        return True

    def _work(self, lane: str) -> None:
        """A lane's worker: takes tickets until the walk ends (a None ticket)."""
        while (ticket := self.jobs[lane].get()) is not None:
            try:
                done: Done | BaseException = self.run_task(ticket)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread to re-raise
                done = exc
            self.done_q.put((ticket.id, lane, done))

    def _blocker(self, tid: TaskId) -> tuple[TaskId, TaskId | None] | None:
        """The first dependency that did not succeed, and the failure at the root of its chain."""
        for dep in self.s.deps.get(tid, ()):
            res = self.st.result.get(dep)
            if res is Result.FAILED or res is Result.ABORTED or res is Result.UNREADY:
                return dep, dep
            if res is Result.SKIPPED:
                return dep, self.st.blocked_root.get(dep)
        return None

    def _stops(self, tid: TaskId) -> tuple[TaskId, TaskId | None] | None:
        """The blocker that keeps `tid` from starting: any, unless `--continue=always`, which
        runs past failures but not past a server let go unready (under it, a skipped
        dependency was skipped for such a server)."""
        if self.mode is not ContinueMode.ALWAYS:
            return self._blocker(tid)
        for dep in self.s.deps.get(tid, ()):
            res = self.st.result.get(dep)
            if res is Result.UNREADY:
                return dep, dep
            if res is Result.SKIPPED:
                return dep, self.st.blocked_root.get(dep)
        return None

    def _requeue(self, tid: TaskId) -> None:
        """A restore that could not restore: execute it, once every deferred server it depends
        on has been started (now, if still parked) and has finished starting."""
        servers = [d for d in self.s.deps.get(tid, ()) if d in self.parked or d in self.waking]
        for server in servers:
            if server in self.parked:
                self.parked.discard(server)
                del self.st.result[server]
                self.waking[server] = []
                self.ready.append(server)
            self.waking[server].append(tid)
            self.waiting[tid] += 1
        if not servers:
            self.ready.append(tid)

    def _finish(self, tid: TaskId, result: Result) -> None:
        self.st.result[tid] = result
        if result in (Result.FAILED, Result.ABORTED) and self.mode is ContinueMode.NEVER:
            self.fail_fast = True
            self.halted.set()
        waiters = self.waking.pop(tid, None)  # a late server: its other dependants went ahead
        for dependent in self.dependents.get(tid, ()) if waiters is None else waiters:
            self.waiting[dependent] -= 1
            if self.waiting[dependent] == 0:
                self.ready.append(dependent)

    def _drain_unstarted(self) -> None:
        """Halted: a signal leaves the rest `not run` (reported at the end of the walk); fail-fast
        completes every node that can no longer start as skipped, naming a failed upstream when
        there is one."""
        waiting = self.ready + [tid for heap in self.heaps.values() for _, tid in heap]
        self.ready = []
        for heap in self.heaps.values():
            heap.clear()
        if self.stopping.is_set():
            return
        while waiting:
            tid = min(waiting, key=self.position.__getitem__)
            waiting.remove(tid)
            blocked = self._blocker(tid)
            root = blocked[1] if blocked else None
            self.st.blocked_root[tid] = root
            if self.s.kind.get(tid) not in (NodeKind.GROUP, NodeKind.EXCLUDED):
                self.on_skip(tid, root)
            self._finish(tid, Result.SKIPPED)
            waiting.extend(self.ready)
            self.ready = []
