"""A run's events as OpenTelemetry spans: one for the run, one per task, and its phases.

The task span starts when a worker takes the task up, which is also when vx asks for the
variables handed to the task (`task_env`): the span exists by then, so `TRACEPARENT` can
name it and a task's own spans nest under it. Its children are `queue` (from its last
dependency's end, or the run's start, to the take-up), `restore` for a hit, one `execute`
per attempt and `save` after a successful execution. Attributes are counts, names, keys and
verdicts, clipped; no output and no variable value ever becomes one.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from vx.events import (
    CacheOutcome,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskReady,
    TaskStarted,
    TaskStatus,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from opentelemetry.context import Context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.trace import Span

    from vx.events import Event
    from vx.ids import TaskId

_CLIP = 256
_HITS = frozenset({CacheOutcome.LOCAL, CacheOutcome.REMOTE, CacheOutcome.UP_TO_DATE})
_PROPAGATOR = TraceContextTextMapPropagator()


class _Collect(SpanProcessor):
    """Keeps every ended span until the run ends; the run's spans leave in one export."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self._spans.append(span)

    def take(self) -> list[ReadableSpan]:
        with self._lock:
            spans, self._spans = self._spans, []
        return spans


class _Task:
    """One task's open spans."""

    def __init__(self, span: Span, taken_ns: int) -> None:
        self.span = span
        self.taken_ns = taken_ns
        self.attempt: Span | None = None
        self.attempt_ns = 0


