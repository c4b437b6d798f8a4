"""The renderer end to end: events in, the exact bytes a terminal or a CI log gets out."""

from __future__ import annotations

import io
import os

from vx.events import (
    CacheOutcome,
    Notice,
    PlannedTask,
    RunFinished,
    RunStarted,
    Stream,
    TaskFinished,
    TaskOutput,
    TaskReady,
    TaskStarted,
    TaskStatus,
)
from vx.ids import TaskId
from vx.output.console import Console
from vx.output.render import Flow, OutputLogs, Renderer, RenderSettings

# The manual's broad-run example, whole.
BROAD_RUN = """\
 ⇢     4ms success local    @vzn/vx#format-check
 ⏺︎   5.20s success miss     @vzn/vx#test

─ vx 0.0.0 ───────────────────────────────────────────────────
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱
            1 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            2 success · 2 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 miss · 1 local

  info      8 workers · local cache
  time      5.34s · max 5.20s · avg 5.20s · min 5.20s
  result    2 tasks · 1 cached (50%) · 900ms saved · 5.34s
"""

FORMAT_CHECK = TaskId("@vzn/vx", "format-check")
VX_TEST = TaskId("@vzn/vx", "test")
APP_TEST, APP_DEV, LIB_BUILD = TaskId("app", "test"), TaskId("app", "dev"), TaskId("lib", "build")
WEB_BUILD, API_DEV = TaskId("web", "build"), TaskId("api", "dev")


FENCE = "TOKEN"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Harness:
    def __init__(self, settings, *, tty=False, color=False, width=None, out=None, clock=None):
        self.out = out if out is not None else io.StringIO()
        self.err = io.StringIO()
        self.clock = clock or Clock()
        self.renderer = Renderer(
            Console(self.out, env={}, is_tty=tty, width=width, color=color),
            Console(self.err, env={}, is_tty=False, width=None),
            settings,
            clock=self.clock,
            stop_token=FENCE,
        )

    def feed(self, *events):
        for event in events:
            self.renderer.handle(event)
        return self

    @property
    def text(self):
        return self.out.getvalue()

    def added_by(self, event):
        before = len(self.text)
        self.renderer.handle(event)
        return self.text[before:]


def settings(flow, *, output_logs=None, verbosity=0, github_actions=False):
    return RenderSettings(
        flow=flow,
        output_logs=output_logs,
        verbosity=verbosity,
        github_actions=github_actions,
        version="0.0.0",
    )


def started(*tasks, in_run=1, total=1, concurrency=8):
    return RunStarted("run", tuple(tasks), in_run, total, concurrency)


def out(task, text, stream=Stream.STDOUT):
    return TaskOutput(task, stream, text)


def broad_events():
    return [
        started(
            PlannedTask(FORMAT_CHECK, "oxfmt --check", requested=True, cached=True),
            PlannedTask(VX_TEST, "bun test", requested=True, cached=True),
            total=3,
        ),
        TaskFinished(
            FORMAT_CHECK,
            TaskStatus.SUCCESS,
            CacheOutcome.LOCAL,
            4,
            key="02bfe8a9" * 2,
            saved_ms=900,
        ),
        TaskStarted(VX_TEST, "bun test"),
        out(VX_TEST, "12 pass\n"),
        TaskFinished(
            VX_TEST, TaskStatus.SUCCESS, CacheOutcome.MISS, 5200, exit_code=0, key="68595e49" * 2
        ),
        RunFinished(0, 5340),
    ]


def footer_of(text):
    return text[text.index("─ vx 0.0.0") :]


def test_the_broad_run_of_the_manual_with_its_task_table():
    # The manual's example lists the silent hit too: that is the per-task table
    # `--verbosity 1` prints above the footer, here with per-task output off.
    h = Harness(settings(Flow.BROAD, output_logs=OutputLogs.NONE, verbosity=1)).feed(
        *broad_events()
    )
    assert h.text == BROAD_RUN


def test_a_broad_run_reports_what_ran_and_leaves_hits_to_the_footer():
    h = Harness(settings(Flow.BROAD)).feed(*broad_events())
    assert h.text == BROAD_RUN.replace(" ⇢     4ms success local    @vzn/vx#format-check\n", "")


