"""`vx run` and real processes: stop signals, orphans, servers, closed pipes, a terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from typing import TYPE_CHECKING

import pytest
from tests.conftest import VX, base_env
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

SLEEPER = "echo $$ > ../../pids/$VX_RUN_TASK.pid; echo started; sleep 60"


def sleepers(n: int = 3, *, ignore_term: bool = False) -> dict:
    command = ("trap '' TERM INT; " if ignore_term else "") + SLEEPER
    files = tree({f"p{i}": ((), {"nap": {"exec": command}}) for i in range(n)})
    files["pids/.keep"] = ""
    return files


def start_vx(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """vx in the background, with a home (so a cache store) beside the workspace."""
    return subprocess.Popen(
        [sys.executable, str(VX), *args],
        cwd=cwd,
        env=base_env({"HOME": str(cwd.parent / "home"), **(env or {})}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_pids(root: Path, n: int, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = [p for p in (root / "pids").glob("*.pid") if p.read_text().strip()]
        if len(files) >= n:
            return [int(p.read_text()) for p in files]
        time.sleep(0.05)
    raise AssertionError("the tasks never started")


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(("signo", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_reaches_every_group_and_vx_dies_of_it(workspace, signo, code):
    root = workspace(sleepers(3))
    proc = start_vx(["run", "nap", "--all", "--concurrency=3"], root)
    pgids = wait_for_pids(root, 3)
    proc.send_signal(signo)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode in (-signo, code), (proc.returncode, out, err)
    assert "Traceback" not in err
    for pgid in pgids:
        assert group_gone(pgid), f"group {pgid} survived vx"


def test_a_group_ignoring_term_is_killed_after_the_grace(workspace):
    root = workspace(sleepers(1, ignore_term=True))
    proc = start_vx(["run", "nap", "--all"], root, env={"VX_KILL_GRACE_MS": "300"})
    pgids = wait_for_pids(root, 1)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode in (-signal.SIGTERM, 143)
    assert all(group_gone(p) for p in pgids)


def test_a_second_signal_skips_the_grace(workspace):
    root = workspace(sleepers(1, ignore_term=True))
    proc = start_vx(["run", "nap", "--all"], root, env={"VX_KILL_GRACE_MS": "60000"})
    pgids = wait_for_pids(root, 1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode in (-signal.SIGINT, 130)
    assert all(group_gone(p) for p in pgids)


def test_aborted_and_not_run_rows_after_a_stop(workspace):
    files = tree(
        {
            "a": ((), {"nap": {"exec": SLEEPER}}),
            "b": (("a",), {"nap": {"dependsOn": ["^nap"], "exec": "echo never"}}),
        }
    )
    files["pids/.keep"] = ""
    root = workspace(files)
    proc = start_vx(["run", "nap", "--all"], root)
    wait_for_pids(root, 1)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert " ✗ " in out
    assert "aborted" in out
    assert "a#nap" in out
    assert " ◌         not run          b#nap" in out


def test_a_closed_pipe_does_not_change_the_verdict(workspace):
    chatty = "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; touch done.flag"
    files = tree({f"p{i}": ((), {"talk": {"exec": chatty}}) for i in range(3)})
    root = workspace(files)
    script = f'"{sys.executable}" "{VX}" run talk --all --output-logs=full | head -1; echo "rc=${{PIPESTATUS[0]}}"'
    proc = subprocess.run(
        ["bash", "-c", script],
        cwd=root,
        env=base_env({"HOME": str(root.parent / "home")}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.stdout.strip().splitlines()[-1] == "rc=0", proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert all((root / f"packages/p{i}/done.flag").exists() for i in range(3))


def server_files(tail: str = "sleep 60") -> dict:
    return tree(
        {
            "srv": (
                (),
                {
                    "dev": {
                        "exec": {
                            "command": f"sleep 0.5; touch marker; echo 'ready in 5ms'; {tail}",
                            "persistent": True,
                            "readyWhen": "ready in \\d+ms",
                        }
                    }
                },
            ),
            "app": (
                ("srv",),
                {
                    "check": {
                        "dependsOn": ["srv#dev"],
                        "exec": "test -f ../srv/marker && echo saw it",
                    }
                },
            ),
        }
    )


def test_a_dependant_starts_only_once_the_server_is_ready(workspace, vx):
    root = workspace(server_files())
    r = vx(["run", "check"], root / "packages/app").assert_ok()
    assert "saw it" in r.out


def test_a_server_that_never_gets_ready_fails_its_dependants(workspace, vx):
    files = server_files()
    files["packages/srv/vx.config.json"]["tasks"]["dev"]["exec"].update(
        {"command": "echo booting; exit 4"}
    )
    root = workspace(files)
    r = vx(["run", "check"], root / "packages/app")
    assert r.code == 1
    assert "never ready" in r.out
    assert "app#check • blocked by srv#dev" in r.out


@pytest.mark.parametrize(("tail", "code"), [("exit 0", 0), ("exit 3", 1)])
def test_a_requested_server_holds_the_run_until_it_exits(workspace, vx, tail, code):
    root = workspace(server_files(f"sleep 0.3; echo bye; {tail}"))
    r = vx(["run", "dev", "--summarize=summary.json"], root / "packages/srv")
    assert r.code == code, repr(r)
    summary = json.loads((root / "packages/srv/summary.json").read_text())
    assert (summary["exitCode"], summary["ok"]) == (code, code == 0)
    if code:
        assert r.err.splitlines()[-1] == "vx: srv#dev exited with code 3"


def test_the_live_region_draws_on_a_terminal(workspace):
    files = tree({f"p{i}": ((), {"nap": {"exec": "sleep 1.5; echo done"}}) for i in range(2)})
    root = workspace(files)
    pid, fd = pty.fork()
    if pid == 0:  # the child: vx on a 100x40 terminal
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        os.chdir(root)
        env = base_env({"TERM": "xterm-256color", "HOME": str(root.parent / "home")})
        os.execve(sys.executable, [sys.executable, str(VX), "run", "nap", "--all"], env)  # noqa: S606
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, screen
    assert "running" in screen  # a worker row
    assert "\x1b[2K" in screen  # the region is erased in place before the footer
    assert "2 tasks" in screen
