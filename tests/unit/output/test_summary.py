"""The footer, byte for byte, and how its meters and rows count a run."""

from __future__ import annotations

import pytest

from vx.events import CacheOutcome, TaskFinished, TaskStatus
from vx.ids import TaskId
from vx.output.style import Style
from vx.output.summary import Tally, allocate, footer, gha_error, gha_fence, gha_group

PLAIN = Style(color=False)
COLOR = Style(color=True)

# The footer of the manual's broad-run example.
BROAD_FOOTER = """\
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


def done(text, status, cache=CacheOutcome.MISS, **kw):
    return TaskFinished(TaskId.parse(text), status, cache, **kw)


def tally_of(*finished, in_run=1, total=3):
    tally = Tally(projects_in_run=in_run, projects_total=total)
    for f in finished:
        tally.add(f)
    return tally


def broad_tally():
    return tally_of(
        done(
            "@vzn/vx#format-check",
            TaskStatus.SUCCESS,
            CacheOutcome.LOCAL,
            duration_ms=4,
            saved_ms=900,
        ),
        done("@vzn/vx#test", TaskStatus.SUCCESS, duration_ms=5200),
    )


def render(tally, *, wall_ms=5340, style=PLAIN, width=None):
    return footer(
        tally,
        version="0.0.0",
        workers=8,
        cache_label="local cache",
        wall_ms=wall_ms,
        width=width,
        style=style,
    )


def test_the_broad_run_footer_of_the_manual():
    assert render(broad_tally()) == BROAD_FOOTER


DIM, RESET = "\x1b[2m", "\x1b[0m"
SEP = f"{DIM} · {RESET}"
COLOURED_FOOTER = (
    f"{DIM}─{RESET} \x1b[1mvx 0.0.0{RESET} {DIM}{'─' * 51}{RESET}\n"
    f"  {DIM}projects{RESET}  \x1b[38;2;6;182;212m{'▰' * 17}{RESET}{DIM}{'▱' * 33}{RESET}\n"
    f"            \x1b[38;2;6;182;212m1 in run{RESET}{SEP}3 total\n"
    f"  {DIM}tasks{RESET}     \x1b[38;2;34;197;94m{'▰' * 50}{RESET}\n"
    f"            \x1b[38;2;34;197;94m2 success{RESET}{SEP}2 total\n"
    f"  {DIM}cache{RESET}     \x1b[38;2;249;115;22m{'▰' * 25}{RESET}\x1b[38;2;34;197;94m{'▰' * 25}{RESET}\n"
    f"            \x1b[38;2;249;115;22m1 miss{RESET}{SEP}\x1b[38;2;34;197;94m1 local{RESET}\n"
    "\n"
    f"  {DIM}info{RESET}      8 workers {DIM}·{RESET} local cache\n"
    f"  {DIM}time{RESET}      5.34s{SEP}max 5.20s{SEP}avg 5.20s{SEP}min 5.20s\n"
    f"  {DIM}result{RESET}    2 tasks{SEP}1 cached (50%){SEP}900ms saved{SEP}5.34s\n"
)


def test_a_coloured_footer():
    assert render(broad_tally(), style=COLOR) == COLOURED_FOOTER


@pytest.mark.parametrize(
    ("counts", "total", "expected"),
    [
        ([1], 3, [17]),
        ([0, 2, 0], 2, [0, 50, 0]),
        ([1, 1], 2, [25, 25]),
        ([1, 1, 1], 3, [17, 17, 16]),
        ([1, 999], 1000, [1, 49]),
        ([1], 1000, [1]),
        ([0], 0, [0]),
        ([2, 1], 10, [10, 5]),
    ],
)
def test_meter_cells_by_share_of_the_total(counts, total, expected):
    assert allocate(counts, total, 50) == expected


def line(text, label):
    return next(row for row in text.splitlines() if row.startswith(f"  {label}"))


@pytest.mark.parametrize(
    ("finished", "wall_ms", "expected"),
    [
        (
            [done("app#dev", TaskStatus.SUCCESS, CacheOutcome.NO_CACHE, duration_ms=37)],
            37,
            "1 task · 1 no-cache · 37ms",
        ),
        (
            [done(f"p{i}#build", TaskStatus.SUCCESS, CacheOutcome.LOCAL) for i in range(3)],
            40,
            "3 tasks · all cached · 40ms",
        ),
        (
            [
                done("a#build", TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE, saved_ms=1500),
                done("b#build", TaskStatus.SUCCESS, CacheOutcome.REMOTE, saved_ms=500),
                done("c#lint", TaskStatus.SUCCESS, CacheOutcome.NO_CACHE),
            ],
            50,
            "3 tasks · 1 no-cache · all cached · 2.00s saved · 50ms",
        ),
        (
            [
                done("lib#build", TaskStatus.FAILED, exit_code=1, duration_ms=300),
                done("app#build", TaskStatus.SKIPPED, blocked_by=TaskId("lib", "build")),
                done("web#lint", TaskStatus.SUCCESS, duration_ms=100),
            ],
            1000,
            "3 tasks · 1 failed · 0 cached (0%) · 1.00s",
        ),
    ],
)
def test_the_result_row(finished, wall_ms, expected):
    assert line(render(tally_of(*finished), wall_ms=wall_ms), "result") == f"  result    {expected}"


def test_the_time_spread_counts_executed_tasks_only():
    text = render(
        tally_of(
            done("a#x", TaskStatus.SUCCESS, duration_ms=100),
            done("b#x", TaskStatus.FAILED, exit_code=1, duration_ms=300),
            done("c#x", TaskStatus.SUCCESS, CacheOutcome.LOCAL, duration_ms=9000),
            done("d#x", TaskStatus.ABORTED, duration_ms=7000),
        ),
        wall_ms=400,
    )
    assert line(text, "time") == "  time      400ms · max 300ms · avg 200ms · min 100ms"


def test_a_run_that_executed_nothing_reads_its_wall_time_alone():
    text = render(tally_of(done("c#x", TaskStatus.SUCCESS, CacheOutcome.LOCAL)), wall_ms=40)
    assert line(text, "time") == "  time      40ms"


def test_the_tasks_legend_keeps_stopped_tasks_out_of_the_total():
    text = render(
        tally_of(
            done("a#x", TaskStatus.SUCCESS),
            done("b#x", TaskStatus.SUCCESS),
            done("app#dev", TaskStatus.ABORTED, duration_ms=2410),
            done("web#build", TaskStatus.NOT_RUN),
            done("web#test", TaskStatus.NOT_RUN),
        )
    )
    rows = text.splitlines()
    assert rows[4] == "            2 success · 2 total · not counted: 1 aborted, 2 not run"


def test_failed_and_skipped_fill_their_share_of_both_bars():
    text = render(
        tally_of(
            done("lib#build", TaskStatus.FAILED, exit_code=1),
            done("app#build", TaskStatus.SKIPPED),
            done("web#lint", TaskStatus.SUCCESS, CacheOutcome.LOCAL),
            done("web#test", TaskStatus.SUCCESS, CacheOutcome.LOCAL),
        )
    )
    rows = text.splitlines()
    assert rows[4] == "            1 failed · 2 success · 1 skipped · 4 total"
    assert rows[6] == "            1 miss · 2 local · 1 skipped"
    assert rows[3].count("▰") == 50


def test_a_narrow_terminal_shortens_the_bars():
    text = render(broad_tally(), width=40)
    assert all(len(row) <= 40 for row in text.splitlines()[:7])


def test_github_actions_framing():
    assert gha_fence("::set-output name=x::1\n", "tok") == (
        "::stop-commands::tok\n::set-output name=x::1\n::tok::\n"
    )
    assert (
        gha_group("a#b (success 1.00s)", "x\n") == "::group::a#b (success 1.00s)\nx\n::endgroup::\n"
    )
    assert gha_error("a:b,c#d", "failed (exit 137, 128 + SIGKILL)\n100%") == (
        "::error title=a%3Ab%2Cc#d::failed (exit 137, 128 + SIGKILL)%0A100%25\n"
    )
