"""Stopping a run, with real processes (issue 8, items 5 and 6): a task stopped by vx saves
nothing whatever its exit code, and no descendant of a task outlives a stopped or killed vx,
not even one that left the task's process group with setsid()."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.conftest import VX, base_env
from tests.e2e.cachews import entry_keys, query
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from collections.abc import Iterator

OUTS = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}
STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def start_vx(args: list[str], cwd: Path, home: Path) -> subprocess.Popen[str]:
    """vx in the background, the way the `vx` fixture would run it."""
    return subprocess.Popen(
        [sys.executable, str(VX), *args],
        cwd=cwd,
        env=base_env({"HOME": str(home)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen[str]) -> str:
    """The text of `path` once a task has written it (a line ending in a newline)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            text = path.read_text()
            if text.endswith("\n"):
                return text.strip()
        if proc.poll() is not None:
            raise AssertionError(f"vx exited before {path.name} was written: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError(f"{path.name} was never written")


# ---------------------------------------------------------------------------------------------
# process identities: a pid names a process only together with its start time


def start_time(pid: int) -> int | None:
    """The process's start (clock ticks after boot), or None once it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        fields = stat.rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def living(procs: dict[int, int]) -> set[int]:
    return {pid for pid, start in procs.items() if start_time(pid) == start}


def gone_soon(procs: dict[int, int]) -> set[int]:
    """The processes still alive after a short poll (each gets a few seconds to be reaped)."""
    deadline = time.monotonic() + 10
    while living(procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    return living(procs)


@contextlib.contextmanager
def reaped(procs: dict[int, int]) -> Iterator[dict[int, int]]:
    """Whatever the test finds, no process it recorded outlives it."""
    try:
        yield procs
    finally:
        for pid in living(procs):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# item 5: a stopped task is never saved


def half_done(hold: Path) -> dict:
    """A cached build that traps the stop signals, writes half its outputs and exits 0; it
    waits for the signal only while `hold` exists (outside the workspace: not an input)."""
    command = (
        "mkdir -p dist; echo first > dist/first.txt;"
        " trap 'echo half > dist/half.txt; exit 0' INT TERM HUP;"
        f' if [ -f "{hold}" ]; then echo $$ > "{hold}.pid"; sleep 60 & wait; fi;'
        " echo second > dist/second.txt"
    )
    return tree({"a": ((), {"build": {"exec": command, "cache": OUTS}})})


@pytest.mark.parametrize("signo", STOPS, ids=lambda s: signal.Signals(s).name)
def test_a_task_that_traps_the_stop_and_exits_0_is_not_saved(workspace, tmp_path, signo):
    hold = tmp_path / "hold"
    hold.write_text("")
    root = workspace(half_done(hold))
    store, home = tmp_path / "store", tmp_path / "home"
    args = ["run", "build", "--all", "--cache-dir", str(store), "--format", "json"]

    proc = start_vx(args, root, home)
    with reaped({}) as procs:
        task = int(wait_for(tmp_path / "hold.pid", proc))
        procs[task] = start_time(task) or 0
        proc.send_signal(signo)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode in (-signo, 128 + signo), err
    assert "Traceback" not in err
    assert (root / "packages/a/dist/half.txt").read_text() == "half\n"  # the trap did run
    assert entry_keys(store) == set()
    assert query(store, "SELECT status FROM runs WHERE task = 'build'") == [("aborted",)]

    hold.unlink()
    again = start_vx(args, root, home)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    (row,) = json.loads(out)["tasks"]
    assert row["status"] == "success"  # executed, not a hit of the half-done outputs
    assert entry_keys(store) == {row["hash"]}
    assert sorted(p.name for p in (root / "packages/a/dist").iterdir()) == [
        "first.txt",
        "second.txt",
    ]


def test_a_task_that_fails_is_not_saved(workspace, vx, tmp_path):
    command = "mkdir -p dist && echo part > dist/part.txt && exit 3"
    root = workspace(tree({"a": ((), {"build": {"exec": command, "cache": OUTS}})}))
    store = tmp_path / "store"
    args = ["run", "build", "--all", "--cache-dir", str(store), "--format", "json"]

    for _ in range(2):
        r = vx(args, root).assert_code(1)
        assert [row["status"] for row in r.json()["tasks"]] == ["failed"]
        assert entry_keys(store) == set()


# ---------------------------------------------------------------------------------------------
# item 6: no descendant survives a stop


def escapers(pids: Path) -> dict:
    """Two tasks, each leaving a `setsid sleep` and a double-forked daemon behind, then
    waiting: every process involved writes its pid to `pids`."""
    daemon = (
        "import os, sys, time\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        "open(sys.argv[1], 'w').write(f'{os.getpid()}\\n')\n"
        "time.sleep(300)\n"
    )
    command = (
        f'd="{pids}/$VX_RUN_TASK"; echo $$ > "$d.task";'
        ' setsid sleep 300 & echo $! > "$d.setsid";'
        f' "{sys.executable}" -c "$DAEMON" "$d.daemon";'
        ' sleep 300 & echo $! > "$d.child"; wait'
    )
    task = {"exec": {"command": command, "env": {"define": {"DAEMON": daemon}}}}
    return tree({name: ((), {"hold": task}) for name in ("a", "b")})


KINDS = ("task", "setsid", "daemon", "child")


def recorded(pids: Path, proc: subprocess.Popen[str]) -> dict[int, int]:
    """Every pid the two tasks wrote, with its start time, once all are written."""
    found: dict[int, int] = {}
    for name in ("a#hold", "b#hold"):
        for kind in KINDS:
            pid = int(wait_for(pids / f"{name}.{kind}", proc))
            start = start_time(pid)
            assert start is not None, f"{name}'s {kind} ({pid}) is not running"
            found[pid] = start
    return found


@pytest.mark.parametrize("signo", STOPS, ids=lambda s: signal.Signals(s).name)
def test_no_descendant_survives_a_stop_signal(workspace, tmp_path, signo):
    pids = tmp_path / "pids"
    pids.mkdir()
    root = workspace(escapers(pids))
    proc = start_vx(["run", "hold", "--all", "--concurrency=2"], root, tmp_path / "home")
    with reaped({}) as procs:
        try:
            procs.update(recorded(pids, proc))
        finally:
            proc.send_signal(signo)
            _, err = proc.communicate(timeout=60)
        assert proc.returncode in (-signo, 128 + signo), err
        assert "Traceback" not in err
        assert gone_soon(procs) == set()


def test_a_sigkill_of_vx_takes_its_tasks_with_it(workspace, tmp_path):
    """vx gets no say in a SIGKILL; its lifeline kills each task's process group."""
    pids = tmp_path / "pids"
    pids.mkdir()
    command = (
        f'd="{pids}/$VX_RUN_TASK"; echo $$ > "$d.task"; sleep 300 & echo $! > "$d.child"; wait'
    )
    root = workspace(tree({name: ((), {"hold": {"exec": command}}) for name in ("a", "b")}))
    proc = start_vx(["run", "hold", "--all", "--concurrency=2"], root, tmp_path / "home")
    with reaped({}) as procs:
        try:
            for name in ("a#hold", "b#hold"):
                for kind in ("task", "child"):
                    pid = int(wait_for(pids / f"{name}.{kind}", proc))
                    procs[pid] = start_time(pid) or 0
        finally:
            proc.kill()
            proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        assert gone_soon(procs) == set()