def test_a_lone_requested_task_streams_live_between_its_brackets():
    h = Harness(settings(Flow.FOCUSED)).feed(
        started(
            PlannedTask(LIB_BUILD, "tsc", requested=False, cached=True),
            PlannedTask(APP_TEST, "bun test", requested=True),
        ),
        TaskStarted(LIB_BUILD, "tsc"),
        out(LIB_BUILD, "compiled\n"),
        TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.MISS, 300),
    )
    assert h.text == ""
    assert h.added_by(TaskStarted(APP_TEST, "bun test")) == "┌─ app#test > $ bun test\n\n"
    assert h.added_by(out(APP_TEST, "2 pass\n")) == "2 pass\n"
    assert h.added_by(out(APP_TEST, "1 fail", Stream.STDERR)) == "1 fail"
    closing = h.added_by(
        TaskFinished(APP_TEST, TaskStatus.FAILED, CacheOutcome.MISS, 2100, exit_code=1)
    )
    assert closing == "\n\n└─ app#test ── (2.10s) failed (exit 1)\n\n"
    h.feed(RunFinished(1, 2500))
    assert h.text.startswith(
        "┌─ app#test > $ bun test\n\n2 pass\n1 fail\n\n└─ app#test ── (2.10s) failed (exit 1)\n\n─ vx 0.0.0"
    )


def test_a_lone_requested_hit_replays_in_a_whole_frame():
    h = Harness(settings(Flow.FOCUSED)).feed(
        started(PlannedTask(APP_TEST, "bun test", requested=True, cached=True)),
        out(APP_TEST, "2 pass\n"),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 9, key="abc12345ffffffff"),
        RunFinished(0, 15),
    )
    assert h.text.startswith(
        "┌─ app#test > restored-local • abc12345\n\n"
        f"├─ OUTPUT {'─' * 50}\n\n2 pass\n\n"
        "└─ app#test ── (9ms) restored-local\n\n─ vx 0.0.0"
    )


def test_several_requested_tasks_buffer_into_blank_line_separated_blocks():
    h = Harness(settings(Flow.FOCUSED)).feed(
        started(
            PlannedTask(APP_TEST, "bun test", requested=True),
            PlannedTask(LIB_BUILD, "tsc", requested=True),
        ),
        TaskStarted(APP_TEST, "bun test"),
        TaskStarted(LIB_BUILD, "tsc"),
        out(APP_TEST, "a1\n"),
        out(LIB_BUILD, "l1\n"),
        out(APP_TEST, "a2\n"),
        TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 5),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 7),
        RunFinished(0, 10),
    )
    rule = f"├─ OUTPUT {'─' * 50}"
    assert h.text.startswith(
        f"┌─ lib#build > success\n\n$ tsc\n\n{rule}\n\nl1\n\n└─ lib#build ── (5ms) success\n\n"
        f"┌─ app#test > success\n\n$ bun test\n\n{rule}\n\na1\na2\n\n└─ app#test ── (7ms) success\n\n"
        "─ vx 0.0.0"
    )


def test_a_failed_dependency_gets_a_row_now_and_its_frame_at_the_end():
    h = Harness(settings(Flow.FOCUSED, verbosity=1)).feed(
        started(
            PlannedTask(LIB_BUILD, "tsc", requested=False),
            PlannedTask(APP_TEST, "bun test", requested=True),
            in_run=2,
            total=2,
        ),
        TaskStarted(LIB_BUILD, "tsc"),
        out(LIB_BUILD, "error TS1234\n", Stream.STDERR),
    )
    row = h.added_by(
        TaskFinished(LIB_BUILD, TaskStatus.FAILED, CacheOutcome.MISS, 1234, exit_code=2)
    )
    assert row == " ◼︎   1.23s failed  miss     lib#build\n"
    skipped = TaskFinished(APP_TEST, TaskStatus.SKIPPED, CacheOutcome.MISS, blocked_by=LIB_BUILD)
    assert h.added_by(skipped) == " ⊘         skipped          app#test • blocked by lib#build\n"
    end = h.added_by(RunFinished(1, 1300))
    assert end.startswith(
        "\n┌─ lib#build > failed (exit 2)\n\n$ tsc\n\n"
        f"├─ OUTPUT {'─' * 50}\n\nerror TS1234\n\n└─ lib#build ── (1.23s) failed (exit 2)\n\n"
        " ⊘         skipped          app#test • blocked by lib#build\n"
        " ◼︎   1.23s failed  miss     lib#build\n"
        "\n─ vx 0.0.0"
    )
    footer = footer_of(end)
    assert "            1 failed · 1 skipped · 2 total\n" in footer
    assert "  result    2 tasks · 1 failed · 0 cached (0%) · 1.30s\n" in footer
    assert footer.endswith("1.30s\n")


