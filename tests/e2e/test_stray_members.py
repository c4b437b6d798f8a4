"""A directory a JS workspace glob matches that holds no package.json: npm, pnpm, Yarn and Bun
pass it by, and so does vx, saying so in one note (uv refuses it, and so does vx: see
test_uv_workspaces)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import make_git_workspace, run_vx

if TYPE_CHECKING:
    from pathlib import Path

MANAGERS = {
    "npm": {},
    "yarn": {"yarn.lock": ""},
    "bun": {"bun.lock": "{}"},
    "pnpm": {"pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n"},
}


@pytest.mark.parametrize("manager", sorted(MANAGERS))
def test_a_stray_directory_is_skipped_with_a_note(tmp_path: Path, manager: str) -> None:
    root: dict[str, Any] = {"name": "root", "private": True}
    if manager != "pnpm":
        root["workspaces"] = ["packages/*"]
    files: dict[str, Any] = {
        "package.json": root,
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"build": {"exec": "echo built"}}},
        "packages/notes/README.md": "plans\n",
        **MANAGERS[manager],
    }
    ws = make_git_workspace(tmp_path / "ws", files)
    r = run_vx(["run", "build", "--all"], ws, home=tmp_path / "home").assert_ok()
    notes = [line for line in r.err.splitlines() if line.startswith("[vx] note: ")]
    assert len(notes) == 1, r.err
    assert f"matches packages/notes, which has no package.json; skipped, as {manager}" in notes[0]
    assert "a#build" in r.out