class RunTracer:
    """Turns each run's events into spans and hands them to `ship` when the run ends.

    `env` is vx's environment: a `TRACEPARENT` (and `TRACESTATE`) there makes the run span a
    child of the caller's, as a CI job's trace would want. `on_event` is the telemetry hook,
    `task_env` the variables for a task being taken up; both are safe from any thread.
    """

    def __init__(
        self,
        *,
        resource: Resource,
        ship: Callable[[list[ReadableSpan]], None],
        env: Mapping[str, str],
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self._collect = _Collect()
        provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        provider.add_span_processor(self._collect)
        self._tracer = provider.get_tracer("vx")
        self._ship = ship
        self._clock = clock
        carrier = {"traceparent": env.get("TRACEPARENT", "")}
        if env.get("TRACESTATE"):
            carrier["tracestate"] = env["TRACESTATE"]
        self._parent: Context | None = (
            _PROPAGATOR.extract(carrier) if carrier["traceparent"] else None
        )
        self._lock = threading.Lock()
        self._run: Span | None = None
        self._run_ns = 0
        self._tasks: dict[TaskId, _Task] = {}
        self._ended: dict[TaskId, int] = {}

    def on_event(self, event: Event) -> None:
        """The telemetry seam: every event of a run, in order."""
        with self._lock:
            if isinstance(event, RunStarted):
                self._started(event)
            elif isinstance(event, TaskStarted):
                self._attempt(event)
            elif isinstance(event, TaskReady):
                task = self._tasks.get(event.id)
                if task is not None:
                    task.span.add_event("ready", timestamp=self._clock())
            elif isinstance(event, TaskFinished):
                self._finished(event)
            elif isinstance(event, RunFinished):
                self._run_finished(event)

    def task_env(self, tid: TaskId, deps: tuple[TaskId, ...]) -> Mapping[str, str]:
        """Open the task's span as a worker takes it up; `TRACEPARENT` naming it for the task."""
        with self._lock:
            if self._run is None:
                return {}
            now = self._clock()
            parent = trace.set_span_in_context(self._run)
            span = self._tracer.start_span(
                str(tid), context=parent, kind=SpanKind.INTERNAL, start_time=now
            )
            span.set_attributes(
                {"vx.task.id": str(tid), "vx.task.project": tid.project, "vx.task.name": tid.task}
            )
            self._tasks[tid] = _Task(span, now)
            ready = max((self._ended.get(d, 0) for d in deps), default=0)
            queued = max(ready, self._run_ns)
            if queued < now:
                self._child(span, "queue", queued, now)
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
        return {name.upper(): value for name, value in carrier.items()}

    def _started(self, event: RunStarted) -> None:
        self._tasks.clear()
        self._ended.clear()
        self._run_ns = self._clock()
        self._run = self._tracer.start_span(
            "vx run", context=self._parent, kind=SpanKind.INTERNAL, start_time=self._run_ns
        )
        self._run.set_attributes(
            {
                "vx.run.id": event.run_id,
                "vx.run.tasks": sum(1 for t in event.tasks if not t.group),
                "vx.run.concurrency": event.concurrency,
                "vx.run.cache": _clip(event.cache_label),
            }
        )

    def _attempt(self, event: TaskStarted) -> None:
        task = self._tasks.get(event.id)
        if task is None:
            return
        now = self._clock()
        if task.attempt is not None:
            task.attempt.set_status(Status(StatusCode.ERROR, "retried"))
            task.attempt.end(end_time=now)
        task.attempt = self._tracer.start_span(
            "execute", context=trace.set_span_in_context(task.span), start_time=now
        )
        task.attempt.set_attribute("vx.task.attempt", event.attempt)
        task.attempt_ns = now

    def _finished(self, event: TaskFinished) -> None:
        now = self._clock()
        self._ended[event.id] = now
        task = self._tasks.pop(event.id, None)
        if task is None:  # skipped or never run: no worker took it up
            if self._run is None:
                return
            span = self._tracer.start_span(
                str(event.id), context=trace.set_span_in_context(self._run), start_time=now
            )
            span.set_attributes(
                {
                    "vx.task.id": str(event.id),
                    "vx.task.project": event.id.project,
                    "vx.task.name": event.id.task,
                }
            )
            task = _Task(span, now)
        span = task.span
        if event.cache in _HITS:
            self._child(span, "restore", max(task.taken_ns, now - _ns(event.duration_ms)), now)
        elif task.attempt is not None:
            ran_until = min(now, task.attempt_ns + _ns(event.duration_ms))
            if event.status is not TaskStatus.SUCCESS:
                task.attempt.set_status(Status(StatusCode.ERROR, _failure(event)))
            task.attempt.end(end_time=ran_until)
            if event.status is TaskStatus.SUCCESS and event.cache is CacheOutcome.MISS:
                self._child(span, "save", ran_until, now)
        span.set_attributes(_task_attributes(event))
        if event.status is TaskStatus.FAILED:
            span.set_status(Status(StatusCode.ERROR, _failure(event)))
        span.end(end_time=now)

    def _run_finished(self, event: RunFinished) -> None:
        run, self._run = self._run, None
        if run is None:
            return
        run.set_attributes(
            {"vx.run.exit_code": event.exit_code, "vx.run.interrupted": event.interrupted}
        )
        if event.exit_code:
            run.set_status(Status(StatusCode.ERROR, f"exit {event.exit_code}"))
        now = self._clock()
        for task in self._tasks.values():  # servers still up, tasks a stop cut short
            if task.attempt is not None:
                task.attempt.end(end_time=now)
            task.span.end(end_time=now)
        self._tasks.clear()
        run.end(end_time=now)
        self._ship(self._collect.take())

    def _child(self, parent: Span, name: str, start: int, end: int) -> None:
        child = self._tracer.start_span(
            name, context=trace.set_span_in_context(parent), start_time=start
        )
        child.end(end_time=end)


def _task_attributes(event: TaskFinished) -> dict[str, str | int | float | bool]:
    attrs: dict[str, str | int | float | bool] = {
        "vx.task.status": str(event.status),
        "vx.cache.outcome": str(event.cache),
        "vx.task.attempts": event.attempts,
    }
    optional: dict[str, str | int | float | None] = {
        "vx.cache.key": event.key,
        "process.exit.code": event.exit_code,
        "vx.task.miss": event.miss.describe() if event.miss else None,
        "vx.task.reason": event.reason,
        "vx.task.blocked_by": str(event.blocked_by) if event.blocked_by else None,
        "vx.task.cpu_ms": event.cpu_ms,
        "vx.task.peak_rss_bytes": event.peak_rss_bytes,
        "vx.cache.saved_ms": event.saved_ms or None,
    }
    for name, value in optional.items():
        if value is not None:
            attrs[name] = _clip(value) if isinstance(value, str) else value
    return attrs


def _failure(event: TaskFinished) -> str:
    if event.reason:
        return _clip(event.reason)
    return f"exit {event.exit_code}" if event.exit_code is not None else str(event.status)


def _ns(ms: float) -> int:
    return int(ms * 1_000_000)


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "…"
