"""Frames, byte for byte: the manual's anatomy, a hit's frame, a coloured frame, the live opening."""

from __future__ import annotations

import pytest

from vx.events import CacheOutcome, Stream, TaskFinished, TaskStatus
from vx.ids import TaskId
from vx.output.frame import frame_body, live_open, render_frame, section_rule, wrote_something
from vx.output.style import Style

PLAIN = Style(color=False)
COLOR = Style(color=True)
APP_TEST = TaskId("app", "test")

# The manual's frame anatomy, less its SANDBOX VIOLATIONS section (vx has no sandbox) and the
# violation count that section adds to the outcome.
ANATOMY = """\
┌─ app#test > failed (exit 1)

$ bun test

├─ OUTPUT ──────────────────────────────────────────────────

2 pass
error: expected 3, got 2
1 fail

└─ app#test ── (2.10s) failed (exit 1)
"""


def failed(**kw):
    return TaskFinished(APP_TEST, TaskStatus.FAILED, CacheOutcome.MISS, 2100, exit_code=1, **kw)


def test_the_frame_anatomy_of_the_manual():
    chunks = [
        (Stream.STDOUT, "2 pass\n"),
        (Stream.STDERR, "error: expected 3, got 2\n"),
        (Stream.STDOUT, "1 fail\n"),
    ]
    assert render_frame(failed(), command="bun test", chunks=chunks, style=PLAIN) == ANATOMY


def test_a_hit_shows_no_command_and_carries_its_key():
    hit = TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 12, key="abcdef0123456789")
    chunks = [(Stream.STDOUT, "Found 0 warnings.\n")]
    assert render_frame(hit, command=None, chunks=chunks, style=PLAIN) == (
        "┌─ app#test > restored-local • abcdef01\n"
        "\n"
        "├─ OUTPUT ──────────────────────────────────────────────────\n"
        "\n"
        "Found 0 warnings.\n"
        "\n"
        "└─ app#test ── (12ms) restored-local\n"
    )


@pytest.mark.parametrize(
    ("chunks", "command", "expected"),
    [
        (
            [(Stream.STDOUT, "  \n\n")],
            "tsc",
            "┌─ app#test > success\n\n$ tsc\n\n└─ app#test ── (5ms) success\n",
        ),
        ([], None, "┌─ app#test > up-to-date • 0011aabb\n\n└─ app#test ── (5ms) up-to-date\n"),
    ],
)
def test_sections_appear_only_when_they_hold_something(chunks, command, expected):
    cache = CacheOutcome.MISS if command else CacheOutcome.UP_TO_DATE
    finished = TaskFinished(APP_TEST, TaskStatus.SUCCESS, cache, 5, key="0011aabbccddeeff")
    assert render_frame(finished, command=command, chunks=chunks, style=PLAIN) == expected


def test_a_persistent_frame_is_marked_and_closes_running():
    server = TaskFinished(TaskId("app", "dev"), TaskStatus.RUNNING, CacheOutcome.NO_CACHE, 1810)
    text = render_frame(server, command="vite", chunks=[], style=PLAIN, persistent=True)
    assert text == ("┌─ ▸ app#dev > running\n\n$ vite\n\n└─ ▸ app#dev ── (1.81s) running\n")


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([(Stream.STDOUT, "a\nb\n")], "a\nb"),
        ([(Stream.STDOUT, "par"), (Stream.STDERR, "tial\n")], "partial"),
        ([(Stream.STDOUT, "no newline")], "no newline"),
        ([(Stream.STDOUT, "\nlead\n\n\n")], "\nlead"),
    ],
)
def test_the_body_is_the_task_bytes(chunks, expected):
    assert frame_body(chunks, PLAIN) == expected


def test_a_line_takes_the_stream_that_began_it():
    chunks = [
        (Stream.STDERR, "err "),
        (Stream.STDOUT, "then out\nout\n"),
        (Stream.STDERR, "\x1b[33mown\x1b[0m\n"),
    ]
    assert frame_body(chunks, COLOR) == (
        "\x1b[38;2;239;68;68merr then out\x1b[0m\nout\n\x1b[33mown\x1b[0m\x1b[0m"
    )


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([], False),
        ([(Stream.STDOUT, " \n\t\n")], False),
        ([(Stream.STDOUT, "\x1b[0m\n")], False),
        ([(Stream.STDERR, "x")], True),
    ],
)
def test_what_counts_as_writing_something(chunks, expected):
    assert wrote_something(chunks) is expected


def test_section_rule_is_sixty_cells():
    assert len(section_rule("OUTPUT", None, PLAIN)) == 60


def test_live_open_names_the_command():
    assert live_open(APP_TEST, "bun test", PLAIN) == "┌─ app#test > $ bun test\n\n"
    assert live_open(TaskId("app", "dev"), "vite", PLAIN, persistent=True) == (
        "┌─ ▸ app#dev > $ vite\n\n"
    )


APP = "\x1b[38;2;214;184;138mapp\x1b[0m\x1b[2m#\x1b[0m\x1b[38;2;244;114;182mtest\x1b[0m"
RED_BOLD = "\x1b[1;38;2;239;68;68m"
COLOURED_FRAME = (
    f"\x1b[2m┌─\x1b[0m {APP} \x1b[2m>\x1b[0m {RED_BOLD}failed (exit 1)\x1b[0m\n"
    "\n"
    "\x1b[2m$ bun test\x1b[0m\n"
    "\n"
    f"\x1b[2m├─\x1b[0m {RED_BOLD}OUTPUT\x1b[0m \x1b[2m{'─' * 50}\x1b[0m\n"
    "\n"
    "2 pass\n"
    "\x1b[38;2;239;68;68mboom\x1b[0m\n"
    "\n"
    f"\x1b[2m└─\x1b[0m {APP} \x1b[2m──\x1b[0m \x1b[2m(2.10s)\x1b[0m {RED_BOLD}failed (exit 1)\x1b[0m\n"
)


def test_a_coloured_frame():
    chunks = [(Stream.STDOUT, "2 pass\n"), (Stream.STDERR, "boom\n")]
    assert render_frame(failed(), command="bun test", chunks=chunks, style=COLOR) == COLOURED_FRAME
