"""What `vx run` prints, whole: each flow's stdout byte for byte after redaction, colour, CI."""

from __future__ import annotations

import re

import pytest
from tests.conftest import redact
from tests.e2e.runws import tree

_RULE = re.compile(r"^─ vx \S+ ─+$", re.MULTILINE)


def files(*, app_test: str = "echo app tested", web_build: str = "echo web built") -> dict:
    """lib ← app ← web, each with build and test; lib#build is cached, app#build paints a line."""
    return tree(
        {
            "lib": (
                (),
                {
                    "build": {
                        "exec": "mkdir -p dist && echo lib > dist/lib.txt && echo lib built",
                        "cache": {"outputs": {"files": ["dist/**"]}},
                    },
                    "test": {"dependsOn": ["build"], "exec": "echo lib tested"},
                },
            ),
            "app": (
                ("lib",),
                {
                    "build": {
                        "dependsOn": ["^build"],
                        "exec": r"printf '\033[31mapp built\033[0m\n'; echo app warns >&2",
                    },
                    "test": {"dependsOn": ["build", "^test"], "exec": app_test},
                },
            ),
            "web": (
                ("app",),
                {
                    "build": {"dependsOn": ["^build"], "exec": web_build},
                    "test": {"dependsOn": ["build", "^test"], "exec": "echo web tested"},
                },
            ),
        }
    )


FAILING = {"app_test": "echo app tests fail; exit 3"}


def plain(text: str) -> str:
    """The redacted output, with the footer's version rule made version-free."""
    return _RULE.sub("─ vx [VERSION] ───", redact(text))


def check(r, code: int, expected: str) -> None:
    assert r.code == code, repr(r)
    assert "\x1b" not in r.out, repr(r)
    assert plain(r.out) == expected, repr(r)


FOOTER_GREEN_3 = """\
─ vx [VERSION] ───
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            3 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            3 success · 3 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 miss · 2 no-cache

  info      2 workers · local cache
  time      [DURATION] · max [DURATION] · avg [DURATION] · min [DURATION]
  result    3 tasks · 2 no-cache · 0 cached (0%) · [DURATION]
"""

FOOTER_RED_6 = """\
─ vx [VERSION] ───
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            3 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 failed · 4 success · 1 skipped · 6 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 miss · 4 no-cache · 1 skipped

  info      1 worker · local cache
  time      [DURATION] · max [DURATION] · avg [DURATION] · min [DURATION]
  result    6 tasks · 1 failed · 4 no-cache · 0 cached (0%) · [DURATION]
"""


def test_broad_prints_one_liners_and_silences_a_warm_hit(workspace, vx):
    root = workspace(files())
    cold = vx(["run", "build", "--all", "--concurrency=2"], root)
    check(
        cold,
        0,
        """\
 ⏺︎ [DURATION] success miss     lib#build · first run
 ⏺︎ [DURATION] success no-cache app#build
 ⏺︎ [DURATION] success no-cache web#build

"""
        + FOOTER_GREEN_3,
    )
    warm = vx(["run", "build", "--all", "--concurrency=2"], root)
    check(
        warm,
        0,
        """\
 ⏺︎ [DURATION] success no-cache app#build
 ⏺︎ [DURATION] success no-cache web#build

─ vx [VERSION] ───
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            3 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            3 success · 3 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            2 no-cache · 1 up-to-date

  info      2 workers · local cache
  time      [DURATION] · max [DURATION] · avg [DURATION] · min [DURATION]
  result    3 tasks · 2 no-cache · all cached · [DURATION] saved · [DURATION]
""",
    )


def test_focused_streams_the_lone_requested_task_in_a_live_frame(workspace, vx):
    root = workspace(files())
    r = vx(["run", "build", "--concurrency=2"], root / "packages/app")
    check(
        r,
        0,
        r"""┌─ app#build > $ printf '\033[31mapp built\033[0m\n'; echo app warns >&2

app built
app warns

└─ app#build ── ([DURATION]) success

─ vx [VERSION] ───
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱
            2 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            2 success · 2 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 miss · 1 no-cache

  info      2 workers · local cache
  time      [DURATION] · max [DURATION] · avg [DURATION] · min [DURATION]
  result    2 tasks · 1 no-cache · 0 cached (0%) · [DURATION]
""",
    )


def test_several_requested_tasks_buffer_into_whole_frames(workspace, vx):
    root = workspace(files())
    r = vx(["run", "build", "test", "--concurrency=2"], root / "packages/app")
    check(
        r,
        0,
        r"""┌─ app#build > success

$ printf '\033[31mapp built\033[0m\n'; echo app warns >&2

├─ OUTPUT ──────────────────────────────────────────────────

app built
app warns

└─ app#build ── ([DURATION]) success

┌─ app#test > success

$ echo app tested

├─ OUTPUT ──────────────────────────────────────────────────

app tested

└─ app#test ── ([DURATION]) success

─ vx [VERSION] ───
  projects  ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱▱
            2 in run · 3 total
  tasks     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            4 success · 4 total
  cache     ▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰▰
            1 miss · 3 no-cache

  info      2 workers · local cache
  time      [DURATION] · max [DURATION] · avg [DURATION] · min [DURATION]
  result    4 tasks · 3 no-cache · 0 cached (0%) · [DURATION]
""",
    )


