"""The stored plan against the full plan: after each change, `--dry=json` in the workspace
(where a stored plan may answer) and in a twin of it with the warm path off must print the same
bytes, and the stored plan must answer only where nothing the plan read has changed."""

from __future__ import annotations

import re
import shutil
import sqlite3
from typing import TYPE_CHECKING

import pytest
from tests.conftest import git, run_vx
from tests.e2e.test_warm_path import files, same_size_same_mtime, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

DRY = ("run", "build", "--all", "--dry=json")
# The stored plan never loads the workspace: its report of imports tells which path answered.
TIMED = {"PYTHONPROFILEIMPORTTIME": "1"}
_IMPORT_LINE = re.compile(r"^import time:.*\n", re.MULTILINE)


def dry(ws: Path, home: Path, *args: str, warm: bool = True, **env: str) -> VxResult:
    extra = {**TIMED, **env} if warm else {"VX_WARM": "0", **env}
    return run_vx([*DRY, *args], ws, env=extra, home=home)


def stored(result: VxResult) -> bool:
    """Whether the stored plan answered (the workspace loader was never imported)."""
    assert re.search(r"^import time:.*\| vx\.cli\.main$", result.err, re.MULTILINE), result
    return re.search(r"\|\s+vx\.loader\.assemble$", result.err, re.MULTILINE) is None


def stderr(result: VxResult) -> str:
    return _IMPORT_LINE.sub("", result.err)


def stored_plan_up(ws: Path, home: Path, *args: str) -> None:
    """Plan until a stored plan answers: the first plan opens the index, which a plan may
    not store on (its files changed as it read them); the second stores, the third replays."""
    answers = [dry(ws, home, *args).assert_ok() for _ in range(3)]
    assert not stored(answers[0]), answers[0]
    assert stored(answers[2]), answers[2]
    assert len({a.out for a in answers}) == 1, answers


@pytest.fixture
def planned(tmp_path: Path, workspace) -> tuple[Path, Path]:
    """A built workspace whose `--dry=json` answer is stored."""
    ws = workspace(files(), name="one/ws")
    home = tmp_path / "one" / "home"
    run_vx(["run", "build", "--all"], ws, home=home).assert_ok()
    stored_plan_up(ws, home)
    return ws, home


def twin(tmp_path: Path, ws: Path, home: Path) -> tuple[Path, Path]:
    """A fresh copy of the workspace and its home (cache included) for the full plan."""
    dst, n = tmp_path / "two", 0
    while dst.exists():
        n += 1
        dst = tmp_path / f"two-{n}"
    shutil.copytree(ws.parent, dst, symlinks=True)
    return dst / ws.name, dst / home.name


def agree(
    tmp_path: Path,
    planned: tuple[Path, Path],
    change: Callable[[Path], None],
    *args: str,
    replayed: bool = False,
    **env: str,
) -> VxResult:
    """After `change`, the fast plan and the full plan print the same bytes."""
    ws, home = planned
    change(ws)
    ws2, home2 = twin(tmp_path, ws, home)
    fast = dry(ws, home, *args, **env)
    full = dry(ws2, home2, *args, warm=False, **env)
    assert fast.code == full.code == 0, (fast, full)
    assert stored(fast) is replayed, fast
    assert fast.out == full.out, (fast, full)
    assert stderr(fast) == full.err, (fast, full)
    return fast


def test_nothing_changed_replays(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda _: None, replayed=True)


def test_input_edited(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda ws: write(ws / "packages/a/src/index.txt", "A\n"))


def test_same_size_same_mtime_edit(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda ws: same_size_same_mtime(ws / "packages/a/src/index.txt"))


def test_untracked_input_appears(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda ws: write(ws / "packages/a/src/new.txt", "new\n"))


def test_env_var_a_key_reads(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda _: None, API_URL="https://example.invalid")


def test_config_edited(tmp_path, planned) -> None:
    def change(ws: Path) -> None:
        cfg = ws / "packages/b/vx.config.json"
        write(cfg, cfg.read_text().replace("echo built", "echo rebuilt"))

    agree(tmp_path, planned, change)


