"""`vx watch` under a minute of edits: cycles stay within the debounce rules, none self-made.

Marked `soak`: CI runs it (about a minute of one worker, mostly asleep); deselect it
locally with `-m "not soak"`.
"""

from __future__ import annotations

import time
import uuid

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.watchproc import RERUN, WatchProc, edit

PROJECTS = ("a", "b", "c", "d")
FILES = 5  # per project: 20 files
BURSTS = 20
PER_BURST = 10  # 200 edits
PAUSE_S = 3.0  # between bursts: 20 bursts over about 60 s


@pytest.mark.soak
def test_two_hundred_edits_to_twenty_files_over_a_minute(tmp_path):
    build = {
        "exec": "date +%s%N > build.log; rm -rf dist; cp -r src dist",
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }
    files = tree({name: ((), {"build": build}) for name in PROJECTS})
    files[".gitignore"] = "dist/\n*.log\n"
    for name in PROJECTS:
        for i in range(FILES):
            files[f"packages/{name}/src/f{i}.txt"] = "0\n"
    ws = make_git_workspace(tmp_path / "ws", files)
    home = tmp_path / "home"
    home.mkdir()
    targets = [ws / f"packages/{p}/src/f{i}.txt" for p in PROJECTS for i in range(FILES)]
    labels = {f"{p} src/f{i}.txt" for p in PROJECTS for i in range(FILES)}
    with WatchProc(["build", "--all"], ws, home=home) as w:
        w.wait_for(r"^vx watch: watching 4 projects")
        edits = 0
        for burst in range(BURSTS):
            for k in range(PER_BURST):
                edit(targets[(burst * PER_BURST + k) % len(targets)], f"{burst}.{k}\n")
                edits += 1
            time.sleep(PAUSE_S)  # pacing the edits, never an assertion
        sentinel = ws / "packages/a/src/sentinel.txt"
        edit(sentinel, uuid.uuid4().hex)
        w.wait_for(r"^vx watch: a src/sentinel\.txt; re-running")
        cycles = w.reruns()
        assert w.stop() == 0
    assert edits == BURSTS * PER_BURST
    # no cycle came from vx's own writes: each names a file the test edited
    assert all(label in labels for label in cycles[:-1]), w.dump()
    # a burst is one batch (150 ms quiet, 1 s at most): at most one cycle each, and one more
    # where a stalled writer split it; never a cycle per edit
    assert 1 <= len(cycles) - 1 <= 2 * BURSTS, cycles
    assert all(RERUN.match(f"vx watch: {c}; re-running...") for c in cycles)
