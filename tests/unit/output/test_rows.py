"""One-line task rows, durations and failure labels, against the manual's examples."""

from __future__ import annotations

import pytest

from vx.events import CacheOutcome, TaskFinished, TaskStatus
from vx.ids import TaskId
from vx.output.rows import (
    failure_detail,
    format_duration,
    format_hash_line,
    format_row,
    outcome_word,
    paint_outcome,
)
from vx.output.style import Style

PLAIN = Style(color=False)
LIB_BUILD = TaskId("lib", "build")


def done(text, status, cache=CacheOutcome.MISS, **kw):
    return TaskFinished(TaskId.parse(text), status, cache, **kw)


@pytest.mark.parametrize(
    ("ms", "expected"),
    [
        (0, "0ms"),
        (4, "4ms"),
        (4.4, "4ms"),
        (568, "568ms"),
        (999.4, "999ms"),
        (999.6, "1.00s"),
        (1000, "1.00s"),
        (2100, "2.10s"),
        (5200, "5.20s"),
        (5340, "5.34s"),
        (59_994, "59.99s"),
        (59_996, "1m 0s"),
        (63_000, "1m 3s"),
        (3_599_000, "59m 59s"),
        (3_600_000, "1h 0m"),
        (7_500_000, "2h 5m"),
        (-3, "0ms"),
    ],
)
def test_durations(ms, expected):
    assert format_duration(ms) == expected


def test_the_broad_run_rows_of_the_manual():
    rows = [
        format_row(
            done("@vzn/vx#format-check", TaskStatus.SUCCESS, CacheOutcome.LOCAL, duration_ms=4),
            PLAIN,
        ),
        format_row(done("@vzn/vx#test", TaskStatus.SUCCESS, duration_ms=5200), PLAIN),
    ]
    assert rows == [
        " ⇢     4ms success local    @vzn/vx#format-check",
        " ⏺︎   5.20s success miss     @vzn/vx#test",
    ]


def test_the_skipped_rows_of_the_manual():
    rows = [
        format_row(done(t, TaskStatus.SKIPPED, blocked_by=LIB_BUILD), PLAIN)
        for t in ("app#build", "web#build")
    ]
    assert "\n".join(rows) == (
        " ⊘         skipped          app#build • blocked by lib#build\n"
        " ⊘         skipped          web#build • blocked by lib#build"
    )


def test_a_skip_behind_a_server_let_go_unready_says_so():
    reason = "waiting on app#dev, not ready"
    skipped = done("app#e2e", TaskStatus.SKIPPED, blocked_by=TaskId("app", "dev"), reason=reason)
    assert format_row(skipped, PLAIN) == (
        " ⊘         skipped          app#e2e • waiting on app#dev, not ready"
    )
    assert outcome_word(skipped) == "skipped (waiting on app#dev, not ready)"


def test_a_fail_fast_skip_names_no_blocker():
    row = format_row(done("app#build", TaskStatus.SKIPPED), PLAIN)
    assert row == " ⊘         skipped          app#build"


def test_the_aborted_and_not_run_rows_of_the_manual():
    rows = [
        format_row(done("app#dev", TaskStatus.ABORTED, duration_ms=2410), PLAIN),
        format_row(done("web#build", TaskStatus.NOT_RUN), PLAIN),
        format_row(done("web#test", TaskStatus.NOT_RUN), PLAIN),
    ]
    assert "\n".join(rows) == (
        " ✗   2.41s aborted          app#dev\n"
        " ◌         not run          web#build\n"
        " ◌         not run          web#test"
    )


@pytest.mark.parametrize(
    ("status", "cache", "expected"),
    [
        (TaskStatus.SUCCESS, CacheOutcome.MISS, " ⏺\ufe0e   1.23s success miss     a#b"),
        (TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, " ⏺\ufe0e   1.23s success no-cache a#b"),
        (TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE, " ►   1.23s success fresh    a#b"),
        (TaskStatus.SUCCESS, CacheOutcome.LOCAL, " ⇢   1.23s success local    a#b"),
        (TaskStatus.SUCCESS, CacheOutcome.REMOTE, " ⇣   1.23s success remote   a#b"),
        (TaskStatus.FAILED, CacheOutcome.MISS, " ◼\ufe0e   1.23s failed  miss     a#b"),
        (TaskStatus.FAILED, CacheOutcome.NO_CACHE, " ◼\ufe0e   1.23s failed  no-cache a#b"),
        (TaskStatus.RUNNING, CacheOutcome.NO_CACHE, " ▸   1.23s running no-cache a#b"),
    ],
)
def test_the_grid_glyph_is_the_cache_axis_and_the_words_the_task_axis(status, cache, expected):
    assert format_row(done("a#b", status, cache, duration_ms=1234), PLAIN) == expected


def test_a_duration_wider_than_its_column_still_renders():
    row = format_row(done("a#b", TaskStatus.SUCCESS, duration_ms=999_999_999), PLAIN)
    assert row == " ⏺︎ 277h 46m success miss     a#b"


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"exit_code": 1}, "exit 1"),
        ({"exit_code": 2}, "exit 2"),
        ({"exit_code": 137}, "exit 137, 128 + SIGKILL"),
        ({"exit_code": 143}, "exit 143, 128 + SIGTERM"),
        ({"exit_code": -9}, "exit 137, 128 + SIGKILL"),
        ({"exit_code": 143, "timed_out": True}, "timed out, exit 143"),
        ({"exit_code": 143, "timed_out": True, "reason": "timed out"}, "timed out, exit 143"),
        (
            {"exit_code": 143, "timed_out": True, "reason": "never ready: timed out"},
            "never ready: timed out, exit 143",
        ),
        ({"exit_code": 1, "reason": "never ready: exited"}, "never ready: exited, exit 1"),
        ({"reason": "never ready: exited"}, "never ready: exited"),
        ({}, ""),
    ],
)
def test_failure_labels(kw, expected):
    assert failure_detail(done("a#b", TaskStatus.FAILED, **kw)) == expected


