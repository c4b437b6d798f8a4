"""`vx.otel.tracer` and `vx.otel.switch`: events in, the span model out, with the real SDK."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, NamedTuple

import pytest

from vx.events import (
    CacheOutcome,
    MissReason,
    PlannedTask,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    TaskStatus,
)
from vx.ids import TaskId
from vx.otel.switch import export_bound, traces_endpoint, wanted

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import StatusCode

from vx.otel.tracer import RunTracer


class Takeup(NamedTuple):
    """A worker taking a task up: the tracer is asked for its variables."""

    id: TaskId
    deps: tuple[TaskId, ...] = ()


LIB, APP, DOCS = TaskId("lib", "build"), TaskId("app", "build"), TaskId("docs", "build")


@pytest.mark.parametrize(
    ("env", "endpoint"),
    [
        ({}, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "http://c:4318/v1/traces"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, "http://c:4318/v1/traces"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, None),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x",
            },
            "http://t/x",
        ),
    ],
)
def test_the_endpoint_follows_the_standard_variables(
    env: dict[str, str], endpoint: str | None
) -> None:
    assert traces_endpoint(env) == endpoint


@pytest.mark.parametrize(
    ("env", "bound"),
    [
        ({}, 2.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "5"}, 5.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "5", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0.5"}, 0.5),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, 2.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"}, 2.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "inf"}, 2.0),
    ],
)
def test_the_export_bound_follows_the_sdks_timeout(env: dict[str, str], bound: float) -> None:
    assert export_bound(env, 2.0) == bound


def test_the_sdk_switch_turns_tracing_off() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert wanted(env)
    assert not wanted({**env, "OTEL_SDK_DISABLED": "true"})
    assert not wanted({})


def traced(events_and_takeups: list[object]) -> tuple[list[ReadableSpan], dict[TaskId, str]]:
    """Feed a run to a tracer on a clock ticking 1 ms per reading; its spans and traceparents."""
    shipped: list[ReadableSpan] = []
    ticks = itertools.count(1_000_000_000, 1_000_000)
    tracer = RunTracer(
        resource=Resource.create({}), ship=shipped.extend, env={}, clock=lambda: next(ticks)
    )
    parents: dict[TaskId, str] = {}
    for item in events_and_takeups:
        if isinstance(item, Takeup):
            parents[item.id] = tracer.task_env(item.id, item.deps)["TRACEPARENT"]
        else:
            tracer.on_event(item)  # type: ignore[arg-type]
    return shipped, parents


def started() -> RunStarted:
    tasks = tuple(PlannedTask(t, "make", requested=True) for t in (LIB, APP, DOCS))
    return RunStarted("0190", tasks, projects_in_run=3, projects_total=3, concurrency=2)


def test_a_run_with_a_retried_task_a_failure_and_a_skip() -> None:
    spans, parents = traced(
        [
            started(),
            Takeup(LIB),
            TaskStarted(LIB, "make", 1),
            TaskStarted(LIB, "make", 2),
            TaskFinished(
                LIB,
                TaskStatus.SUCCESS,
                CacheOutcome.MISS,
                duration_ms=1,
                attempts=2,
                miss=MissReason("file", "src/a.ts"),
            ),
            Takeup(APP, (LIB,)),
            TaskStarted(APP, "make", 1),
            TaskFinished(APP, TaskStatus.FAILED, CacheOutcome.MISS, duration_ms=1, exit_code=2),
            TaskFinished(DOCS, TaskStatus.SKIPPED, CacheOutcome.MISS, blocked_by=APP),
            RunFinished(1, 10.0),
        ]
    )
    by_id = {s.context.span_id: s for s in spans}
    named = {
        s.name: s for s in spans if s.name in ("vx run", "lib#build", "app#build", "docs#build")
    }
    run = named["vx run"]
    assert run.parent is None
    assert run.status.status_code is StatusCode.ERROR
    for task in ("lib#build", "app#build", "docs#build"):
        assert named[task].parent is not None
        assert named[task].parent.span_id == run.context.span_id
    children = sorted(
        (by_id[s.parent.span_id].name, s.name, s.status.status_code.name)
        for s in spans
        if s.parent is not None and s.parent.span_id != run.context.span_id
    )
    assert children == [
        ("app#build", "execute", "ERROR"),
        ("app#build", "queue", "UNSET"),
        ("lib#build", "execute", "ERROR"),  # the first attempt, retried
        ("lib#build", "execute", "UNSET"),
        ("lib#build", "queue", "UNSET"),
        ("lib#build", "save", "UNSET"),
    ]
    assert named["lib#build"].attributes["vx.task.miss"] == "src/a.ts changed"
    assert named["app#build"].attributes["process.exit.code"] == 2
    assert named["app#build"].status.status_code is StatusCode.ERROR
    assert named["docs#build"].attributes["vx.task.blocked_by"] == "app#build"
    assert named["docs#build"].start_time == named["docs#build"].end_time
    lib_span = f"{named['lib#build'].context.span_id:016x}"
    assert parents[LIB].split("-")[2] == lib_span
    # app's wait began when lib ended, not when the run started
    queue = next(
        s
        for s in spans
        if s.name == "queue" and s.parent.span_id == named["app#build"].context.span_id
    )
    assert queue.start_time == named["lib#build"].end_time


def test_a_hit_is_a_restore() -> None:
    spans, _ = traced(
        [
            started(),
            Takeup(LIB),
            TaskFinished(LIB, TaskStatus.SUCCESS, CacheOutcome.LOCAL, duration_ms=0.5),
            RunFinished(0, 1.0),
        ]
    )
    assert sorted(s.name for s in spans) == ["lib#build", "queue", "restore", "vx run"]
    (task,) = (s for s in spans if s.name == "lib#build")
    assert task.attributes["vx.cache.outcome"] == "local"
    assert task.status.status_code is StatusCode.UNSET


def test_no_run_no_traceparent() -> None:
    tracer = RunTracer(resource=Resource.create({}), ship=lambda _: None, env={})
    assert tracer.task_env(LIB, ()) == {}
