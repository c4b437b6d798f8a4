"""`vx run` when tasks fail: --continue modes, skipped rows, retries, timeouts."""

from __future__ import annotations

import pytest
from tests.e2e.runws import tree


def chain(fail_lib: str = "exit 3"):
    """lib#build fails; app#build depends on it; other#build is independent."""
    return tree(
        {
            "lib": ((), {"build": {"exec": f"echo lib here; {fail_lib}"}}),
            "app": (("lib",), {"build": {"dependsOn": ["^build"], "exec": "echo app built"}}),
            "top": (("app",), {"build": {"dependsOn": ["^build"], "exec": "echo top built"}}),
            "other": ((), {"build": {"exec": "echo other built"}}),
        }
    )


def test_deps_ok_skips_dependants_and_names_the_root(workspace, vx):
    root = workspace(chain())
    r = vx(["run", "build", "--all", "--concurrency=1"], root)
    assert r.code == 1
    assert " ⊘         skipped          app#build • blocked by lib#build" in r.out
    assert " ⊘         skipped          top#build • blocked by lib#build" in r.out
    assert "other built" not in r.out  # broad flow: a success is a one-liner
    assert "success" in r.out
    assert "lib here" in r.out  # the failure's frame replays at the end


def test_never_stops_dispatch(workspace, vx):
    root = workspace(chain())
    r = vx(["run", "build", "--all", "--concurrency=1", "--continue=never"], root)
    assert r.code == 1
    rows = r.out.split("\n\n")[0].splitlines()
    assert rows[1:] == [
        " ⊘         skipped          app#build • blocked by lib#build",
        " ⊘         skipped          other#build",
        " ⊘         skipped          top#build • blocked by lib#build",
    ]
    assert "1 failed · 3 skipped · 4 total" in r.out


def test_always_runs_dependants_anyway(workspace, vx):
    root = workspace(chain())
    r = vx(["run", "build", "--all", "--continue", "--output-logs=full"], root)
    assert r.code == 1
    assert "app built" in r.out
    assert "top built" in r.out
    assert "skipped" not in r.out.split("─ vx")[0]


def test_retry_reruns_a_failed_task(workspace, vx):
    files = tree(
        {
            "a": (
                (),
                {
                    "flaky": {
                        "exec": "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); "
                        'echo $n > count; echo "attempt $n"; [ $n -ge 3 ]'
                    }
                },
            )
        }
    )
    root = workspace(files)
    vx(["run", "flaky", "--retry", "1"], root / "packages/a").assert_code(1)
    (root / "packages/a/count").unlink()
    r = vx(["run", "flaky", "--retry=2"], root / "packages/a").assert_ok()
    assert "attempt 3" in r.out


def test_exec_retries_beats_the_flag(workspace, vx):
    files = tree({"a": ((), {"t": {"exec": {"command": "echo try >> log; exit 1", "retries": 0}}})})
    root = workspace(files)
    vx(["run", "t", "--retry=3"], root / "packages/a").assert_code(1)
    assert (root / "packages/a/log").read_text().count("try") == 1


@pytest.mark.parametrize(
    ("how", "env"),
    [
        (["--timeout", "300"], {}),
        ([], {"VX_TASK_TIMEOUT": "300"}),
    ],
)
def test_timeout_fails_with_143(workspace, vx, how, env):
    files = tree({"a": ((), {"slow": {"exec": "echo start; sleep 30"}})})
    root = workspace(files)
    r = vx(["run", "slow", *how], root / "packages/a", env=env)
    assert r.code == 1, repr(r)
    assert "timed out" in r.out
    assert "143" in r.out


def test_exec_timeout_beats_the_flag(workspace, vx):
    files = tree({"a": ((), {"slow": {"exec": {"command": "sleep 30", "timeout": 200}}})})
    root = workspace(files)
    r = vx(["run", "slow", "--timeout", "60000"], root / "packages/a")
    assert r.code == 1
    assert "timed out" in r.out


def test_workspace_timeout_is_the_last_rung(workspace, vx):
    files = tree({"a": ((), {"slow": {"exec": "sleep 30"}})})
    files["vx.workspace.json"] = {"timeout": 200}
    root = workspace(files)
    r = vx(["run", "slow"], root / "packages/a")
    assert r.code == 1
    assert "timed out" in r.out


def test_a_term_ignoring_task_is_killed_after_the_grace(workspace, vx):
    files = tree({"a": ((), {"stubborn": {"exec": "trap '' TERM; sleep 30 & wait; sleep 30"}})})
    root = workspace(files)
    r = vx(
        ["run", "stubborn", "--timeout", "200"],
        root / "packages/a",
        env={"VX_KILL_GRACE_MS": "300"},
    )
    assert r.code == 1
    assert "timed out" in r.out


def test_numeric_flags_take_plain_integers(workspace, vx):
    root = workspace(chain())
    for bad in ("0x10", "1e3", "2.7", "+4"):
        r = vx(["run", "build", "--all", f"--concurrency={bad}"], root)
        assert r.code == 1, bad
        assert "--concurrency" in r.err
