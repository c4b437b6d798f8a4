"""Auditing inside a run: trace an executed task, then hold the trace against its config.

Only executed tasks are traced (a hit runs nothing); a persistent or interactive task is not
(a server never ends, a terminal is not a build). Where the tracer cannot start, the task runs
untraced and its report says `not traced` and why, never a clean bill.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from vx.events import AuditReport

if TYPE_CHECKING:
    from vx.audit.check import WorkspaceView
    from vx.run.context import RunContext
    from vx.run.plan import PlanNode


# A log lives for one task: memory (tmpfs) where the host has it, so making and removing one
# never waits behind the cache's fsyncs on the disk's journal; else the temp directory.
# mkstemp makes it O_EXCL and 0600 there, as in any shared temp directory.
_SHM = "/dev/shm"  # noqa: S108
_LOG_DIR = _SHM if os.access(_SHM, os.W_OK | os.X_OK) else None


class TaskAuditor:
    """One run's auditor: hands out tracer prefixes and reads their logs back into reports."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._view: WorkspaceView | None = None

    def begin(self, node: PlanNode) -> tuple[tuple[str, ...], Path | None, AuditReport | None]:
        """(argv prefix, log path, early report): the prefix is () and the report says why
        when this task cannot be traced."""
        spec = node.task.exec_spec
        if spec is not None and (spec.persistent or spec.interactive):
            return (), None, None
        from vx.trace.probe import tracing_available

        probe = tracing_available(self.ctx.env.get("PATH"))
        if not probe.ok:
            return (), None, AuditReport(traced=False, reason=probe.reason)
        from vx.trace.strace import strace_prefix

        fd, name = tempfile.mkstemp(prefix="vx-trace-", suffix=".log", dir=_LOG_DIR)
        os.close(fd)
        log = Path(name)
        return strace_prefix(log, path=self.ctx.env.get("PATH")), log, None

    def finish(self, node: PlanNode, log: Path) -> AuditReport:
        """Read the task's trace and compare it with its declaration; the log is removed."""
        from vx.audit.check import TaskView, audit_task
        from vx.trace.parse import parse_log

        try:
            if log.stat().st_size == 0:  # the command never started under the tracer
                return AuditReport(traced=False, reason="the tracer saw nothing run")
            trace = parse_log(log, node.project.dir)
        except OSError as exc:
            return AuditReport(traced=False, reason=f"the trace could not be read: {exc}")
        finally:
            with contextlib.suppress(OSError):
                log.unlink()
        graph = self.ctx.plan.graph
        from vx.graph.algo import closure

        upstream = closure(graph.deps, graph.deps.get(node.id, ()))
        ws = self.ctx.plan.workspace
        view = TaskView(
            task_id=str(node.id),
            project=node.project,
            task=node.task,
            upstream=frozenset(str(t) for t in upstream),
            package_deps=frozenset(ws.package_deps.get(node.project.name, ())),
        )
        return audit_task(trace, self._workspace(), view)

    def _workspace(self) -> WorkspaceView:
        with self._lock:
            if self._view is None:
                from vx.audit.check import WorkspaceView

                self._view = WorkspaceView(self.ctx.plan.workspace, self._tracked)
            return self._view

    def _tracked(self) -> frozenset[str]:
        from vx.git import GitError, ls_files_stage

        try:
            return frozenset(ls_files_stage(self.ctx.root, env=self.ctx.env))
        except GitError:
            return frozenset()