FAILURE_FRAME = """\
┌─ app#test > failed (exit 3)

$ echo app tests fail; exit 3

├─ OUTPUT ──────────────────────────────────────────────────

app tests fail

└─ app#test ── ([DURATION]) failed (exit 3)
"""


def test_a_failure_replays_its_frame_at_the_end_under_the_skipped_rows(workspace, vx):
    root = workspace(files(**FAILING))
    r = vx(["run", "test", "--all", "--concurrency=1"], root)
    check(
        r,
        1,
        """\
 ⏺︎ [DURATION] success miss     lib#build · first run
 ⏺︎ [DURATION] success no-cache app#build
 ⏺︎ [DURATION] success no-cache lib#test
 ◼︎ [DURATION] failed  no-cache app#test
 ⏺︎ [DURATION] success no-cache web#build
 ⊘         skipped          web#test • blocked by app#test

"""
        + FAILURE_FRAME
        + "\n"
        + FOOTER_RED_6,
    )


def test_ci_frames_every_task(workspace, vx):
    root = workspace(files())
    r = vx(["run", "build", "--all", "--concurrency=2"], root, env={"CI": "1"})
    check(
        r,
        0,
        r"""┌─ lib#build > success

$ mkdir -p dist && echo lib > dist/lib.txt && echo lib built

├─ OUTPUT ──────────────────────────────────────────────────

lib built

└─ lib#build ── ([DURATION]) success · first run

┌─ app#build > success

$ printf '\033[31mapp built\033[0m\n'; echo app warns >&2

├─ OUTPUT ──────────────────────────────────────────────────

app built
app warns

└─ app#build ── ([DURATION]) success

┌─ web#build > success

$ echo web built

├─ OUTPUT ──────────────────────────────────────────────────

web built

└─ web#build ── ([DURATION]) success

"""
        + FOOTER_GREEN_3,
    )


@pytest.mark.parametrize("ci", ["0", "false"])
def test_a_false_ci_keeps_the_flow(workspace, vx, ci):
    root = workspace(files())
    r = vx(["run", "build", "--all", "--concurrency=2"], root, env={"CI": ci}).assert_ok()
    assert plain(r.out).startswith(" ⏺︎ [DURATION] success miss     lib#build · first run\n"), repr(
        r
    )


def test_colour_is_forced_on_and_no_color_beats_it(workspace, vx):
    root = workspace(files())
    app = root / "packages/app"
    forced = vx(["run", "build"], app, env={"FORCE_COLOR": "1"}).assert_ok()
    assert "\x1b[31mapp built\x1b[0m" in forced.out  # the task's own colours survive
    assert "\x1b[38;2;" in forced.out  # and vx paints its own
    for env in ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, {"FORCE_COLOR": "0"}):
        r = vx(["run", "build"], app, env=env).assert_ok()
        assert "\x1b" not in r.out, (env, repr(r))
        assert "\napp built\n" in r.out, (env, repr(r))


def test_github_actions_groups_annotates_and_fences(workspace, vx):
    root = workspace(files(**FAILING, web_build="echo web built; echo ::warning::from a task"))
    env = {"CI": "true", "GITHUB_ACTIONS": "true"}
    r = vx(["run", "test", "--all", "--concurrency=1"], root, env=env)
    assert r.code == 1, repr(r)
    tokens = set(re.findall(r"^::stop-commands::([0-9a-f]{32})$", r.out, re.MULTILINE))
    assert len(tokens) == 1, repr(r)
    token = tokens.pop()
    fenced = re.findall(
        rf"^::stop-commands::{token}\n(.*?)^::{token}::$", r.out, re.MULTILINE | re.DOTALL
    )
    assert len(fenced) == 5, repr(r)
    assert any("\n::warning::from a task\n" in block for block in fenced)
    assert "\n::warning::from a task\n" not in re.sub(
        rf"^::stop-commands::{token}\n.*?^::{token}::$", "", r.out, flags=re.MULTILINE | re.DOTALL
    )

    def group(task: str, cmd: str, out: str, note: str = "") -> str:
        return f"""::group::{task} (success [DURATION])
::stop-commands::[TOKEN]
┌─ {task} > success

$ {cmd}

├─ OUTPUT ──────────────────────────────────────────────────

{out}

└─ {task} ── ([DURATION]) success{note}

::[TOKEN]::
::endgroup::
"""

    expected = (
        group(
            "lib#build",
            "mkdir -p dist && echo lib > dist/lib.txt && echo lib built",
            "lib built",
            " · first run",
        )
        + "\n"
        + group(
            "app#build",
            r"printf '\033[31mapp built\033[0m\n'; echo app warns >&2",
            "app built\napp warns",
        )
        + "\n"
        + group("lib#test", "echo lib tested", "lib tested")
        + "\n::error title=app#test::failed (exit 3)\n::stop-commands::[TOKEN]\n"
        + FAILURE_FRAME
        + "\n::[TOKEN]::\n\n"
        + group(
            "web#build",
            "echo web built; echo ::warning::from a task",
            "web built\n::warning::from a task",
        )
        + " ⊘         skipped          web#test • blocked by app#test\n\n"
        + FOOTER_RED_6
    )
    assert plain(r.out) == expected, repr(r)