@pytest.mark.parametrize(
    ("finished", "expected"),
    [
        (done("a#b", TaskStatus.SUCCESS), "success"),
        (done("a#b", TaskStatus.SUCCESS, CacheOutcome.NO_CACHE), "success"),
        (done("a#b", TaskStatus.SUCCESS, CacheOutcome.LOCAL), "restored-local"),
        (done("a#b", TaskStatus.SUCCESS, CacheOutcome.REMOTE), "restored-remote"),
        (done("a#b", TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE), "up-to-date"),
        (done("a#b", TaskStatus.FAILED, exit_code=1), "failed (exit 1)"),
        (done("a#b", TaskStatus.FAILED), "failed"),
        (done("a#b", TaskStatus.SKIPPED, blocked_by=LIB_BUILD), "skipped (blocked by lib#build)"),
        (done("a#b", TaskStatus.ABORTED), "aborted"),
        (done("a#b", TaskStatus.RUNNING, CacheOutcome.NO_CACHE), "running"),
    ],
)
def test_outcome_words(finished, expected):
    assert outcome_word(finished) == expected


def test_a_hit_header_names_the_first_eight_of_its_key():
    hit = done("a#b", TaskStatus.SUCCESS, CacheOutcome.LOCAL, key="abc12345deadbeef")
    assert paint_outcome(hit, PLAIN, with_key=True) == "restored-local • abc12345"
    assert paint_outcome(hit, PLAIN, with_key=False) == "restored-local"
    ran = done("a#b", TaskStatus.SUCCESS, key="abc12345deadbeef")
    assert paint_outcome(ran, PLAIN, with_key=True) == "success"


@pytest.mark.parametrize(
    ("finished", "expected"),
    [
        (
            done("a#b", TaskStatus.SUCCESS, CacheOutcome.LOCAL, key="0123456789abcdef"),
            "restored-local  a#b 0123456789abcdef",
        ),
        (
            done("a#b", TaskStatus.SUCCESS, key="0123456789abcdef"),
            "success         a#b 0123456789abcdef",
        ),
        (done("a#b", TaskStatus.SUCCESS, CacheOutcome.NO_CACHE), "success         a#b -"),
        (
            done("a#b", TaskStatus.SKIPPED, key="0123456789abcdef"),
            "skipped         a#b 0123456789abcdef",
        ),
    ],
)
def test_hash_only_lines(finished, expected):
    assert format_hash_line(finished, PLAIN) == expected


def test_a_coloured_row():
    row = format_row(
        done("lib#build", TaskStatus.FAILED, duration_ms=4210, exit_code=1), Style(color=True)
    )
    assert row == (
        " \x1b[38;2;239;68;68m◼\ufe0e\x1b[0m "
        "  \x1b[2m4.21s\x1b[0m "
        "\x1b[38;2;239;68;68mfailed\x1b[0m  "
        "\x1b[2mmiss\x1b[0m     "
        "\x1b[38;2;167;139;250mlib\x1b[0m\x1b[2m#\x1b[0m\x1b[38;2;244;114;182mbuild\x1b[0m"
    )


def test_a_coloured_skip_paints_no_blank_cell():
    row = format_row(done("lib#build", TaskStatus.SKIPPED), Style(color=True))
    assert "\x1b[2m\x1b[0m" not in row
    assert row.startswith(
        " \x1b[38;2;234;179;8m⊘\x1b[0m         \x1b[38;2;234;179;8mskipped\x1b[0m"
    )


def test_the_flaky_rows_of_the_manual():
    """The manual's two flaky rows: a failure after passes, a pass that took a retry."""
    failed = done("app#test", TaskStatus.FAILED, duration_ms=4210, exit_code=1, flaky=(3, 1))
    retried = done("api#e2e", TaskStatus.SUCCESS, duration_ms=12_840, attempts=2, flaky=(1, 1))
    assert format_row(failed, PLAIN) == (
        " ◼\ufe0e   4.21s failed  miss     app#test flaky - passed 3\u00d7 before"
    )
    assert format_row(retried, PLAIN) == (
        " ⏺\ufe0e  12.84s success miss     api#e2e flaky - failed 1\u00d7 before · 2 attempts"
    )


def test_a_flaky_note_is_dim_and_follows_the_miss_reason():
    from vx.events import MissReason
    from vx.output.style import Style as Painter

    styled = Painter(color=True)
    row = format_row(
        done("a#t", TaskStatus.FAILED, exit_code=1, flaky=(1, 1), miss=MissReason("same key")),
        styled,
    )
    assert row.endswith(styled.dim("flaky - passed 1\u00d7 before"))
    assert "key unchanged" in row.split("flaky")[0]


def test_a_task_not_shown_flaky_has_no_note():
    assert "flaky" not in format_row(done("a#t", TaskStatus.FAILED, exit_code=1), PLAIN)