def test_github_actions_groups_each_block_and_annotates_failures():
    h = Harness(settings(Flow.CI, github_actions=True)).feed(
        started(
            PlannedTask(LIB_BUILD, "make", requested=True),
            PlannedTask(APP_TEST, "bun test", requested=True),
            PlannedTask(WEB_BUILD, "vite build", requested=True, cached=True),
        ),
        TaskStarted(LIB_BUILD, "make"),
        out(LIB_BUILD, "::set-output name=x::1\n"),
        TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 1000),
        TaskStarted(APP_TEST, "bun test"),
        out(APP_TEST, "boom\n", Stream.STDERR),
        TaskFinished(APP_TEST, TaskStatus.FAILED, CacheOutcome.MISS, 500, exit_code=137),
        TaskFinished(WEB_BUILD, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 2, key="f" * 16),
        RunFinished(1, 1600),
    )
    rule = f"├─ OUTPUT {'─' * 50}"
    assert h.text.startswith(
        "::group::lib#build (success 1.00s)\n"
        "::stop-commands::TOKEN\n"
        f"┌─ lib#build > success\n\n$ make\n\n{rule}\n\n::set-output name=x::1\n\n"
        "└─ lib#build ── (1.00s) success\n\n"
        "::TOKEN::\n"
        "::endgroup::\n"
        "\n"
        "::error title=app#test::failed (exit 137, 128 + SIGKILL)\n"
        "::stop-commands::TOKEN\n"
        f"┌─ app#test > failed (exit 137, 128 + SIGKILL)\n\n$ bun test\n\n{rule}\n\nboom\n\n"
        "└─ app#test ── (500ms) failed (exit 137, 128 + SIGKILL)\n\n"
        "::TOKEN::\n"
        " ⇢     2ms success local    web#build\n"
        "\n─ vx 0.0.0"
    )


def test_a_stop_lists_what_it_cut_short_and_what_it_never_reached():
    h = Harness(settings(Flow.CI)).feed(
        started(
            PlannedTask(APP_DEV, "vite", requested=True, persistent=True),
            PlannedTask(API_DEV, "node server", requested=True, persistent=True),
            PlannedTask(WEB_BUILD, "vite build", requested=True),
            PlannedTask(TaskId("web", "test"), "vitest", requested=True),
            PlannedTask(LIB_BUILD, "tsc", requested=True),
            PlannedTask(APP_TEST, "bun test", requested=True),
        ),
        TaskStarted(LIB_BUILD, "tsc"),
        TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 10),
        TaskStarted(APP_TEST, "bun test"),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 10),
        TaskStarted(APP_DEV, "vite"),
        TaskStarted(API_DEV, "node server"),
        out(API_DEV, "listening\n"),
    )
    before = len(h.text)
    h.feed(
        TaskFinished(APP_DEV, TaskStatus.ABORTED, CacheOutcome.NO_CACHE, 2410),
        TaskFinished(API_DEV, TaskStatus.ABORTED, CacheOutcome.NO_CACHE, 2000),
        TaskFinished(WEB_BUILD, TaskStatus.NOT_RUN, CacheOutcome.MISS),
        TaskFinished(TaskId("web", "test"), TaskStatus.NOT_RUN, CacheOutcome.MISS),
        RunFinished(130, 2500, interrupted=True),
    )
    assert h.text[before:].startswith(
        " ✗   2.41s aborted          app#dev\n"
        "\n┌─ ▸ api#dev > aborted\n\n$ node server\n\n"
        f"├─ OUTPUT {'─' * 50}\n\nlistening\n\n└─ ▸ api#dev ── (2.00s) aborted\n\n"
        " ◌         not run          web#build\n"
        " ◌         not run          web#test\n"
    )
    assert "            2 success · 2 total · not counted: 2 aborted, 2 not run\n" in h.text


def test_hash_only_prints_one_line_per_task_and_no_output():
    h = Harness(settings(Flow.BROAD, output_logs=OutputLogs.HASH_ONLY)).feed(*broad_events())
    assert h.text.startswith(
        "restored-local  @vzn/vx#format-check 02bfe8a902bfe8a9\n"
        "success         @vzn/vx#test 68595e4968595e49\n"
        "\n─ vx 0.0.0"
    )


