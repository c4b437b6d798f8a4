"""`vx watch` never feeds on what vx itself writes: its redirected output, a project with no
task in the run (a root that is a project for `//#lint` only), and no watchdog warning leaks.

As in test_watch.py, "no extra cycle" is shown by a sentinel edit whose cycle must come next.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.watchproc import WatchProc, edit

if TYPE_CHECKING:
    from pathlib import Path

WATCHING = r"^vx watch: watching"
RESULT = r"^  result  "

# The root is a project (turbo's `//#lint`), and every task's key reads a root file
# (`globalDependencies`), so one recursive watcher covers the whole tree.
ROOT_PROJECT: dict[str, Any] = {
    "package.json": {
        "name": "acme",
        "private": True,
        "workspaces": ["packages/*"],
        "scripts": {"lint": "echo lint the repo"},
    },
    "package-lock.json": {"name": "acme", "lockfileVersion": 3, "packages": {}},
    "vx.workspace.json": {"tasksFrom": "turbo"},
    "turbo.json": {
        "globalDependencies": [".env.defaults"],
        "tasks": {"build": {"outputs": ["dist/**"]}, "//#lint": {}},
    },
    ".env.defaults": "REGION=eu\n",
    ".gitignore": "node_modules\ndist\n",
    "packages/app/package.json": {
        "name": "app",
        "scripts": {"build": "mkdir -p dist && cat src/index.txt ../../.env.defaults > dist/out"},
    },
    "packages/app/src/index.txt": "app\n",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_a_redirected_log_and_a_project_outside_the_run_start_no_cycle(
    tmp_path: Path, home: Path
) -> None:
    ws = make_git_workspace(tmp_path / "ws", ROOT_PROJECT)
    with WatchProc(["build", "--all"], ws, home=home, out_file=ws / "watch.log") as w:
        w.wait_for(WATCHING)
        edit(ws / "notes.txt", "a file of the root project, which has no task in this run\n")
        edit(ws / ".env.defaults", "REGION=us\n")
        w.wait_for(r"^vx watch: // \.env\.defaults; re-running\.\.\.$")
        w.wait_for(RESULT, count=2)
        edit(ws / "packages/app/src/sentinel.txt", uuid.uuid4().hex)
        w.wait_for(r"^vx watch: app src/sentinel\.txt; re-running\.\.\.$")
        assert w.reruns() == ["// .env.defaults", "app src/sentinel.txt"], w.dump()
        assert w.stop() == 0
    assert (ws / "packages/app/dist/out").read_text() == "app\nREGION=us\n"
    assert not [line for line in w.err if "Warning" in line], w.dump()


def test_a_task_remaking_its_output_tree_leaks_no_watchdog_warning(
    tmp_path: Path, home: Path
) -> None:
    churn = {
        "exec": (
            "i=0; while [ $i -lt 400 ]; do rm -rf dist; mkdir -p dist/a/b/c; i=$((i+1)); done"
            " && cat src/index.txt"
        ),
        "cache": {"outputs": {"files": ["dist/**"]}},
    }
    ws = make_git_workspace(tmp_path / "ws", tree({"app": ((), {"churn": churn})}))
    app = ws / "packages/app"
    with WatchProc(["churn"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        w.wait_for("^edited$")
        w.wait_for(RESULT, count=2)
        assert w.stop() == 0
    assert not [line for line in w.err if "Warning" in line], w.dump()


def test_a_log_redirected_into_a_watched_project_starts_no_cycle(
    tmp_path: Path, home: Path
) -> None:
    show = {"exec": "cat src/index.txt"}
    ws = make_git_workspace(tmp_path / "ws", tree({"app": ((), {"show": show})}))
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home, out_file=app / "watch.log") as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        w.wait_for("^edited$")
        w.wait_for(RESULT, count=2)
        edit(app / "src/sentinel.txt", uuid.uuid4().hex)
        w.wait_for(r"^vx watch: app src/sentinel\.txt; re-running\.\.\.$")
        assert w.reruns() == ["app src/index.txt", "app src/sentinel.txt"], w.dump()
        assert w.stop() == 0
