"""Stop signals during a run. Scenarios that signal vx itself run in a child Python, not in pytest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vx.run.groups.registry import ProcessRegistry
from vx.run.groups.signals import DEFAULT_KILL_GRACE_MS, RunSignals, kill_grace_ms
from vx.run.process import ProcessSpec, start_process

SRC = Path(__file__).resolve().parents[4] / "src"
HANG_LIMIT_S = 60  # only there so a broken build fails instead of hanging

# The child task counts what reaches it; on_output sends vx the signals the test names, in order,
# each once the task has printed the word before it.
SCENARIO = """
import json, os, signal, sys, threading
from pathlib import Path
from vx.run.process import ProcessSpec, start_process
from vx.run.groups.registry import ProcessRegistry
from vx.run.groups.signals import RunSignals

grace_ms, steps = int(sys.argv[1]), json.loads(sys.argv[2])
command = (
    "trap 'echo got-INT' INT; trap 'echo got-TERM' TERM; trap 'echo got-HUP' HUP; "
    "echo ready; while :; do sleep 0.05; done"
)
before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
seen = []
lock = threading.Lock()

def on_output(stream, text):
    with lock:
        seen.append(text)
        while steps and steps[0][0] in "".join(seen):
            os.kill(os.getpid(), getattr(signal, steps.pop(0)[1]))

registry = ProcessRegistry()
with RunSignals(registry, kill_grace_ms=grace_ms) as signals:
    handle = start_process(ProcessSpec(command, Path.cwd(), dict(os.environ)), on_output, registry=registry)
    result = handle.wait()
after = {s: signal.getsignal(s) for s in before}
print(json.dumps({
    "exit": result.exit_code,
    "output": "".join(seen),
    "signal": signals.signal,
    "code": signals.exit_code(),
    "stopping": signals.stopping.is_set(),
    "installed": signals.installed,
    "restored": before == after,
    "live": list(registry.live()),
}))
"""


def scenario(grace_ms: int, steps: list[tuple[str, str]], tmp_path: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", SCENARIO, str(grace_ms), json.dumps(steps)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=HANG_LIMIT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def heard_by_task(report: dict[str, object]) -> list[str]:
    # The shell may also report a child's signal death ("Terminated"): that is not the task's ear.
    return [line for line in str(report["output"]).splitlines() if line.startswith("got-")]


@pytest.mark.parametrize(
    ("sent", "heard", "code"),
    [
        ("SIGINT", "INT", 130),
        ("SIGTERM", "TERM", 143),
        ("SIGHUP", "TERM", 129),  # a task has no terminal to lose: SIGHUP reaches it as SIGTERM
    ],
)
def test_a_signal_reaches_each_group_once_then_the_grace_kills(
    tmp_path: Path, sent: str, heard: str, code: int
) -> None:
    report = scenario(300, [("ready", sent)], tmp_path)
    assert report["exit"] == 137
    assert heard_by_task(report) == ["got-" + heard]
    assert report["signal"] == getattr(signal, sent)
    assert report["code"] == code
    assert report["stopping"] is True
    assert report["installed"] is True
    assert report["restored"] is True
    assert report["live"] == []


def test_a_second_signal_skips_the_grace(tmp_path: Path) -> None:
    # With a ten-minute grace, only the second signal can end this within the hang limit.
    report = scenario(600_000, [("ready", "SIGINT"), ("got-INT", "SIGTERM")], tmp_path)
    assert report["exit"] == 137
    assert heard_by_task(report) == ["got-INT"]
    assert report["signal"] == signal.SIGINT
    assert report["code"] == 130


def test_off_the_main_thread_nothing_is_installed() -> None:
    registry = ProcessRegistry()
    result: dict[str, object] = {}

    def body() -> None:
        with RunSignals(registry) as signals:
            result["installed"] = signals.installed
        result["code"] = signals.exit_code()
        result["stopping"] = signals.stopping.is_set()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(HANG_LIMIT_S)
    assert result == {"installed": False, "code": None, "stopping": False}


def test_leaving_on_an_exception_kills_what_is_still_running(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    handle = start_process(
        ProcessSpec("sleep 600", tmp_path, {"PATH": os.defpath}),
        lambda _stream, _text: None,
        registry=registry,
    )

    def body() -> None:
        with pytest.raises(RuntimeError), RunSignals(registry):
            raise RuntimeError

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(HANG_LIMIT_S)
    assert handle.wait().exit_code == 137
    assert registry.live() == ()


DIE = """
import signal, sys
from vx.run.groups.signals import die_of_signal
print("flushed before dying", end="")
die_of_signal(getattr(signal, sys.argv[1]))
"""


@pytest.mark.parametrize(("name", "status"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_die_of_signal_is_a_signal_death_a_script_sees(
    tmp_path: Path, name: str, status: int
) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    direct = subprocess.run(
        [sys.executable, "-c", DIE, name],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=HANG_LIMIT_S,
        check=False,
    )
    assert direct.returncode == -getattr(signal, name)
    assert direct.stdout == "flushed before dying"
    through_sh = subprocess.run(
        ["sh", "-c", '"$0" -c "$1" "$2"; echo " status=$?"', sys.executable, DIE, name],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=HANG_LIMIT_S,
        check=False,
    )
    assert through_sh.stdout == f"flushed before dying status={status}\n"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": "500"}, 500),
        ({"VX_KILL_GRACE_MS": "1"}, 1),
        ({"VX_KILL_GRACE_MS": str(2**31 - 1)}, 2**31 - 1),
        ({"VX_KILL_GRACE_MS": str(2**31)}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": "0"}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": "-5"}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": "1.5"}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": "soon"}, DEFAULT_KILL_GRACE_MS),
        ({"VX_KILL_GRACE_MS": ""}, DEFAULT_KILL_GRACE_MS),
    ],
)
def test_kill_grace_from_the_environment(env: dict[str, str], expected: int) -> None:
    assert kill_grace_ms(env) == expected