def test_none_prints_the_footer_alone():
    h = Harness(settings(Flow.FOCUSED, output_logs=OutputLogs.NONE)).feed(*broad_events())
    assert h.text.startswith("─ vx 0.0.0")


def test_errors_only_prints_failures_and_their_skips():
    h = Harness(settings(Flow.CI, output_logs=OutputLogs.ERRORS_ONLY)).feed(
        started(
            PlannedTask(LIB_BUILD, "tsc", requested=True),
            PlannedTask(APP_TEST, "t", requested=True),
        ),
        TaskStarted(WEB_BUILD, "vite build"),
        out(WEB_BUILD, "fine\n"),
        TaskFinished(WEB_BUILD, TaskStatus.SUCCESS, CacheOutcome.MISS, 3),
        TaskStarted(LIB_BUILD, "tsc"),
        TaskFinished(LIB_BUILD, TaskStatus.FAILED, CacheOutcome.MISS, 3, exit_code=1),
        TaskFinished(APP_TEST, TaskStatus.SKIPPED, CacheOutcome.MISS, blocked_by=LIB_BUILD),
        RunFinished(1, 10),
    )
    assert h.text.startswith(
        "┌─ lib#build > failed (exit 1)\n\n$ tsc\n\n└─ lib#build ── (3ms) failed (exit 1)\n\n"
        " ⊘         skipped          app#test • blocked by lib#build\n\n─ vx 0.0.0"
    )


def test_task_output_is_stripped_when_colour_is_off_even_split_across_chunks():
    h = Harness(settings(Flow.FOCUSED)).feed(
        started(PlannedTask(APP_TEST, "bun test", requested=True)),
        TaskStarted(APP_TEST, "bun test"),
        out(APP_TEST, "\x1b[3"),
        out(APP_TEST, "2mok\x1b"),
        out(APP_TEST, "[0m\n"),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.MISS, 5),
    )
    assert "\x1b" not in h.text
    assert "\n\nok\n\n└─" in h.text


def test_a_replayed_hit_is_stripped_too():
    h = Harness(settings(Flow.CI)).feed(
        started(PlannedTask(APP_TEST, "bun test", requested=True, cached=True)),
        out(APP_TEST, "\x1b[32m3 pass\x1b["),
        out(APP_TEST, "0m\n"),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.LOCAL, 5, key="a" * 16),
    )
    assert "\n\n3 pass\n\n└─ app#test ── (5ms) restored-local\n" in h.text
    assert "\x1b" not in h.text


def test_task_colours_stay_when_colour_is_on():
    h = Harness(settings(Flow.FOCUSED), color=True).feed(
        started(PlannedTask(APP_TEST, "bun test", requested=True)),
        TaskStarted(APP_TEST, "bun test"),
        out(APP_TEST, "\x1b[32mok\x1b[0m\n"),
    )
    assert h.text.endswith("\x1b[32mok\x1b[0m\n")


def test_notices_go_to_stderr():
    h = Harness(settings(Flow.BROAD)).feed(
        *broad_events()[:-1], Notice("vx: wrote summary to s.json")
    )
    assert h.err.getvalue() == "vx: wrote summary to s.json\n"
    assert "wrote summary" not in h.text


def test_a_closed_pipe_drops_output_and_the_run_goes_on():
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    with os.fdopen(write_fd, "w", encoding="utf-8") as stream:
        h = Harness(settings(Flow.BROAD), out=stream)
        h.feed(*broad_events()[:-1], Notice("vx: still here"), broad_events()[-1])
        assert h.renderer._out.closed
    assert h.err.getvalue() == "vx: still here\n"


