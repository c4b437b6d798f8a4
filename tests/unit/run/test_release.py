"""`RunOptions.release`: a run stops waiting for servers not yet ready, and leaves them as it must.

Real runs of a real workspace, real server processes; the release is set from the run's own
events (once the server has printed its first line), never after a delay.
"""

from __future__ import annotations

import threading
import uuid

from tests.conftest import base_env, make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.watchproc import processes_with

from vx.events import TaskFinished, TaskOutput, TaskStatus
from vx.run.prepare import RunOptions, run


def never_ready():
    """A server that boots and never prints its ready line, marked to be found by its token."""
    token = f"vxrelease{uuid.uuid4().hex[:12]}"
    command = f"python3 -c \"import time; print('booting', flush=True); time.sleep(60)\" {token}"
    return {"command": command, "persistent": True, "readyWhen": "never printed"}, token


def workspace(tmp_path, tasks):
    return make_git_workspace(tmp_path / "ws", tree({"app": ((), tasks)}))


def released_run(tmp_path, ws, words, held):
    """Run `words`, setting the release once the server has said something."""
    release = threading.Event()
    finished: dict[str, TaskFinished] = {}

    def sink(event):
        if isinstance(event, TaskOutput) and "booting" in event.text:
            release.set()
        if isinstance(event, TaskFinished):
            finished[str(event.id)] = event

    options = RunOptions(
        tasks=words,
        cwd=ws / "packages/app",
        env=base_env({"HOME": str(tmp_path / "home")}),
        keep_servers=held.append,
        release=release,
        warm=False,
    )
    return run(options, sink), finished


def test_a_requested_server_let_go_is_handed_over_running(tmp_path):
    dev, token = never_ready()
    ws = workspace(tmp_path, {"dev": {"exec": dev}})
    held = []
    outcome, finished = released_run(tmp_path, ws, ("dev",), held)
    assert outcome.exit_code == 0
    assert finished["app#dev"].status is TaskStatus.RUNNING
    assert finished["app#dev"].reason == "not ready yet"
    [servers] = held
    [server] = servers.servers
    assert not server.ready
    assert not server.exited.is_set()  # still running: the caller owns its stopping
    assert processes_with(token)
    servers.stop()
    assert server.exited.is_set()
    assert processes_with(token) == []


def test_what_depends_on_a_server_let_go_does_not_run_and_the_server_is_stopped(tmp_path):
    dev, token = never_ready()
    tasks = {"dev": {"exec": dev}, "e2e": {"dependsOn": ["dev"], "exec": "echo ran"}}
    ws = workspace(tmp_path, tasks)
    held = []
    outcome, finished = released_run(tmp_path, ws, ("e2e",), held)
    assert finished["app#e2e"].status is TaskStatus.SKIPPED
    assert outcome.exit_code == 1
    assert held == []  # a dependency-only server is the run's to stop, as ever
    assert processes_with(token) == []
