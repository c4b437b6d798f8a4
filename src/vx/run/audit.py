"""Auditing inside a run: trace an executed task, then hold the trace against its config.

Only executed tasks are traced (a hit runs nothing); a persistent or interactive task is not
(a server never ends, a terminal is not a build). Where the tracer cannot start, the task runs
untraced and its report says `not traced` and why, never a clean bill.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from vx.events import AuditReport

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from vx.audit.check import WorkspaceView
    from vx.run.context import RunContext
    from vx.run.plan import PlanNode
    from vx.trace.observer import Observer


class TaskAuditor:
    """One run's auditor: puts executed tasks under the tracer and reads back their reports."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._view: WorkspaceView | None = None

    def begin(self, node: PlanNode) -> tuple[Observer | None, AuditReport | None]:
        """(observer, early report): no observer, and a report saying why, when this task
        cannot be traced; neither for a task that is never traced (a server, a terminal)."""
        spec = node.task.exec_spec
        if spec is not None and (spec.persistent or spec.interactive):
            return None, None
        from vx.trace.observer import TracingUnavailableError, observer

        env, root = self.ctx.env, os.fspath(self.ctx.root)
        within = tuple(dict.fromkeys((root, os.path.realpath(root))))  # audit reads no other
        try:
            return observer(
                node.project.dir,
                path=env.get("PATH"),
                tracer=env.get("VX_TRACER", "auto"),
                within=within,
            ), None
        except TracingUnavailableError as exc:
            return None, AuditReport(traced=False, reason=str(exc))

    def finish(self, node: PlanNode, observer: Observer) -> AuditReport:
        """Read the task's trace and compare it with its declaration."""
        from vx.audit.check import TaskView, audit_task

        trace = observer.finish()
        if trace is None:
            return AuditReport(traced=False, reason=observer.reason)
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
                from vx.cache.inputs import WORKSPACE_FILES

                self._view = WorkspaceView(
                    self.ctx.plan.workspace,
                    self._tracked,
                    ignored=self._ignored,
                    keyed=frozenset(WORKSPACE_FILES),
                )
            return self._view

    def _ignored(self, paths: Iterable[str]) -> frozenset[str]:
        from vx.git import check_ignore

        return check_ignore(self.ctx.root, paths, env=self.ctx.env)

    def _tracked(self) -> Collection[str]:
        """What git tracks: the index the run planned with, else (a run that had none) git's."""
        if self.ctx.tracked:
            return self.ctx.tracked
        from vx.git import GitError, ls_files_stage

        try:
            return frozenset(ls_files_stage(self.ctx.root, env=self.ctx.env))
        except GitError:
            return frozenset()
