"""Stopping vx: no descendant of a task outlives the stop, and no stopped or failed task is saved.

Descendants: each task starts processes that leave its process group (`setsid`, a
double-forking daemon, one ignoring every catchable signal), then vx gets SIGINT, SIGTERM or
SIGHUP. Once vx has exited, none of them may still run.

Saves: tasks write half their outputs, then fail, time out or are stopped (some trap the
signal and exit 0, one even finishes its outputs in the trap). None may leave an entry, and
the next run runs them instead of restoring half a result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from tests.conftest import run_vx
from tests.e2e.cachews import query, tree_bytes
from tests.e2e.runws import tree
from tests.faults.faultws import start, wait_until

pytestmark = pytest.mark.faults

GRACE = {"VX_KILL_GRACE_MS": "300"}
SPAWNERS = {
    "setsid": "setsid sh -c 'echo $$ > ../../pids/setsid.$$; exec sleep {mark}' &",
    "daemon": (
        "( setsid sh -c 'echo $$ > ../../pids/daemon.$$; exec sleep {mark}' & ) ;"
        " ( setsid sh -c 'sh -c \"echo \\$\\$ > ../../pids/deeper.\\$\\$; exec sleep {mark}\" &' & )"
    ),
    "deaf": (
        'setsid sh -c \'trap "" INT TERM HUP; echo $$ > ../../pids/deaf.$$;'
        " while :; do sleep {mark}; done' &"
    ),
    "background": "sleep {mark} & echo $! > ../../pids/bg.$!",
}
EXPECTED = 5  # pid files: setsid 1, daemon 2, deaf 1, background 1
READY = "while [ $(ls ../../pids | wc -l) -lt 5 ]; do sleep 0.01; done; touch ../../ready/$PKG;"


def marked(mark: str) -> list[int]:
    """Every live process (zombies aside) whose command line carries `sleep <mark>`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if state != "Z" and f"sleep {mark}".encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_no_descendant_survives_a_stop_signal(workspace, tmp_path, signo):
    mark = f"30{int(signo):02d}"  # unique per signal, so parallel workers never mix them up
    tasks = {
        name: {
            "exec": {
                "command": f"{spawn.format(mark=mark)}\n{READY} sleep {mark}",
                "env": {"define": {"PKG": name}},
            }
        }
        for name, spawn in SPAWNERS.items()
    }
    files = tree({name: ((), {"nap": task}) for name, task in tasks.items()})
    files["pids/.keep"] = ""
    files["ready/.keep"] = ""
    root = workspace(files)
    rounds, started, survivors = 2, 0, 0
    try:
        for _ in range(rounds):
            for d in ("pids", "ready"):
                for p in (root / d).iterdir():
                    p.unlink()
            args = ["run", "nap", "--all", "--concurrency=4"]
            proc = start(args, root, tmp_path / "home", GRACE)
            ready = lambda: len(list((root / "ready").iterdir())) == len(SPAWNERS)  # noqa: E731
            assert wait_until(ready, proc), "the tasks never got going"
            started += len(marked(mark))
            proc.send_signal(signo)
            assert proc.wait(timeout=60) in (-signo, 128 + signo)
            deadline = time.monotonic() + 5  # a SIGKILL lands a moment after vx sent it
            while marked(mark) and time.monotonic() < deadline:
                time.sleep(0.02)
            survivors += len(marked(mark))
    finally:
        for pid in marked(mark):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    print(f"{signo.name}: {rounds} stops, {started} processes running, survivors: {survivors}")
    assert started >= rounds * (EXPECTED + len(SPAWNERS))
    assert survivors == 0


