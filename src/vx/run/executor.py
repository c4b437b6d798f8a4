"""Run one task: restore it from the cache or execute it, then save it; emit what happened.

The executor never sees the graph: the scheduler hands it a ticket, it answers Done, and it
keeps its own errors (a failed spawn, a timeout, a save that hit a full disk are task
outcomes, not exceptions).
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING

from vx.events import (
    EMPTY_OUTPUTS,
    NOT_SAVED,
    AuditReport,
    CacheOutcome,
    Notice,
    Stream,
    TaskFinished,
    TaskOutput,
    TaskReady,
    TaskStarted,
    TaskStatus,
)
from vx.run.caching import Produced, RestoreResult
from vx.run.hits import emit_hit
from vx.run.scheduler import Done, Result, Ticket
from vx.run.taskenv import StreamMasker, task_env

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.ids import TaskId
    from vx.run.audit import TaskAuditor
    from vx.run.context import RunContext
    from vx.run.plan import PlanNode
    from vx.run.process import ProcessResult, ProcessSpec
    from vx.run.servers import Server
    from vx.workspace.model import ExecSpec

_READY_TAIL = 8192  # how much recent output a readyWhen pattern is matched against
_POLL_S = 0.05


class Executor:
    """Runs tickets for one run; safe to call from several worker threads at once."""

    def __init__(self, ctx: RunContext, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ctx = ctx
        self.clock = clock
        # Each spawn selects from vx's environment: a plain copy is read without `os.environ`
        # decoding every name of it again per task.
        self.base_env = dict(ctx.env)
        self.auditor: TaskAuditor | None = None
        if ctx.options.audit != "off":
            from vx.run.audit import TaskAuditor  # a run that does not audit never loads it

            self.auditor = TaskAuditor(ctx)

    def run(self, ticket: Ticket) -> Done:
        """Restore or execute the ticket's task; the answer says what it means downstream."""
        node = self.ctx.plan.nodes[ticket.id]
        cache = self.ctx.cache
        self._handed(node)  # taken up now: a tracing plugin opens the task's span
        if cache.cached(ticket.id) and not ticket.missed:
            done = self._try_hit(node)
            if done is not None:
                return done
        if ticket.hands_back:
            return Done(Result.REQUEUE)  # a deferred server must start before this executes
        cache.prepare(ticket.id)
        spec = node.task.exec_spec
        if spec is None or node.command is None:
            msg = f"{ticket.id} has no command to run"
            raise AssertionError(msg)
        if spec.persistent:
            return self._serve(node, spec, node.command)
        return self._execute(node, spec, node.command, ticket)

    def _try_hit(self, node: PlanNode) -> Done | None:
        cache, tid = self.ctx.cache, node.id
        started = self.clock()
        hit = cache.lookup(tid)
        if hit is None:
            return None
        outcome = cache.restore(tid, hit)
        if outcome is RestoreResult.GONE:
            return None  # pruned between its row and its file: a miss like any other
        if outcome is RestoreResult.CORRUPT:
            self.ctx.emit(Notice(f"[vx] {tid}: cache entry {hit.key} is unreadable; running it"))
            return None
        restored = outcome is RestoreResult.RESTORED
        emit_hit(self.ctx.emit, tid, hit, restored=restored, started=started, clock=self.clock)
        return Done(Result.OK)

    def _handed(self, node: PlanNode) -> Mapping[str, str] | None:
        """What the telemetry plugins hand this task (the same answer each time it is asked)."""
        ask = self.ctx.task_env
        return ask(node.id, self.ctx.plan.graph.deps.get(node.id, ())) if ask else None

    def _capture(self, tid: TaskId, secrets: tuple[str, ...]) -> _Capture:
        return _Capture(tid, secrets, self.ctx.emit)

    def _process_spec(
        self,
        node: PlanNode,
        spec: ExecSpec,
        command: str,
        prefix: tuple[str, ...] = (),
        pass_fds: tuple[int, ...] = (),
    ) -> tuple[ProcessSpec, tuple[str, ...]]:
        inputs_env = node.task.cache_spec.inputs.env if node.task.cache_spec else ()
        env = task_env(
            base=self.base_env,
            exec_spec=spec,
            inputs_env=inputs_env,
            project_dir=node.project.dir,
            root=self.ctx.root,
            task_id=str(node.id),
            workspace_pass_through=self.ctx.plan.workspace.config.pass_through,
            handed=self._handed(node),
        )
        timeout = spec.timeout_ms if spec.timeout_ms is not None else self.ctx.options.timeout_ms
        from vx.run.process import ProcessSpec  # a run of cache hits spawns nothing

        pspec = ProcessSpec(
            command=command,
            cwd=node.project.dir,
            env=env.env,
            timeout_ms=None if spec.persistent else timeout,
            kill_grace_ms=self.ctx.options.kill_grace_ms,
            interactive=spec.interactive,
            prefix=prefix,
            pass_fds=pass_fds,
        )
        return pspec, env.secrets

    def _execute(self, node: PlanNode, spec: ExecSpec, command: str, ticket: Ticket) -> Done:
        tid, cache = node.id, self.ctx.cache
        sandbox: tuple[str, ...] = ()
        refusal = None
        if spec.sandbox is not None:
            from vx.trace.sandbox import SandboxUnavailableError, sandbox_prefix

            try:
                sandbox = sandbox_prefix(
                    self.ctx.root,
                    node.project.dir,
                    spec.sandbox.read,
                    spec.sandbox.write,
                    path=self.ctx.env.get("PATH"),
                )
            except SandboxUnavailableError as exc:
                refusal = f"sandbox not available: {exc}"  # never run it unsandboxed
        miss = self.ctx.history.miss_reason(tid)
        retries = spec.retries if spec.retries is not None else self.ctx.options.retry
        if spec.interactive:
            retries = 0
        attempt = 0
        observer, audit = None, None
        while True:
            attempt += 1
            if self.auditor is not None and refusal is None:
                if observer is not None:
                    observer.discard()  # a retry is traced afresh: the last attempt is judged
                observer, audit = self.auditor.begin(node)
            prefix = (observer.prefix if observer is not None else ()) + sandbox
            fds = observer.pass_fds if observer is not None else ()
            pspec, secrets = self._process_spec(node, spec, command, prefix, fds)
            capture = self._capture(tid, secrets)
            self.ctx.emit(TaskStarted(tid, command, attempt))
            from vx.run.process import ProcessResult, run_process

            remote = self.ctx.remote
            if refusal is not None:
                result = ProcessResult(exit_code=1, duration_ms=0.0, spawn_error=refusal)
            elif remote is not None and remote.takes(node):
                result = remote.run(node, pspec, capture.feed, self.ctx.stopping)
            else:
                try:
                    result = run_process(pspec, capture.feed, registry=self.ctx.registry)
                finally:
                    if observer is not None:
                        observer.spawned()
            if result.spawn_error:
                capture.feed(Stream.STDERR, result.spawn_error + "\n")
            capture.flush()
            more = attempt <= retries and ticket.attempts_allowed and refusal is None
            if result.exit_code == 0 or not more or self._halted():
                break
        status = self._status(result)
        reason = "timed out" if result.timed_out else None
        kept_back: tuple[str, ...] = ()
        if status is TaskStatus.FAILED:
            from vx.run.withheld import withheld  # only a failure says what it lacked

            said = "".join([command, "\n", *(text for _, text in capture.log)])
            kept_back = withheld(self.ctx.env, pspec.env, said)
        if self.auditor is not None and observer is not None:
            audit = self.auditor.finish(node, observer)
        refused = audit is not None and self._audited(tid, audit, status)
        save_note = None
        if (
            status is TaskStatus.SUCCESS
            and cache.cached(tid)
            and not ticket.tainted
            and not refused
        ):
            produced = Produced(
                capture.log, result.duration_ms, result.cpu_ms, result.peak_rss_bytes
            )
            save_note = cache.save(tid, produced)
        if save_note:
            self.ctx.emit(Notice(f"[vx] {tid}: {save_note}"))
        if status is TaskStatus.SUCCESS and cache.cached(tid) and (refused or save_note):
            reason = NOT_SAVED
        if status is TaskStatus.SUCCESS and cache.cached(tid):
            unmatched = cache.unmatched_outputs(tid)
            if unmatched:
                reason = EMPTY_OUTPUTS
                self.ctx.emit(
                    Notice(
                        f"[vx] {tid}: its outputs ({unmatched}) matched no file after a"
                        " successful run, so a hit restores nothing — make cache.outputs.files"
                        " name what the task writes"
                    )
                )
        # A task run past a failed dependency ran on inputs its key does not vouch for.
        judged = status in _JUDGED and not ticket.tainted
        flaky = self.ctx.history.flaky(tid, status, attempt) if judged else None
        self.ctx.emit(
            TaskFinished(
                tid,
                status,
                CacheOutcome.MISS if cache.cached(tid) else CacheOutcome.NO_CACHE,
                duration_ms=result.duration_ms,
                exit_code=result.exit_code,
                key=cache.key(tid),
                timed_out=result.timed_out,
                reason=reason,
                cpu_ms=result.cpu_ms,
                peak_rss_bytes=_own_peak(result.peak_rss_bytes),
                attempts=attempt,
                miss=miss,
                withheld=kept_back,
                flaky=flaky,
                tainted=ticket.tainted,
                audit=audit,
            )
        )
        return Done(_RESULT[status])

    def _audited(self, tid: TaskId, audit: AuditReport, status: TaskStatus) -> bool:
        """Say the audit's findings, one line each; True when `strict` refuses the save."""
        from vx.audit.report import audit_lines

        for line in audit_lines(audit):
            self.ctx.emit(Notice(f"[vx] {tid}: {line}"))
        strict = self.ctx.options.audit == "strict"
        if not strict or not (audit.faults or not audit.traced):
            return False
        if status is TaskStatus.SUCCESS and self.ctx.cache.cached(tid):
            why = "it was not traced" if not audit.traced else _count(len(audit.faults))
            self.ctx.emit(Notice(f"[vx] {tid}: audit strict: {why}, nothing saved"))
        return True

    def _halted(self) -> bool:
        return self.ctx.stopping.is_set() or self.ctx.halted.is_set()

    def _status(self, result: ProcessResult) -> TaskStatus:
        """An attempt that ended once the run was stopping is aborted whatever its exit code:
        a task that traps the signal and exits 0 may have written half its outputs."""
        if self.ctx.stopping.is_set() and not result.timed_out:
            return TaskStatus.ABORTED
        if result.exit_code == 0:
            return TaskStatus.SUCCESS
        return TaskStatus.FAILED

    def _serve(self, node: PlanNode, spec: ExecSpec, command: str) -> Done:
        """Start a persistent task and hold the worker until it is ready (or never will be)."""
        from vx.run.process import SpawnError, start_process

        tid = node.id
        pspec, secrets = self._process_spec(node, spec, command)
        pattern = re.compile(spec.ready_when) if spec.ready_when else None
        capture = _ReadyCapture(tid, secrets, self.ctx.emit, pattern)
        self.ctx.emit(TaskStarted(tid, command))
        started = self.clock()
        try:
            handle = start_process(pspec, capture.feed, registry=self.ctx.registry)
        except SpawnError as exc:
            capture.feed(Stream.STDERR, f"{exc}\n")
            return self._never_ready(tid, "spawn", 127, started)
        server = self.ctx.servers.watch(tid, handle, requested=node.surfaced)
        timeout = spec.timeout_ms if spec.timeout_ms is not None else self.ctx.options.timeout_ms
        deadline = None if timeout is None else started + timeout / 1000
        notice_at: float | None = started + self.ctx.options.ready_notice_ms / 1000
        # A release ends the waits it found; a server started after it is waited on as ever.
        released = None if self.ctx.released.is_set() else self.ctx.released
        while not capture.ready.wait(_POLL_S):
            now = self.clock()
            if server.exited.is_set():
                code = server.result.exit_code if server.result else 1
                status = TaskStatus.ABORTED if self.ctx.stopping.is_set() else None
                return self._never_ready(tid, "exited", code, started, status)
            if self.ctx.stopping.is_set():
                server.exited.wait()
                code = server.result.exit_code if server.result else 130
                return self._never_ready(tid, "exited", code, started, TaskStatus.ABORTED)
            if released is not None and released.is_set():
                return self._let_go(tid, server, started)
            if deadline is not None and now >= deadline:
                handle.terminate()
                server.exited.wait()
                code = server.result.exit_code if server.result else 143
                return self._never_ready(tid, "timeout", code, started)
            if notice_at is not None and now >= notice_at:
                notice_at = None
                self.ctx.emit(
                    Notice(
                        f"[vx] {tid} is not ready yet; waiting for output matching"
                        f" /{spec.ready_when}/"
                    )
                )
        server.ready = True
        self.ctx.emit(TaskReady(tid))
        self._still_running(tid, started)
        return Done(Result.OK)

    def _still_running(self, tid: TaskId, started: float, reason: str | None = None) -> None:
        """The row of a server the run goes on without: its process keeps running."""
        self.ctx.emit(
            TaskFinished(
                tid,
                TaskStatus.RUNNING,
                CacheOutcome.NO_CACHE,
                duration_ms=(self.clock() - started) * 1000,
                key=self.ctx.cache.key(tid),
                reason=reason,
            )
        )

    def _let_go(self, tid: TaskId, server: Server, started: float) -> Done:
        """Stop waiting for a server not yet ready: it keeps running (its owner stops it), and
        what depends on it is skipped, since it never said it was ready; nothing failed."""
        server.let_go = True
        self._still_running(tid, started, "not ready yet")
        return Done(Result.UNREADY)

    def _never_ready(
        self,
        tid: TaskId,
        why: str,
        code: int,
        started: float,
        status: TaskStatus | None = None,
    ) -> Done:
        status = status or TaskStatus.FAILED
        label = {"timeout": "timed out", "exited": "exited", "spawn": "spawn failed"}[why]
        self.ctx.emit(
            TaskFinished(
                tid,
                status,
                CacheOutcome.NO_CACHE,
                duration_ms=(self.clock() - started) * 1000,
                exit_code=code,
                key=self.ctx.cache.key(tid),
                timed_out=why == "timeout",
                reason=f"never ready: {label}",
                not_ready=why,
            )
        )
        return Done(_RESULT[status])


