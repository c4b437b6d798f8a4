"""What vx says, checked where real use found it wrong: each line true, short and one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.conftest import make_git_workspace, run_vx, write_tree

if TYPE_CHECKING:
    from pathlib import Path

BUILD = {"exec": "echo built", "cache": {"inputs": {"files": ["src/**"]}}}
TEST = {"exec": "echo tested", "cache": {"inputs": {"files": ["src/**", "test/**"]}}}


def _scoped(tmp_path: Path) -> Path:
    return make_git_workspace(
        tmp_path / "ws",
        {
            "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
            "packages/lib-a/package.json": {"name": "@acme/lib-a"},
            "packages/lib-a/vx.config.json": {"tasks": {"build": BUILD, "test": TEST}},
            "packages/lib-a/src/a.ts": "a\n",
        },
    )


def test_a_typo_in_a_scope_less_task_id_lists_the_package_s_tasks(tmp_path: Path) -> None:
    root = _scoped(tmp_path)
    run_vx(["run", "lib-a#build"], root, home=tmp_path / "home").assert_ok()
    typo = run_vx(["run", "lib-a#buidl"], root, home=tmp_path / "home").assert_code(1)
    assert "No project is named" not in typo.err
    assert "lib-a's tasks: build, test." in typo.err, typo.err


def test_an_unreached_name_beside_tasks_that_run_is_not_called_nothing_affected(
    tmp_path: Path,
) -> None:
    root = _scoped(tmp_path)
    write_tree(root, {"packages/lib-a/test/a.test.ts": "t\n"})  # outside build's inputs
    r = run_vx(
        ["run", "build", "test", "--affected=HEAD"], root, home=tmp_path / "home"
    ).assert_ok()
    assert "Nothing affected" not in r.err
    assert "The change reaches no build task; the other requested tasks run." in r.err, r.err
    assert "lib-a#test" in r.out


def test_an_overlong_upgrade_tag_is_clipped(tmp_path: Path) -> None:
    r = run_vx(["upgrade", "v" + "9" * 5000], tmp_path).assert_code(1)
    (line,) = r.err.splitlines()
    assert len(line) < 400, len(line)
    assert "is not a release tag" in line


def test_lock_check_without_a_lock_is_one_line(tmp_path: Path) -> None:
    root = _scoped(tmp_path)
    r = run_vx(["lock", "--check"], root, home=tmp_path / "home").assert_code(1)
    assert r.err == f"vx lock --check: no vx-lock.json at {root} — run vx lock\n", r.err