def test_nothing_but_server_output_follows_the_footer():
    h = Harness(settings(Flow.FOCUSED)).feed(
        started(
            PlannedTask(APP_DEV, "vite", requested=True, persistent=True),
            PlannedTask(API_DEV, "node server", requested=False, persistent=True),
        ),
        TaskStarted(API_DEV, "node server"),
        TaskReady(API_DEV),
        TaskStarted(APP_DEV, "vite"),
        out(APP_DEV, "ready\n"),
        TaskReady(APP_DEV),
        TaskFinished(API_DEV, TaskStatus.RUNNING, CacheOutcome.NO_CACHE, 1500),
        TaskFinished(APP_DEV, TaskStatus.RUNNING, CacheOutcome.NO_CACHE, 1810),
        RunFinished(0, 1900),
    )
    assert h.text.startswith(
        "┌─ ▸ app#dev > $ vite\n\nready\n\n└─ ▸ app#dev ── (1.81s) running\n\n─ vx 0.0.0"
    )
    footer = h.text
    h.feed(
        out(APP_DEV, "GET /\n"),
        out(API_DEV, "req 1\nreq"),
        out(API_DEV, " 2\n"),
        TaskFinished(APP_DEV, TaskStatus.FAILED, CacheOutcome.NO_CACHE, 9000, exit_code=1),
        Notice("vx: app#dev exited with code 1; stopping 1 other persistent task"),
    )
    assert h.text[len(footer) :] == "GET /\napi#dev │ req 1\napi#dev │ req 2\n"
    assert h.err.getvalue() == "vx: app#dev exited with code 1; stopping 1 other persistent task\n"


def test_errors_only_keeps_server_output_after_the_footer_to_itself():
    h = Harness(settings(Flow.FOCUSED, output_logs=OutputLogs.ERRORS_ONLY)).feed(
        started(PlannedTask(APP_DEV, "vite", requested=True, persistent=True)),
        TaskStarted(APP_DEV, "vite"),
        TaskFinished(APP_DEV, TaskStatus.RUNNING, CacheOutcome.NO_CACHE, 10),
        RunFinished(0, 20),
    )
    footer = h.text
    h.feed(out(APP_DEV, "GET /\n"))
    assert h.text == footer


def test_a_retried_task_frames_its_last_attempt():
    h = Harness(settings(Flow.CI)).feed(
        started(PlannedTask(APP_TEST, "bun test", requested=True)),
        TaskStarted(APP_TEST, "bun test"),
        out(APP_TEST, "first try\n"),
        TaskStarted(APP_TEST, "bun test", attempt=2),
        out(APP_TEST, "second try\n"),
        TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.MISS, 5, attempts=2),
    )
    assert "second try" in h.text
    assert "first try" not in h.text


ERASE = "\x1b[1A\x1b[2K"
EMPTY_METERS = [
    "─ vx " + "─" * 57,
    "  tasks     " + "▱" * 50,
    "            1 total",
    "  cache     " + "▱" * 50,
    "            —",
]


def region(*lines):
    return "".join(line + "\n" for line in lines)


def test_the_live_region_coalesces_redraws_and_steps_aside_for_rows():
    h = Harness(settings(Flow.BROAD), tty=True)
    first = h.added_by(started(PlannedTask(LIB_BUILD, "tsc", requested=True), concurrency=1))
    assert first == region("", "           idle", *EMPTY_METERS, "  time      0ms")
    h.clock.now = 0.010
    assert h.added_by(TaskStarted(LIB_BUILD, "tsc")) == ""
    h.renderer.tick(0.020)
    assert h.text == first
    h.clock.now = 0.040
    h.renderer.tick(0.040)
    assert h.text[len(first) :] == ERASE * 8 + region(
        "", "      30ms running  lib#build", *EMPTY_METERS, "  time      40ms"
    )
    h.clock.now = 0.050
    row = h.added_by(TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.MISS, 40))
    assert row == ERASE * 8 + " ⏺︎    40ms success miss     lib#build\n"
    h.renderer.tick(0.060)
    assert h.text.endswith(" ⏺︎    40ms success miss     lib#build\n")
    h.clock.now = 0.080
    before = len(h.text)
    h.renderer.tick(0.080)
    trailing = h.text[before:]
    assert trailing.startswith("\n           idle\n")
    assert "            1 success · 1 total\n" in trailing
    end = h.added_by(RunFinished(0, 90))
    assert end.startswith(ERASE * 8 + "\n─ vx 0.0.0 ")
    assert ERASE not in end[len(ERASE * 8) :]
    h.renderer.tick(1.0)
    assert h.text.endswith("90ms\n")


def test_the_live_region_pins_ready_servers():
    h = Harness(settings(Flow.BROAD), tty=True)
    h.feed(started(PlannedTask(APP_DEV, "vite", requested=True, persistent=True), concurrency=1))
    h.clock.now = 1.0
    h.feed(TaskStarted(APP_DEV, "vite"))
    h.clock.now = 2.0
    drawn = h.added_by(TaskReady(APP_DEV))
    assert "\n  ▸ app#dev running\n     1.00s running  app#dev\n─ vx" in drawn