HALF = "mkdir -p dist && echo half > dist/a.txt"
REST = "echo rest > dist/b.txt"
HOLD = "touch ../../ready/$PKG; while [ -e ../../hold ]; do sleep 0.05; done"
FAILING = {
    "exit-1": f"{HALF} && exit 1; {REST}",
    "exit-2-stderr": f"{HALF} && echo broken >&2 && exit 2; {REST}",
    "killed-itself": f"{HALF} && kill -9 $$; {REST}",
    "timeout": f"{HALF} && sleep 30 && {REST}",
    "timeout-trapped": f"trap 'exit 0' TERM INT; {HALF}; while :; do sleep 0.05; done",
}
STOPPED = {
    "plain": f"{HALF}; {HOLD}; {REST}",
    "trap-exit-0": f"trap 'exit 0' INT TERM HUP; {HALF}; {HOLD}; {REST}",
    "trap-exit-1": f"trap 'exit 1' INT TERM HUP; {HALF}; {HOLD}; {REST}",
    "trap-finish": f"trap '{REST}; exit 0' INT TERM HUP; {HALF}; {HOLD}; {REST}",
}
STOPS = [
    (signal.SIGINT, "plain"),
    (signal.SIGINT, "trap-exit-0"),
    (signal.SIGINT, "trap-exit-1"),
    (signal.SIGINT, "trap-finish"),
    (signal.SIGTERM, "trap-exit-0"),
    (signal.SIGTERM, "trap-finish"),
    (signal.SIGHUP, "trap-exit-0"),
]


def cached(command: str, name: str, timeout: int | None = None) -> dict:
    spec: dict = {"command": command, "env": {"define": {"PKG": name}}}
    if timeout is not None:
        spec["timeout"] = timeout
    return {
        "exec": spec,
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }


def saved(store: Path, project: str) -> int:
    if not (store / "cache.db").exists():
        return 0
    return query(store, "SELECT count(*) FROM entries WHERE project = ?", project)[0][0]


def test_failed_and_stopped_tasks_are_never_saved(workspace, tmp_path):
    packages = {
        f"f-{n}": cached(c, f"f-{n}", timeout=300 if "timeout" in n else None)
        for n, c in FAILING.items()
    }
    stops = {f"s{i}-{signal.Signals(s).name.lower()}-{n}": (s, n) for i, (s, n) in enumerate(STOPS)}
    packages |= {name: cached(STOPPED[n], name) for name, (_, n) in stops.items()}
    packages["ok"] = cached(f"{HALF} && {REST}", "ok")
    files = tree({name: ((), {"build": task}) for name, task in packages.items()})
    files["ready/.keep"] = ""
    root = workspace(files)
    store, home = tmp_path / "store", tmp_path / "home"
    args = ["run", "--cache-dir", str(store), "--output-logs=none"]

    failing = [f"f-{n}#build" for n in FAILING]
    r = run_vx([*args, *failing, "ok#build", "--continue", "--format=json"], root, home=home)
    assert "Traceback" not in r.err, r
    assert "tasks" in r.json(), r
    tries = len(FAILING)
    assert {t["id"]: t["status"] for t in r.json()["tasks"]} == {
        **dict.fromkeys(failing, "failed"),
        "ok#build": "success",
    }, r
    assert saved(store, "ok") == 1  # the control: a task that succeeds is saved

    (root / "hold").touch()
    for name, (signo, _) in stops.items():
        proc = start([*args, f"{name}#build"], root, home, GRACE)
        assert wait_until(lambda name=name: (root / "ready" / name).exists(), proc), name
        proc.send_signal(signo)
        assert proc.wait(timeout=60) in (-signo, 128 + signo), name
        tries += 1
    (root / "hold").unlink()

    wrongly_saved = [p for p in [*(f"f-{n}" for n in FAILING), *stops] if saved(store, p)]
    # The next run runs every one of them again: none comes back as a half-done hit.
    r = run_vx([*args, *(f"{s}#build" for s in stops), "--format=json"], root, home=home)
    replayed = [t["id"] for t in r.json()["tasks"] if t["status"] != "success"]
    halves = [
        s
        for s in stops
        if tree_bytes(root / "packages" / s / "dist") != {"a.txt": b"half\n", "b.txt": b"rest\n"}
    ]
    print(f"failed or stopped tasks tried: {tries}; saved: {len(wrongly_saved)}")
    assert wrongly_saved == []
    assert replayed == []
    assert halves == []