def test_github_actions_fences_a_live_frame_too(workspace, vx):
    root = workspace(files(web_build="echo ::error::not a command"))
    r = vx(["run", "build"], root / "packages/web", env={"GITHUB_ACTIONS": "true"}).assert_ok()
    head = plain(r.out).split("\n\n─ vx")[0]
    assert head == (
        "::stop-commands::[TOKEN]\n"
        "┌─ web#build > $ echo ::error::not a command\n\n"
        "::error::not a command\n\n"
        "└─ web#build ── ([DURATION]) success\n\n"
        "::[TOKEN]::"
    ), repr(r)


OUTPUT_LOGS = {
    "full": r"""┌─ lib#build > success

$ mkdir -p dist && echo lib > dist/lib.txt && echo lib built

├─ OUTPUT ──────────────────────────────────────────────────

lib built

└─ lib#build ── ([DURATION]) success · first run

┌─ app#build > success

$ printf '\033[31mapp built\033[0m\n'; echo app warns >&2

├─ OUTPUT ──────────────────────────────────────────────────

app built
app warns

└─ app#build ── ([DURATION]) success

┌─ lib#test > success

$ echo lib tested

├─ OUTPUT ──────────────────────────────────────────────────

lib tested

└─ lib#test ── ([DURATION]) success

"""
    + FAILURE_FRAME
    + """
┌─ web#build > success

$ echo web built

├─ OUTPUT ──────────────────────────────────────────────────

web built

└─ web#build ── ([DURATION]) success

 ⊘         skipped          web#test • blocked by app#test

""",
    "errors-only": FAILURE_FRAME
    + "\n ⊘         skipped          web#test • blocked by app#test\n\n",
    "hash-only": """\
success         lib#build [HASH]
success         app#build [HASH]
success         lib#test [HASH]
failed          app#test [HASH]
success         web#build [HASH]
skipped         web#test [HASH]

""",
    "none": "",
}


@pytest.mark.parametrize("mode", OUTPUT_LOGS)
def test_output_logs_beats_the_flow(workspace, vx, tmp_path, mode):
    root = workspace(files(**FAILING))
    args = ["run", "test", "--concurrency=1", "--output-logs", mode]
    focused = vx(args, root / "packages/web")
    check(focused, 1, OUTPUT_LOGS[mode] + FOOTER_RED_6)
    broad = vx([*args, "--all"], root, home=tmp_path / "other-home")
    check(broad, 1, OUTPUT_LOGS[mode] + FOOTER_RED_6)


TABLE = """\
 ⏺︎ [DURATION] success no-cache app#build
 ⏺︎ [DURATION] success miss     lib#build · first run
 ⏺︎ [DURATION] success no-cache web#build

"""


def test_verbosity_adds_a_task_table_above_the_footer(workspace, vx, tmp_path):
    root = workspace(files())
    focused = vx(["run", "build", "--concurrency=2", "--verbosity", "1"], root / "packages/web")
    check(
        focused,
        0,
        """\
┌─ web#build > $ echo web built

web built

└─ web#build ── ([DURATION]) success

"""
        + TABLE
        + FOOTER_GREEN_3,
    )
    broad = vx(
        ["run", "build", "--all", "--concurrency=2", "--verbosity=1"],
        root,
        home=tmp_path / "other-home",
    )
    check(
        broad,
        0,
        """\
 ⏺︎ [DURATION] success miss     lib#build · first run
 ⏺︎ [DURATION] success no-cache app#build
 ⏺︎ [DURATION] success no-cache web#build

"""
        + TABLE
        + FOOTER_GREEN_3,
    )


def test_a_lone_task_s_frame_says_why_it_missed(workspace, vx):
    """The framed flow (one task, its frame live) closes with the reason a row would show."""
    build = {"exec": "echo built", "cache": {"inputs": {"env": ["API_URL"]}}}
    root = workspace(tree({"web": ((), {"build": build})}))
    first = vx(["run", "web#build"], root, env={"API_URL": "a"}).assert_ok()
    assert "└─ web#build ── (" in first.out
    assert plain(first.out).split("\n\n─ vx")[0].endswith(") success · first run"), repr(first)
    moved = vx(["run", "web#build"], root, env={"API_URL": "b"}).assert_ok()
    assert plain(moved.out).split("\n\n─ vx")[0].endswith(") success · env API_URL"), repr(moved)