def test_a_notice_takes_the_live_region_back_first():
    h = Harness(settings(Flow.BROAD), tty=True)
    h.feed(started(PlannedTask(LIB_BUILD, "tsc", requested=True), concurrency=1))
    h.clock.now = 0.005
    erased = h.added_by(Notice("vx: note"))
    assert erased == ERASE * 8
    assert h.err.getvalue() == "vx: note\n"
    h.renderer.tick(0.040)
    assert h.text.endswith("  time      40ms\n")


def test_a_focused_run_drops_the_region_for_good_when_the_task_streams():
    h = Harness(settings(Flow.FOCUSED), tty=True)
    h.feed(
        started(
            PlannedTask(LIB_BUILD, "tsc", requested=False),
            PlannedTask(APP_TEST, "bun test", requested=True),
            concurrency=2,
        )
    )
    h.clock.now = 1.0
    h.feed(TaskStarted(LIB_BUILD, "tsc"))
    h.feed(TaskFinished(LIB_BUILD, TaskStatus.SUCCESS, CacheOutcome.MISS, 300))
    h.clock.now = 2.0
    opened = h.added_by(TaskStarted(APP_TEST, "bun test"))
    assert opened == ERASE * 9 + "┌─ app#test > $ bun test\n\n"
    h.clock.now = 3.0
    h.renderer.tick(3.0)
    assert h.text.endswith("┌─ app#test > $ bun test\n\n")
    assert h.added_by(out(APP_TEST, "x\n")) == "x\n"


def test_the_region_steps_aside_while_an_interactive_task_holds_the_terminal():
    h = Harness(settings(Flow.BROAD), tty=True)
    h.feed(
        started(
            PlannedTask(APP_TEST, "read -p name", requested=True, interactive=True),
            concurrency=1,
        )
    )
    h.clock.now = 1.0
    assert h.added_by(TaskStarted(APP_TEST, "read -p name")) == ERASE * 8
    h.clock.now = 2.0
    h.renderer.tick(2.0)
    h.feed(Notice("vx: note"))
    assert h.text.endswith(ERASE * 8)
    h.clock.now = 3.0
    row = h.added_by(TaskFinished(APP_TEST, TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, 2000))
    assert row.startswith(" ⏺︎   2.00s success no-cache app#test\n\n           idle\n")


def test_no_live_region_off_a_terminal_or_in_ci():
    for h in (
        Harness(settings(Flow.BROAD), tty=False),
        Harness(settings(Flow.CI), tty=True),
        Harness(settings(Flow.BROAD, github_actions=True), tty=True),
    ):
        h.feed(
            started(PlannedTask(LIB_BUILD, "tsc", requested=True)), TaskStarted(LIB_BUILD, "tsc")
        )
        h.renderer.tick(5.0)
        assert h.text == ""


def test_close_takes_an_unfinished_region_back():
    h = Harness(settings(Flow.BROAD), tty=True)
    h.feed(started(PlannedTask(LIB_BUILD, "tsc", requested=True), concurrency=1))
    before = len(h.text)
    h.renderer.close()
    assert h.text[before:] == ERASE * 8


def test_a_group_never_gets_a_row_or_a_count():
    group = TaskId("app", "ci")
    h = Harness(settings(Flow.BROAD, verbosity=1)).feed(
        started(PlannedTask(group, None, requested=True, group=True)),
        TaskFinished(group, TaskStatus.SKIPPED, CacheOutcome.NO_CACHE, blocked_by=LIB_BUILD),
        RunFinished(1, 5),
    )
    assert h.text.startswith("─ vx 0.0.0")
    assert "  result    0 tasks · 5ms\n" in h.text


def test_a_held_server_streams_line_by_line_under_its_id():
    h = Harness(settings(Flow.BROAD)).feed(
        started(PlannedTask(API_DEV, "node server", requested=True, persistent=True)),
        TaskStarted(API_DEV, "node server"),
        out(API_DEV, "booting\n"),
        TaskReady(API_DEV),
        TaskFinished(API_DEV, TaskStatus.RUNNING, CacheOutcome.NO_CACHE, 800),
        out(API_DEV, "listening on 3000\n"),
        RunFinished(0, 900),
        out(API_DEV, "GET /"),
    )
    assert h.text.startswith(
        " ▸   800ms running no-cache api#dev\napi#dev │ listening on 3000\n\n─ vx 0.0.0"
    )
    h.renderer.close()
    assert h.text.endswith("900ms\napi#dev │ GET /\n")
