"""Exit handlers: a plugin's `atexit` flush runs through `vx`, and a hung one cannot hold the
exit past its bound."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from tests.conftest import base_env, make_git_workspace, run_vx, vx_argv

if TYPE_CHECKING:
    from pathlib import Path

FLUSHER = """\
import atexit
import os
import time

from vx.plugins import Plugin


def plugin():
    seen = []

    def flush():
        if os.environ.get("HANG_AT_EXIT"):
            time.sleep(600)
        with open(os.environ["FLUSH_FILE"], "w") as out:
            out.write(f"{len(seen)} events\\n")

    atexit.register(flush)
    return Plugin(name="flusher", telemetry=seen.append)
"""


def make(tmp_path: Path, workspace: dict[str, object]) -> Path:
    files: dict[str, object] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "__pycache__/\n",
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"build": {"exec": "true"}}},
        **workspace,
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    return make_git_workspace(ws, files)


def test_a_plugins_atexit_flush_runs_through_vx(tmp_path: Path) -> None:
    ws = make(
        tmp_path, {"flusher.py": FLUSHER, "vx.workspace.json": {"plugins": ["flusher:plugin"]}}
    )
    flushed = tmp_path / "flushed.txt"
    env = {"FLUSH_FILE": str(flushed)}
    run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    # RunStarted, TaskStarted, TaskFinished, RunFinished
    assert flushed.read_text() == "4 events\n"


def test_a_hung_exit_handler_cannot_hold_the_exit(tmp_path: Path) -> None:
    ws = make(
        tmp_path, {"flusher.py": FLUSHER, "vx.workspace.json": {"plugins": ["flusher:plugin"]}}
    )
    env = base_env(
        {"FLUSH_FILE": str(tmp_path / "x"), "HANG_AT_EXIT": "1", "HOME": str(tmp_path / "home")}
    )
    # a generous deadline, only to catch a hang: the bound itself is 2 s
    proc = subprocess.run(
        [*vx_argv(), "run", "build", "--all"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.endswith(
        "vx: exit handlers still running after 2 s; leaving without them\n"
    ), proc.stderr
