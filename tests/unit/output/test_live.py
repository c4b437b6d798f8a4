"""The live region as data: erase and redraw strings, the redraw floor, worker rows, clipping."""

from __future__ import annotations

import pytest

from vx.events import CacheOutcome, TaskFinished, TaskStatus
from vx.ids import TaskId
from vx.output.console import strip_ansi
from vx.output.live import (
    ERASE_LINE,
    LiveRegion,
    LiveState,
    WorkerSlots,
    clip,
    region_lines,
    worker_rows,
)
from vx.output.style import Style
from vx.output.summary import Tally

PLAIN = Style(color=False)
A, B, C, D = (TaskId(p, "build") for p in "abcd")


def test_redraw_erases_what_it_drew_last():
    region = LiveRegion()
    assert region.erase() == ""
    first = region.redraw(["one", "two"], now=0.0)
    assert first == "one\ntwo\n"
    assert region.height == 2
    second = region.redraw(["three"], now=1.0)
    assert second == "\x1b[1A\x1b[2K\x1b[1A\x1b[2Kthree\n"
    assert region.erase() == ERASE_LINE
    assert region.height == 0
    assert region.erase() == ""


@pytest.mark.parametrize(
    ("last", "now", "due"),
    [
        (None, 0.0, True),
        (1.0, 1.0, False),
        (1.0, 1.029, False),
        (1.0, 1.030, True),
        (1.0, 2.0, True),
    ],
)
def test_the_floor_between_draws(last, now, due):
    region = LiveRegion()
    if last is not None:
        region.redraw(["x"], now=last)
    assert region.due(now) is due


def test_a_task_keeps_its_row_and_overflow_waits_for_one():
    slots = WorkerSlots(2)
    for task in (A, B, C, D):
        slots.start(task)
    assert slots.rows == [A, B]
    assert slots.overflow == [C, D]
    slots.finish(A)
    assert slots.rows == [C, B]
    slots.finish(D)
    assert slots.overflow == []
    slots.finish(B)
    assert slots.rows == [C, None]
    slots.start(C)
    assert slots.rows == [C, None]
    assert slots.busy


@pytest.mark.parametrize(("concurrency", "rows"), [(1, 1), (8, 8), (10, 10), (32, 10), (0, 1)])
def test_worker_rows_are_capped_at_ten(concurrency, rows):
    assert worker_rows(concurrency) == rows


def test_the_region_lines():
    slots = WorkerSlots(3)
    slots.start(A)
    slots.start(B)
    tally = Tally(planned=4)
    tally.add(TaskFinished(C, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 3))
    state = LiveState(
        pins=[TaskId("web", "dev")],
        slots=slots,
        started_at={A: 10.0, B: 11.5},
        tally=tally,
        planned=4,
        run_started=9.0,
    )
    lines = region_lines(state, now=11.568, width=None, style=PLAIN)
    assert lines == [
        "",
        "  ▸ web#dev running",
        "     1.57s running  a#build",
        "      68ms running  b#build",
        "           idle",
        "─ vx " + "─" * 57,
        "  tasks     " + "▰" * 13 + "▱" * 37,
        "            1 success · 4 total",
        "  cache     " + "▰" * 13 + "▱" * 37,
        "            1 local",
        "  time      2.57s",
    ]


def test_overflow_shows_as_more():
    slots = WorkerSlots(1)
    for task in (A, B, C):
        slots.start(task)
    state = LiveState([], slots, {A: 0.0}, Tally(planned=3), 3, 0.0)
    lines = region_lines(state, now=0.568, width=None, style=PLAIN)
    assert lines[1:3] == ["     568ms running  a#build", "           +2 more"]


def test_every_line_fits_the_terminal():
    slots = WorkerSlots(1)
    slots.start(TaskId("@a-very-long-scope/with-a-long-package-name", "build"))
    state = LiveState([], slots, {}, Tally(planned=1), 1, 0.0)
    lines = region_lines(state, now=0.0, width=30, style=Style(color=True))
    assert all(visible(line) <= 29 for line in lines)


def visible(line):
    return len(strip_ansi(line))


@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        ("abcdef", None, "abcdef"),
        ("abcdef", 10, "abcdef"),
        ("abcdef", 3, "abc"),
        ("\x1b[2mabcdef\x1b[0m", 3, "\x1b[2mabc\x1b[0m"),
        ("\x1b[2mab\x1b[0mcdef", 3, "\x1b[2mab\x1b[0mc\x1b[0m"),
    ],
)
def test_clip_counts_visible_cells_only(line, limit, expected):
    assert clip(line, limit) == expected
