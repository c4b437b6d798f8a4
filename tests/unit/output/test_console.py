"""Console: the colour decision, EPIPE-safe writes, and ANSI stripping across chunks."""

from __future__ import annotations

import io
import os

import pytest

from vx.output.console import AnsiStripper, Console, decide_color, strip_ansi


@pytest.mark.parametrize(
    ("flag", "env", "is_tty", "expected"),
    [
        (None, {}, True, True),
        (None, {}, False, False),
        (True, {"NO_COLOR": "1"}, False, True),
        (False, {"FORCE_COLOR": "1"}, True, False),
        (None, {"NO_COLOR": "1"}, True, False),
        (None, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        (None, {"NO_COLOR": ""}, True, True),
        (None, {"NO_COLOR": ""}, False, False),
        (None, {"NO_COLOR": "", "FORCE_COLOR": "1"}, False, True),
        (None, {"FORCE_COLOR": "1"}, False, True),
        (None, {"FORCE_COLOR": "true"}, False, True),
        (None, {"FORCE_COLOR": "2"}, False, True),
        (None, {"FORCE_COLOR": "3"}, False, True),
        (None, {"FORCE_COLOR": ""}, False, True),
        (None, {"FORCE_COLOR": "0"}, True, False),
        (None, {"FORCE_COLOR": "false"}, True, False),
        (None, {"FORCE_COLOR": "FALSE"}, True, False),
    ],
)
def test_colour_decision_order(flag, env, is_tty, expected):
    assert decide_color(flag, env, is_tty) is expected


def test_console_decides_once_from_its_inputs():
    assert Console(io.StringIO(), env={}, is_tty=True, width=80).color is True
    assert Console(io.StringIO(), env={"NO_COLOR": "x"}, is_tty=True, width=80).color is False
    assert Console(io.StringIO(), env={}, is_tty=False, width=None, color=True).color is True


def test_a_closed_stream_is_no_terminal():
    stream = io.StringIO()
    stream.close()
    console = Console(stream, env={}, is_tty=True, width=80)
    assert console.is_tty is False
    assert console.color is False
    console.write("dropped")


def test_a_terminal_that_reports_no_width_has_none():
    assert Console(io.StringIO(), env={}, is_tty=True, width=0).width is None


def test_for_stream_reads_a_pipe_as_no_terminal():
    console = Console.for_stream(io.StringIO(), env={})
    assert (console.is_tty, console.width, console.color) == (False, None, False)


def test_a_broken_pipe_silences_the_console_and_later_writes_are_dropped():
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    stream = os.fdopen(write_fd, "w", encoding="utf-8")
    console = Console(stream, env={}, is_tty=False, width=None)
    console.write("first line\n")
    assert console.closed is True
    console.write("second line\n")
    stream.close()


def test_writes_reach_the_stream():
    stream = io.StringIO()
    console = Console(stream, env={}, is_tty=False, width=None)
    console.write("a")
    console.write("")
    console.write("b\n")
    assert stream.getvalue() == "ab\n"


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["plain\n"], "plain\n"),
        (["\x1b[31mred\x1b[0m\n"], "red\n"),
        (["\x1b[1;38;2;1;2;3mbold\x1b[0m"], "bold"),
        (["\x1b[3", "1mred\x1b[0m"], "red"),
        (["\x1b", "[31mred"], "red"),
        (["x\x1b[", "38;2;", "1;2;3", "my"], "xy"),
        (["\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\"], "link"),
        (["\x1b]0;title", "\x07after"], "after"),
        (["\x1b]8;;u\x1b", "\\text"], "text"),
        (["\x1b(B", "ok"], "ok"),
        (["\x1b(", "Bok"], "ok"),
        (["\x9b31mred"], "red"),
        (["\x1b7saved\x1b8"], "saved"),
        (["a\x1b[2K\rb\n"], "a\rb\n"),
        (["half\x1b["], "half"),
    ],
)
def test_stripping_keeps_the_text_and_survives_a_split_escape(chunks, expected):
    stripper = AnsiStripper()
    assert "".join(stripper.feed(c) for c in chunks) == expected


def test_strip_ansi_on_a_whole_string():
    assert strip_ansi("\x1b[32mok\x1b[0m done") == "ok done"
