"""`vx last`'s pieces: run ids, the re-run commands, row endings and the replay's row order."""

from __future__ import annotations

import pytest

from vx.cache.runlog import InvocationRow, RunRow
from vx.events import CacheOutcome, TaskStatus
from vx.history.runs import (
    SHOWN_HITS,
    iso_ms,
    looks_like_run_id,
    replay_order,
    rerun_lines,
    row_note,
)

RUN = "01a236e7-2fb6-7671-a8e0-c3875976fe32"


def row(task: str, status=TaskStatus.SUCCESS, cache=CacheOutcome.MISS, **kw) -> RunRow:
    project, _, name = task.partition("#")
    return RunRow(RUN, project, name, status, cache, **kw)


def inv(command: str) -> InvocationRow:
    return InvocationRow(RUN, command, 0, 1, 1, failed=1)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("01a236e7", True),
        ("01a236e7-2fb6", True),
        ("01a236e", False),
        ("1.5", False),
        ("xyzxyzxy", False),
    ],
)
def test_looks_like_run_id(word, expected):
    assert looks_like_run_id(word) is expected


FAILED = TaskStatus.FAILED


@pytest.mark.parametrize(
    ("command", "rows", "expected"),
    [
        ("vx run build --all", [row("a#build", FAILED)], ["vx run a#build"]),  # no `--` at all
        ("vx run build", [row("a#build")], []),
        (
            "vx run app#test -- 'a b' -x",
            [row("app#test", FAILED)],
            ["vx run app#test -- 'a b' -x"],
        ),
        (
            "vx run test -- --watch",
            [row("lib#build", FAILED), row("app#test", FAILED)],
            ["vx run app#test -- --watch", "vx run lib#build"],
        ),
        # a command shlex cannot read is split on spaces, and each word quoted back
        (
            "vx run app#test -- 'unclosed",
            [row("app#test", FAILED)],
            ["vx run app#test -- ''\"'\"'unclosed'"],
        ),
    ],
)
def test_rerun_lines(command, rows, expected):
    assert rerun_lines(inv(command), rows) == expected


@pytest.mark.parametrize(
    ("r", "expected"),
    [
        (row("a#t", FAILED, exit_code=1), "failed (exit 1)"),
        (row("a#t", FAILED, exit_code=137), "failed (exit 137) 128 + SIGKILL"),
        (row("a#t", FAILED, exit_code=143, reason="timed out"), "timed out"),
        (row("a#t", FAILED), "failed"),
        (row("a#t", TaskStatus.SKIPPED, blocked_by="lib#build"), "after lib#build failed"),
        (row("a#t", TaskStatus.SKIPPED), ""),
        (
            row(
                "a#e2e",
                TaskStatus.SKIPPED,
                blocked_by="a#dev",
                reason="waiting on a#dev, not ready",
            ),
            "waiting on a#dev, not ready",
        ),
        (row("a#t", cache=CacheOutcome.LOCAL, duration_ms=3, cpu_ms=3), ""),
        (row("a#t", duration_ms=100, cpu_ms=140), "1.4\u00d7 cpu"),
        (
            row("a#t", duration_ms=100, cpu_ms=140, peak_rss_bytes=312 * 2**20),
            "312 MB · 1.4\u00d7 cpu",
        ),
        (row("a#t", duration_ms=100, cpu_ms=50, peak_rss_bytes=2**20), "0.5\u00d7 cpu"),
    ],
)
def test_row_note(r, expected):
    assert row_note(r) == expected


def test_replay_order_puts_failures_first_and_folds_the_fastest_hits():
    hits = [row(f"h{i}#b", cache=CacheOutcome.LOCAL, duration_ms=float(i)) for i in range(20)]
    ran = row("x#b", duration_ms=5)
    failed = row("y#b", FAILED)
    shown, folded = replay_order([*hits, ran, failed])
    assert shown[:2] == [failed, ran]
    assert [r.project for r in shown[2:]] == [f"h{i}" for i in range(19, 19 - SHOWN_HITS, -1)]
    assert len(folded) == 20 - SHOWN_HITS
    assert folded[0].duration_ms > folded[-1].duration_ms


def test_iso_ms():
    assert iso_ms(1_791_000_000_123) == "2026-10-03T04:00:00.123Z"
