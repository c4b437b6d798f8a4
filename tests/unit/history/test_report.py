"""The run report's words, lanes, trace and critical path, from hand-built outcomes."""

from __future__ import annotations

import pytest

from vx.events import CacheOutcome, TaskFinished, TaskStatus
from vx.history.report import RunReport, assign_lanes, chrome_trace, markdown, run_critical_path
from vx.ids import TaskId

S, F = TaskStatus, CacheOutcome


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def done(
    text: str, status: TaskStatus, cache: CacheOutcome, ms: float, **kw: object
) -> TaskFinished:
    return TaskFinished(t(text), status, cache, duration_ms=ms, **kw)  # type: ignore[arg-type]


def test_an_interrupted_run_names_what_it_did_not_count() -> None:
    report = RunReport(
        (
            done("web#build", S.SUCCESS, F.MISS, 1230),
            done("web#test", S.SUCCESS, F.LOCAL, 5, saved_ms=2010),
            done("api#test", S.SUCCESS, F.UP_TO_DATE, 3, saved_ms=640),
            done("api#e2e", S.FAILED, F.MISS, 40, exit_code=137),
            done("api#lint", S.FAILED, F.NO_CACHE, 9, exit_code=143, timed_out=True),
            done("web#serve", S.ABORTED, F.NO_CACHE, 20, exit_code=130),
            done("web#deploy", S.NOT_RUN, F.NO_CACHE, 0),
        ),
        exit_code=130,
        wall_ms=1300,
        interrupted=True,
    )
    assert markdown(report) == (
        "## vx run — interrupted\n"
        "\n"
        "**5 tasks** · 3 success · 2 failed · 2 cached (1 up-to-date, 1 restored)"
        " · 1.30s total · 2.65s saved · not counted: 1 aborted, 1 not run\n"
        "\n"
        "| Task       | Status                           | Cache      | Duration |\n"
        "| ---------- | -------------------------------- | ---------- | -------- |\n"
        "| web#build  | success                          | miss       | 1.23s    |\n"
        "| web#test   | success                          | local      | 5ms      |\n"
        "| api#test   | success                          | up-to-date | 3ms      |\n"
        "| api#e2e    | failed (exit 137, 128 + SIGKILL) | miss       | 40ms     |\n"
        "| api#lint   | failed (timed out, exit 143)     | no-cache   | 9ms      |\n"
        "| web#serve  | aborted                          | —          | 20ms     |\n"
        "| web#deploy | not run                          | —          | —        |\n"
    )


def test_a_pipe_in_a_cell_is_escaped() -> None:
    report = RunReport((done("a#b", S.FAILED, F.MISS, 1, reason="x|y", exit_code=1),), 1, 1)
    assert "| failed (x\\|y, exit 1) |" in markdown(report)


@pytest.mark.parametrize(
    ("spans", "apart", "lanes"),
    [
        ({}, 0, {}),
        ({"a#x": (0, 10), "b#x": (10, 20)}, 0, {"a#x": 1, "b#x": 1}),
        ({"a#x": (0, 10), "b#x": (10, 20)}, 1, {"a#x": 1, "b#x": 2}),
        ({"a#x": (0, 10), "b#x": (5, 20), "c#x": (12, 30)}, 0, {"a#x": 1, "b#x": 2, "c#x": 1}),
        (
            {"a#x": (0, 50), "b#x": (0, 10), "c#x": (0, 10), "d#x": (20, 30)},
            0,
            {"a#x": 3, "b#x": 1, "c#x": 2, "d#x": 1},
        ),
    ],
)
def test_lanes_are_the_fewest_that_keep_spans_apart(
    spans: dict[str, tuple[int, int]], apart: int, lanes: dict[str, int]
) -> None:
    got = assign_lanes({t(k): v for k, v in spans.items()}, apart_ns=apart)
    assert {str(k): v for k, v in got.items()} == lanes


def test_the_trace_has_a_complete_event_per_task_that_ran_in_microseconds() -> None:
    report = RunReport(
        (
            done("a#build", S.SUCCESS, F.MISS, 2, key="0123456789abcdef", cpu_ms=1.5),
            done("b#build", S.SUCCESS, F.REMOTE, 1),
            done("c#build", S.SKIPPED, F.MISS, 0, blocked_by=t("x#y")),
        ),
        exit_code=0,
        wall_ms=5,
        spans={t("a#build"): (1000, 3000), t("b#build"): (2000, 2500), t("c#build"): (9, 9)},
    )
    spans = [e for e in chrome_trace(report)["traceEvents"] if e["ph"] == "X"]  # type: ignore[attr-defined]
    assert spans == [
        {
            "name": "a#build",
            "cat": "success",
            "ph": "X",
            "ts": 1.0,
            "dur": 2.0,
            "pid": 1,
            "tid": 1,
            "args": {"exitCode": 0, "hash": "0123456789abcdef", "cpuMs": 1.5},
        },
        {
            "name": "b#build",
            "cat": "cache-hit-remote",
            "ph": "X",
            "ts": 2.0,
            "dur": 0.5,
            "pid": 1,
            "tid": 2,
            "args": {"exitCode": 0},
        },
    ]


def test_the_critical_path_follows_measured_durations_through_groups() -> None:
    order = tuple(t(x) for x in ("lib#build", "ui#build", "app#all", "app#build", "app#test"))
    deps = {
        t("app#all"): (t("lib#build"), t("ui#build")),
        t("app#build"): (t("app#all"),),
        t("app#test"): (t("app#build"),),
    }
    finished = (
        done("lib#build", S.SUCCESS, F.MISS, 10),
        done("ui#build", S.SUCCESS, F.MISS, 300),
        done("app#build", S.SUCCESS, F.LOCAL, 4),
        done("app#test", S.SUCCESS, F.MISS, 50),
    )
    spans = {f.id: (0, 1) for f in finished}
    report = RunReport(finished, 0, 400, spans=spans, order=order, deps=deps)
    assert [str(x) for x in run_critical_path(report)] == ["ui#build", "app#build", "app#test"]
