"""Flaky rows end to end: a key that failed after it passed, a pass that took a retry, and the
breaks and recoveries that carry no note; the row, the frame's close and the summary JSON."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator
from tests.conftest import REPO

CACHE = {"inputs": {"files": ["src/**"]}, "outputs": {"files": []}}
TEST = {"exec": "test ! -f ../../flag", "cache": CACHE}
# Fails its first attempt of a run, passes the second: the count lives outside its inputs.
RETRIED = {
    "exec": 'n=$(cat ../../count 2>/dev/null || echo 0); echo $((n+1)) > ../../count; [ "$n" = 1 ]',
    "cache": CACHE,
}


def files() -> dict[str, object]:
    return {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "flag\ncount\n",
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"test": TEST, "retried": RETRIED}},
        "packages/a/src/x": "x\n",
        "packages/b/package.json": {"name": "b"},
        "packages/b/vx.config.json": {"tasks": {"test": {"exec": "true", "cache": CACHE}}},
    }


def rows(out: str) -> list[str]:
    """Project a's task rows in a run's stdout."""
    return [line for line in out.splitlines() if line.startswith(" ") and " a#" in line]


def summary_row(out: str, task: str) -> dict[str, object]:
    doc = json.loads(out)
    Draft202012Validator(json.loads((REPO / "schemas/summary.json").read_text())).validate(doc)
    return next(t for t in doc["tasks"] if t["id"] == task)


def test_a_key_that_fails_after_it_passed_is_flaky(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "a#test"], root).assert_ok()
    vx(["run", "a#test"], root).assert_ok()  # a hit: a pass it replayed
    (root / "flag").write_text("")
    r = vx(["run", "test", "--all", "--force"], root).assert_code(1)
    assert rows(r.out)[0].endswith(
        "failed  miss     a#test · key unchanged flaky - passed 2\u00d7 before"
    )
    close = next(line for line in r.out.splitlines() if line.startswith("└─ a#test"))
    assert close.endswith("failed (exit 1) · key unchanged flaky - passed 2\u00d7 before")
    doc = vx(["run", "a#test", "--force", "--format", "json"], root).assert_code(1)
    row = summary_row(doc.out, "a#test")
    assert row["status"] == "failed"
    assert row["flaky"] == {"passes": 2, "failures": 2, "attempts": 1}


def test_a_pass_after_a_flake_on_its_key_still_says_so(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "a#test"], root).assert_ok()
    (root / "flag").write_text("")
    vx(["run", "a#test", "--force"], root).assert_code(1)
    (root / "flag").unlink()
    r = vx(["run", "a#test", "--force"], root).assert_ok()
    assert "flaky - failed 1\u00d7 before" in r.out


def test_a_pass_that_needed_a_retry_is_flaky(workspace, vx) -> None:
    root = workspace(files())
    r = vx(["run", "a#retried", "--retry=1", "--format", "json"], root).assert_ok()
    row = summary_row(r.out, "a#retried")
    assert row["status"] == "success"
    assert row["flaky"] == {"passes": 1, "failures": 1, "attempts": 2}
    (root / "count").unlink()
    r = vx(["run", "a#retried", "--retry=1", "--force"], root).assert_ok()
    close = next(line for line in r.out.splitlines() if line.startswith("└─ a#retried"))
    assert close.endswith("success · key unchanged flaky - failed 2\u00d7 before · 2 attempts")


def test_a_break_and_a_recovery_carry_no_note(workspace, vx) -> None:
    root = workspace(files())
    (root / "flag").write_text("")
    r = vx(["run", "a#test", "--format", "json"], root).assert_code(1)
    assert "flaky" not in summary_row(r.out, "a#test")
    r = vx(["run", "a#test"], root).assert_code(1)
    assert "flaky" not in r.out
    (root / "flag").unlink()
    r = vx(["run", "a#test"], root).assert_ok()
    assert "flaky" not in r.out
    r = vx(["run", "a#test", "--format", "json"], root).assert_ok()
    assert "flaky" not in summary_row(r.out, "a#test")


def test_a_task_without_a_cache_block_is_never_judged(workspace, vx) -> None:
    tree = files()
    tree["packages/a/vx.config.json"] = {"tasks": {"test": {"exec": TEST["exec"]}}}
    root = workspace(tree)
    vx(["run", "a#test"], root).assert_ok()
    (root / "flag").write_text("")
    r = vx(["run", "a#test"], root).assert_code(1)
    assert "flaky" not in r.out


def test_a_task_run_past_a_failed_dependency_is_not_judged(workspace, vx) -> None:
    tree = files()
    tree["packages/b/package.json"] = {"name": "b", "dependencies": {"a": "*"}}
    tree["packages/b/vx.config.json"] = {
        "tasks": {
            "check": {"exec": "test ! -f ../../flag2", "cache": CACHE, "dependsOn": ["^test"]}
        }
    }
    tree[".gitignore"] = "flag\nflag2\ncount\n"
    root = workspace(tree)
    vx(["run", "b#check"], root).assert_ok()
    (root / "flag2").write_text("")
    shown = vx(["run", "b#check", "--force"], root).assert_code(1)
    assert "flaky - passed 1\u00d7 before" in shown.out
    (root / "flag2").unlink()
    (root / "flag").write_text("")
    past = vx(["run", "b#check", "--force", "--continue=always", "--format", "json"], root)
    assert "flaky" not in summary_row(past.assert_code(1).out, "b#check")


def test_a_run_past_a_failed_dependency_never_counts_toward_flakiness(workspace, vx) -> None:
    # `gen` fails while a marker outside its inputs exists (a flake of its own); `use` fails
    # only because it ran past that failure, and its later pass must not read as a recovery.
    tree = files()
    tree[".gitignore"] = "FAIL\n"
    tree["packages/a/vx.config.json"] = {
        "tasks": {
            "gen": {"exec": "test ! -f ../../FAIL", "cache": CACHE},
            "use": {"exec": "test ! -f ../../FAIL", "cache": CACHE, "dependsOn": ["gen"]},
        }
    }
    root = workspace(tree)
    vx(["run", "a#use", "--force"], root).assert_ok()
    (root / "FAIL").write_text("")
    past = vx(["run", "a#use", "--force", "--continue", "--format", "json"], root)
    assert "flaky" not in summary_row(past.assert_code(1).out, "a#use")
    (root / "FAIL").unlink()
    again = vx(["run", "a#use", "--force"], root).assert_ok()
    close = next(line for line in again.out.splitlines() if line.startswith("└─ a#use"))
    assert close.endswith("success · key unchanged")
    (root / "FAIL").write_text("")
    vx(["run", "a#use", "--force", "--continue"], root).assert_code(1)
    (root / "FAIL").unlink()
    doc = vx(["run", "a#use", "--force", "--format", "json"], root).assert_ok().out
    assert "flaky" not in summary_row(doc, "a#use")
    assert summary_row(doc, "a#gen")["flaky"] == {"passes": 3, "failures": 2, "attempts": 1}
    info = vx(["info", "--format", "json"], root).assert_ok().json()
    assert [t["taskId"] for t in info["flakyTasks"]] == ["a#gen"]