def _count(n: int) -> str:
    return f"{n} finding{'s' if n != 1 else ''}"


_JUDGED = frozenset({TaskStatus.SUCCESS, TaskStatus.FAILED})
"""The outcomes a flaky verdict weighs; an aborted attempt says nothing of the task."""

_RESULT = {
    TaskStatus.SUCCESS: Result.OK,
    TaskStatus.RUNNING: Result.OK,
    TaskStatus.FAILED: Result.FAILED,
    TaskStatus.ABORTED: Result.ABORTED,
    TaskStatus.SKIPPED: Result.SKIPPED,
    TaskStatus.NOT_RUN: Result.SKIPPED,
}


class _Capture:
    """One attempt's output: masked per stream, emitted as it arrives, kept for the cache."""

    def __init__(
        self, tid: TaskId, secrets: tuple[str, ...], emit: Callable[[TaskOutput], None]
    ) -> None:
        self.tid = tid
        self.emit = emit
        self.maskers = {Stream.STDOUT: StreamMasker(secrets), Stream.STDERR: StreamMasker(secrets)}
        self.log: list[tuple[Stream, str]] = []

    def feed(self, stream: Stream, text: str) -> None:
        self._out(stream, self.maskers[stream].feed(text))

    def flush(self) -> None:
        for stream, masker in self.maskers.items():
            self._out(stream, masker.flush())

    def _out(self, stream: Stream, text: str) -> None:
        if text:
            self.log.append((stream, text))
            self.emit(TaskOutput(self.tid, stream, text))


class _ReadyCapture(_Capture):
    """A persistent task's output, also watched for its `readyWhen` pattern."""

    def __init__(
        self,
        tid: TaskId,
        secrets: tuple[str, ...],
        emit: Callable[[TaskOutput], None],
        pattern: re.Pattern[str] | None,
    ) -> None:
        super().__init__(tid, secrets, emit)
        self.pattern = pattern
        self.tail = ""
        self.ready = threading.Event()
        if pattern is None:
            self.ready.set()

    def feed(self, stream: Stream, text: str) -> None:
        super().feed(stream, text)
        if self.pattern is not None and not self.ready.is_set():
            self.tail = (self.tail + text)[-_READY_TAIL:]
            if self.pattern.search(self.tail):
                self.ready.set()
        self.log.clear()  # a server's output is streamed, never saved


def _own_peak(peak: int | None) -> int | None:
    """The task's peak RSS, or None when it never rose above vx's own at the fork.

    The kernel hands a child the parent's high-water mark, so a light task would report
    vx's footprint as its own.
    """
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return peak if peak is not None and peak > own else None
