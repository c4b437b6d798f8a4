"""A test-only edge that closes a package cycle gives way only in the task it would loop back to.

`a`'s `[dependency-groups] test` lists `b`, and `b` depends on `a` (uv locks this fine).
`a#build → ^build → b#build` would come back to a#build, so that edge orders nothing; but
`a#test → ^build → b#build` loops back to nothing, so a's tests wait for b's build and run
again when b changes, rather than answering from a cache keyed on a's files alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

ROOT = '[tool.uv.workspace]\nmembers = ["packages/*"]\n'
A = '[project]\nname = "a"\nversion = "0.1"\ndependencies = []\n[dependency-groups]\ntest = ["b"]\n'
B = '[project]\nname = "b"\nversion = "0.1"\ndependencies = ["a"]\n'


def config(log: Path, name: str) -> dict[str, Any]:
    def task(verb: str) -> dict[str, Any]:
        return {"exec": f"echo {name}#{verb} >> {log}", "dependsOn": ["^build"], "cache": {}}

    return {"tasks": {"build": task("build"), "test": task("test")}}


def statuses(vx, root: Path, *args: str) -> dict[str, tuple[str, list[str]]]:
    plan = vx(["run", *args, "--dry=json"], root).assert_ok().json()
    return {t["id"]: (t["cacheStatus"], sorted(t["deps"])) for t in plan["tasks"]}


def test_a_s_tests_wait_for_b_and_run_again_when_b_changes(workspace, vx, tmp_path) -> None:
    log = tmp_path / "ran.log"
    root = workspace(
        {
            "pyproject.toml": ROOT,
            "packages/a/pyproject.toml": A,
            "packages/a/vx.config.json": config(log, "a"),
            "packages/a/a.py": "X = 1\n",
            "packages/b/pyproject.toml": B,
            "packages/b/vx.config.json": config(log, "b"),
            "packages/b/b.py": "Y = 1\n",
        }
    )
    assert statuses(vx, root, "a#test") == {
        "a#build": ("miss", []),
        "b#build": ("miss", ["a#build"]),
        "a#test": ("miss", ["b#build"]),
    }
    # The build still orders the runtime way only: a#build waits for nothing.
    assert statuses(vx, root, "build", "--all") == {
        "a#build": ("miss", []),
        "b#build": ("miss", ["a#build"]),
    }
    vx(["run", "a#test"], root).assert_ok()
    assert log.read_text().split() == ["a#build", "b#build", "a#test"]

    (root / "packages/b/b.py").write_text("Y = 2\n")
    assert statuses(vx, root, "a#test") == {
        "a#build": ("hit-local", []),
        "b#build": ("miss", ["a#build"]),
        "a#test": ("miss", ["b#build"]),
    }
    log.unlink()
    vx(["run", "a#test"], root).assert_ok()
    assert log.read_text().split() == ["b#build", "a#test"]
