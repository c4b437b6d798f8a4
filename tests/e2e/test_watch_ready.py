"""`vx watch` end to end, an edit while a cycle waits on a server's `readyWhen` line.

The server here is stuck before ready until the library it reads is built right. A fix to the
library must not wait for a readiness that only the fix can bring: the edit ends the wait,
the next cycle rebuilds the library, and the server, left running (its own config did not
change), picks the rebuild up itself and becomes ready.
"""

from __future__ import annotations

import json
import signal
import uuid

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.test_watch import alive
from tests.e2e.watchproc import WatchProc, edit, processes_with

# Ready only once the file it is given says "fixed": a dev server that needs a built library.
SERVER = """\
import os, sys, time
print(f"server started pid={os.getpid()}", flush=True)
while True:
    try:
        with open(sys.argv[1]) as handle:
            text = handle.read()
    except OSError:
        text = ""
    if "fixed" in text:
        break
    time.sleep(0.05)
print("listening", flush=True)
while True:
    time.sleep(1)
"""
BUILD = {
    "exec": "mkdir -p dist && cp src/index.txt dist/out.txt",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def stuck_server(tmp_path, token):
    dev = {
        "command": f"python3 server.py ../lib/dist/out.txt {token}",
        "persistent": True,
        "readyWhen": "listening",
    }
    files = tree(
        {
            "lib": ((), {"build": BUILD}),
            "app": (("lib",), {"dev": {"dependsOn": ["^build"], "exec": dev}}),
        }
    )
    files["packages/app/server.py"] = SERVER
    files["packages/lib/src/index.txt"] = "stale\n"
    return make_git_workspace(tmp_path / "ws", files), dev


def started(w):
    return [
        int(line.split("pid=")[1].split()[0]) for line in w.out if "server started pid=" in line
    ]


def test_a_fix_ends_the_initial_runs_wait_and_the_server_left_up_becomes_ready(tmp_path, home):
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    ws, _ = stuck_server(tmp_path, token)
    with WatchProc(["dev"], ws / "packages/app", home=home) as w:
        w.wait_for("server started pid=")
        w.wait_for(r"^vx watch: watching 2 projects: app, lib$")  # while the run still waits
        edit(ws / "packages/lib/src/index.txt", "fixed\n")
        w.wait_for(r"^vx watch: lib src/index\.txt; re-running\.\.\.$")
        w.wait_for("^listening$")
        [pid] = started(w)  # started once: the cycle rebuilt lib and left the server up
        assert alive(pid), w.dump()
        assert w.reruns() == ["lib src/index.txt"], w.dump()
        assert w.stop(signal.SIGINT) == 0
    assert processes_with(token) == []
    assert w.out[-1] == "vx watch: stopped", w.dump()


def test_a_config_edit_during_the_wait_replaces_the_stuck_server(tmp_path, home):
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    ws, dev = stuck_server(tmp_path, token)
    app = ws / "packages/app"
    with WatchProc(["dev"], app, home=home) as w:
        w.wait_for(r"^vx watch: watching 2 projects: app, lib$")
        w.wait_for("server started pid=")
        [first] = started(w)
        # the server's own source holds the word it waits for: ready at once
        fixed = {**dev, "command": f"python3 server.py server.py {token}"}
        edit(
            app / "vx.config.json",
            json.dumps({"tasks": {"dev": {"dependsOn": ["^build"], "exec": fixed}}}),
        )
        w.wait_for("^listening$")
        second = started(w)[-1]
        assert second != first, w.dump()
        assert not alive(first), w.dump()
        assert w.reruns() == ["app vx.config.json"], w.dump()
        assert w.stop(signal.SIGTERM) == 0
    assert processes_with(token) == []


def test_what_a_stuck_server_serves_waits_for_it_and_runs_once_it_is_fixed(tmp_path, home):
    """`e2e` needs the server: when an edit ends the wait its row names the server (no
    failure, no blocker left unsaid), and the cycle the fix starts runs it against a ready one."""
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    ws, _ = stuck_server(tmp_path, token)
    app = ws / "packages/app"
    config = json.loads((app / "vx.config.json").read_text())
    config["tasks"]["e2e"] = {"dependsOn": ["dev"], "exec": "echo e2e ran"}
    (app / "vx.config.json").write_text(json.dumps(config))
    with WatchProc(["e2e"], app, home=home) as w:
        w.wait_for(r"^vx watch: watching 2 projects: app, lib$")  # the run waits on dev
        edit(ws / "packages/lib/src/index.txt", "fixed\n")
        w.wait_for(r"skipped +app#e2e • waiting on app#dev, not ready$")
        w.wait_for(r"^vx watch: lib src/index\.txt; re-running\.\.\.$")
        w.wait_for("^e2e ran$")
        assert not [line for line in w.err if "cycle failed" in line], w.dump()
        assert w.stop(signal.SIGINT) == 0
    assert processes_with(token) == []
