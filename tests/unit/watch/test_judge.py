"""The watch loop's judgement on real files: path rules, settled state, the self-write notice."""

from __future__ import annotations

import os

import pytest

from vx.watch.judge import (
    ABSENT,
    PathRules,
    SelfWrites,
    StateJudge,
    TaskFiles,
    always_ignored,
    rebase,
    settled_state,
)


@pytest.mark.parametrize(
    ("rel", "ignored"),
    [
        ("node_modules/x/index.js", True),
        ("packages/a/node_modules/y", True),
        (".git/index", True),
        ("packages/a/.vx/cache", True),
        ("src/a.ts~", True),
        ("tsconfig.tsbuildinfo", True),
        ("src/a.ts", False),
        ("src/.vxrc", False),
        ("gitx/a", False),
    ],
)
def test_always_ignored(rel, ignored):
    assert always_ignored(rel) is ignored


ROOT = "/ws"
BUILD = TaskFiles(
    outputs=rebase("packages/a", ["dist/**"]), inputs=rebase("packages/a", ["src/**"])
)
FORMAT = TaskFiles(outputs=("packages/a/src/**",), inputs=("packages/a/src/**",))
LITERAL = TaskFiles(outputs=rebase("packages/a", ["out"]), inputs=())
DEEP = TaskFiles(outputs=rebase("packages/a", ["build/gen/*.js"]), inputs=())


@pytest.mark.parametrize(
    ("tasks", "path", "ignored"),
    [
        ((BUILD,), "packages/a/dist/x.js", True),
        ((BUILD,), "packages/a/dist", True),  # the container coming and going
        ((BUILD,), "packages/a", False),  # never climbs past the project dir
        ((BUILD,), "packages/a/src/x.ts", False),
        ((BUILD, FORMAT), "packages/a/src/x.ts", False),  # build reads what format writes
        ((FORMAT,), "packages/a/src/x.ts", True),  # a task's outputs are no input of its own
        ((LITERAL,), "packages/a/out/deep/file", True),  # a literal entry is its whole tree
        ((DEEP,), "packages/a/build/gen/x.js", True),
        ((DEEP,), "packages/a/build", True),
        ((DEEP,), "packages/a/build/other.txt", False),
        ((), "cache/entry", True),  # the resolved cache dir
        ((), "elsewhere", False),
    ],
)
def test_path_rules(tasks, path, ignored):
    rules = PathRules(
        ROOT, cache_dirs=[f"{ROOT}/cache"], tasks=tasks, project_dirs=["packages/a", "."]
    )
    assert rules.ignored(f"{ROOT}/{path}") is ignored


def test_a_path_outside_the_root_is_never_a_cycle():
    assert PathRules(ROOT).ignored("/elsewhere/file")


def test_rebase_keeps_negations_in_front():
    assert rebase("a", ["dist/**", "!dist/keep"]) == ("a/dist/**", "!a/dist/keep")
    assert rebase(".", ["x"]) == ("x",)


def test_settled_state_reads_bytes_mode_entries_and_targets(tmp_path):
    f = tmp_path / "f"
    f.write_text("one")
    first = settled_state(str(f))
    f.write_text("one")
    assert settled_state(str(f)) == first  # same bytes: same state, whatever the mtime
    f.chmod(0o755)
    assert settled_state(str(f)) != first  # the key reads the executable bit
    d = tmp_path / "d"
    d.mkdir()
    empty = settled_state(str(d))
    (d / "x").write_text("12")
    assert settled_state(str(d)) != empty
    link = tmp_path / "l"
    link.symlink_to("f")
    assert settled_state(str(link)) == ("link", "f")
    assert settled_state(str(tmp_path / "gone")) == ABSENT


def test_the_judge_counts_a_change_once_and_first_sightings_by_time(tmp_path):
    rules = PathRules(str(tmp_path))
    old = tmp_path / "old"
    old.write_text("x")
    os.utime(old, (1, 1))
    armed_at = old.stat().st_ctime + 1000  # the arm comes after every time on this file
    judge = StateJudge(rules, armed_at=armed_at, tracked=lambda rel: rel == "tracked")
    assert not judge.edited(str(old))  # seen first, last touched before the arm
    old.write_text("y")
    assert judge.edited(str(old))  # different bytes
    old.write_text("y")
    assert not judge.edited(str(old))  # settled to what was judged
    assert not judge.edited(str(tmp_path / "4913"))  # an editor's probe, gone, never tracked
    assert judge.edited(str(tmp_path / "tracked"))  # a tracked file deleted


def test_a_new_file_after_the_arm_is_an_edit(tmp_path):
    judge = StateJudge(PathRules(str(tmp_path)), armed_at=0.0, tracked=lambda _rel: False)
    new = tmp_path / "new"
    new.write_text("x")
    assert judge.edited(str(new))


def test_the_self_write_notice_comes_at_the_third_cycle_in_a_row_once():
    writes = SelfWrites()
    assert writes.cycle("/ws/a/log", after_run=False) == 0  # the user's edit
    for expected in (1, 2):
        assert writes.cycle("/ws/a/log", after_run=True) == expected
        assert writes.notice("/ws/a/log", "a/log", server=False) is None
    assert writes.cycle("/ws/a/log", after_run=True) == 3
    line = writes.notice("/ws/a/log", "a/log", server=False)
    assert line is not None
    assert line.startswith("vx watch: a/log changed during each of the last 3 cycles")
    assert "cache.outputs.files" in line
    assert writes.cycle("/ws/a/log", after_run=True) == 4
    assert writes.notice("/ws/a/log", "a/log", server=False) is None  # said once


def test_the_server_notice_names_gitignore():
    writes = SelfWrites()
    for _ in range(3):
        writes.cycle("/ws/a/pid", after_run=True)
    line = writes.notice("/ws/a/pid", "a/pid", server=True)
    assert line is not None
    assert ".gitignore" in line