def test_checkout_of_another_branch(tmp_path, planned) -> None:
    def change(ws: Path) -> None:
        git(ws, "checkout", "-q", "-b", "other")
        write(ws / "packages/b/src/index.txt", "b on another branch\n")
        git(ws, "commit", "-q", "-am", "other")

    agree(tmp_path, planned, change)


def test_a_run_writes_history(tmp_path, planned) -> None:
    """A run adds history rows the forecast reads: the index moved, so the plan is full."""
    ws, home = planned
    agree(tmp_path, planned, lambda _: run_vx(["run", "build", "--all"], ws, home=home).assert_ok())


def test_an_entry_dropped_from_the_index(tmp_path, planned) -> None:
    """An entry gone from the index turns a predicted hit into a miss."""
    _, home = planned

    def change(_: Path) -> None:
        (db,) = home.glob(".vx/*/cache/cache.db")
        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM entries WHERE project = 'b'")
        conn.close()

    fast = agree(tmp_path, planned, change)
    assert '"cacheStatus": "miss"' in fast.out, fast


def test_other_flags_are_a_plan_of_their_own(tmp_path, planned) -> None:
    agree(tmp_path, planned, lambda _: None, "--force")


def test_a_torn_stored_plan_is_refused(tmp_path, planned) -> None:
    def change(ws: Path) -> None:
        for snapshot in (ws.parent / "home/.vx/warm/plans").glob("*.marshal"):
            data = bytearray(snapshot.read_bytes())
            data[len(data) // 2 : len(data) // 2 + 16] = bytes(16)
            snapshot.write_bytes(bytes(data))

    agree(tmp_path, planned, change)


def test_the_full_plan_stores_again_after_a_change(planned) -> None:
    ws, home = planned
    write(ws / "packages/a/src/index.txt", "A\n")
    stored_plan_up(ws, home)


def test_a_selection_read_from_git_replays_with_its_note(tmp_path, planned) -> None:
    """`--affected` reads a ref: its proof is the warm path's, and its note is replayed."""
    ws, home = planned
    stored_plan_up(ws, home, "--affected=HEAD")
    fast = agree(tmp_path, planned, lambda _: None, "--affected=HEAD", replayed=True)
    assert "nothing affected since HEAD" in stderr(fast), fast


def test_an_affected_plan_sees_its_base_move(tmp_path, planned) -> None:
    ws, home = planned
    stored_plan_up(ws, home, "--affected=HEAD~0")

    def change(ws: Path) -> None:
        write(ws / "packages/a/src/index.txt", "A\n")
        git(ws, "commit", "-q", "-am", "moved")
        write(ws / "packages/a/src/index.txt", "a again\n")

    agree(tmp_path, planned, change, "--affected=HEAD~0")


def test_text_timing_and_warm_off_plans_never_use_it(planned) -> None:
    ws, home = planned
    for extra, env in (
        (("--dry",), TIMED),
        (("--dry=json",), {**TIMED, "VX_TIMING": "1"}),
        (("--dry=json",), {**TIMED, "VX_WARM": "0"}),
    ):
        for _ in range(3):
            result = run_vx(["run", "build", "--all", *extra], ws, env=env, home=home)
            assert not stored(result.assert_ok()), result


def test_a_variable_a_py_config_read_changes_the_plan(tmp_path, workspace) -> None:
    """What a `.py` config read while it ran is in the proof, as on the warm path."""
    from tests.e2e.runws import tree
    from tests.e2e.test_warm_config_reads import CONFIG

    files = tree({"web": ((), {})})
    del files["packages/web/vx.config.json"]
    files["packages/web/vx.config.py"] = CONFIG.format(lookup='os.environ.get("MODE", "none")')
    ws = workspace(files, name="one/ws")
    home = tmp_path / "one" / "home"
    run_vx(["run", "build", "--all"], ws, env={"MODE": "dev"}, home=home).assert_ok()
    answers = [dry(ws, home, MODE="dev").assert_ok() for _ in range(3)]
    assert stored(answers[2]), answers[2]
    agree(tmp_path, (ws, home), lambda _: None, MODE="prod")  # stores the prod answer
    agree(tmp_path, (ws, home), lambda _: None, MODE="dev")  # which dev does not prove
    assert stored(dry(ws, home, MODE="dev").assert_ok())
