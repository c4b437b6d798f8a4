"""The warm path's proof covers what a `.py` config read while it ran (issue 26, item 6): a
variable it looked up, or a file it opened, that changes sends the next run down the full
path, which re-keys the task on the config's new answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.conftest import run_vx
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

WARM = "warm replay"

CONFIG = """\
import os

mode = {lookup}
config = {{
    "tasks": {{
        "build": {{
            "exec": f"mkdir -p dist && echo built-{{mode}} > dist/out.txt",
            "cache": {{"outputs": {{"files": ["dist/**"]}}}},
        }}
    }}
}}
"""

LOOKUPS = [
    'os.environ["MODE"]',
    'os.environ.get("MODE", "none")',
    'os.getenv("MODE")',
    '"prod" if "MODE" in os.environ and os.environ["MODE"] == "prod" else "dev"',
    'dict(os.environ).get("MODE")',
]


def build(ws: Path, home: Path, **env: str) -> VxResult:
    extra = {"VX_TIMING": "1", **env}
    return run_vx(["run", "build", "--all"], ws, env=extra, home=home).assert_ok()


def warm_up(ws: Path, home: Path, **env: str) -> None:
    """Run until a replay happens: the snapshot of the all-hit run is on disk and holds."""
    for _ in range(3):
        if WARM in build(ws, home, **env).err:
            return
    pytest.fail("the warm path never replayed")


@pytest.mark.parametrize("lookup", LOOKUPS)
def test_a_variable_the_config_read_changes_and_the_warm_path_rekeys(
    workspace, tmp_path, lookup
) -> None:
    files = tree({"web": ((), {})})
    del files["packages/web/vx.config.json"]
    files["packages/web/vx.config.py"] = CONFIG.format(lookup=lookup)
    ws = workspace(files)
    home = tmp_path / "home"
    warm_up(ws, home, MODE="dev")
    out = ws / "packages/web/dist/out.txt"
    assert out.read_text() == "built-dev\n"

    r = build(ws, home, MODE="prod")

    assert WARM not in r.err, r
    assert "miss" in r.out or "config" in r.out, r  # it executed: the command is a new one
    assert out.read_text() == "built-prod\n"
    warm_up(ws, home, MODE="prod")
    assert out.read_text() == "built-prod\n"


def test_an_unrelated_variable_still_replays(workspace, tmp_path) -> None:
    files = tree({"web": ((), {})})
    del files["packages/web/vx.config.json"]
    files["packages/web/vx.config.py"] = CONFIG.format(lookup='os.environ["MODE"]')
    ws = workspace(files)
    home = tmp_path / "home"
    warm_up(ws, home, MODE="dev")
    assert WARM in build(ws, home, MODE="dev", SOMETHING_ELSE="1").err


@pytest.mark.parametrize("stem", ["packages/web/vx.config.py", "vx.workspace.py"])
def test_a_file_the_config_opened_changes_and_the_warm_path_rekeys(
    workspace, tmp_path, stem
) -> None:
    """The file lies outside the repository, where no `git status` sees it."""
    settings = tmp_path / "settings.txt"
    settings.write_text("dev\n")
    files = tree({"web": ((), {})})
    lookup = f"open({str(settings)!r}).read().strip()"
    if stem == "vx.workspace.py":
        files["vx.workspace.py"] = (
            f"mode = {lookup}\nconfig = {{'timeout': 600000 if mode == 'dev' else 1}}\n"
        )
        files["packages/web/vx.config.json"] = {
            "tasks": {"build": {"exec": "sleep 0.2", "cache": {}}}
        }
    else:
        del files["packages/web/vx.config.json"]
        files[stem] = CONFIG.format(lookup=lookup)
    ws = workspace(files)
    home = tmp_path / "home"
    warm_up(ws, home)
    settings.write_text("prod\n")

    r = run_vx(["run", "build", "--all"], ws, env={"VX_TIMING": "1"}, home=home)

    assert WARM not in r.err, r
    if stem == "vx.workspace.py":
        assert r.code == 0, r  # the full path read the new timeout; the hit needs none
    else:
        assert (ws / "packages/web/dist/out.txt").read_text() == "built-prod\n"
