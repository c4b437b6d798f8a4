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
from vx.ids import TaskId
from vx.run.prepare import RunOptions, run
from vx.run.servers import Release

DEV = TaskId("app", "dev")


def never_ready():
    """A server that boots and never prints its ready line, marked to be found by its token."""
    token = f"vxrelease{uuid.uuid4().hex[:12]}"
    command = f"python3 -c \"import time; print('booting', flush=True); time.sleep(60)\" {token}"
    return {"command": command, "persistent": True, "readyWhen": "never printed"}, token


def workspace(tmp_path, tasks):
    return make_git_workspace(tmp_path / "ws", tree({"app": ((), tasks)}))


def released_run(tmp_path, ws, words, held, **more):
    """Run `words`, setting the release once the server has said something."""
    release = Release()
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
        **more,
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


def waits_on_dev(finished: TaskFinished) -> bool:
    """The row of a task skipped because the run stopped waiting for app#dev."""
    return (
        finished.status is TaskStatus.SKIPPED
        and finished.blocked_by == DEV
        and finished.reason == "waiting on app#dev, not ready"
    )


def test_what_depends_on_a_server_let_go_is_skipped_naming_it_and_fails_nothing(tmp_path):
    dev, token = never_ready()
    tasks = {"dev": {"exec": dev}, "e2e": {"dependsOn": ["dev"], "exec": "echo ran"}}
    ws = workspace(tmp_path, tasks)
    held = []
    outcome, finished = released_run(tmp_path, ws, ("e2e",), held)
    assert waits_on_dev(finished["app#e2e"])
    assert outcome.exit_code == 0
    assert held == []  # a dependency-only server is the run's to stop, as ever
    assert processes_with(token) == []


def test_a_requested_server_let_go_is_handed_over_beside_its_skipped_dependent(tmp_path):
    dev, token = never_ready()
    tasks = {"dev": {"exec": dev}, "e2e": {"dependsOn": ["dev"], "exec": "echo ran"}}
    ws = workspace(tmp_path, tasks)
    held = []
    outcome, finished = released_run(tmp_path, ws, ("dev", "e2e"), held)
    assert outcome.exit_code == 0
    assert waits_on_dev(finished["app#e2e"])
    [servers] = held  # handed over running, not stopped for a failure
    assert [s.id for s in servers.servers] == [DEV]
    assert processes_with(token)
    servers.stop()
    assert processes_with(token) == []


def test_continue_always_does_not_run_a_dependent_against_a_server_let_go(tmp_path):
    dev, _ = never_ready()
    marker = tmp_path / "ran"
    e2e = f"python3 -c \"open({str(marker)!r}, 'w').close()\""
    tasks = {"dev": {"exec": dev}, "e2e": {"dependsOn": ["dev"], "exec": e2e}}
    ws = workspace(tmp_path, tasks)
    outcome, finished = released_run(tmp_path, ws, ("e2e",), [], continue_mode="always")
    assert waits_on_dev(finished["app#e2e"])
    assert not marker.exists()
    assert outcome.exit_code == 0


def test_a_server_started_after_the_release_is_waited_on_until_ready(tmp_path):
    """The release ends the waits it found: one set before the server starts ends none."""
    go = tmp_path / "go"
    command = (
        "python3 -c \"import os, time; print('booting', flush=True)\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.2)\n"
        "print('listening', flush=True)\""
    )
    dev = {"command": command, "persistent": True, "readyWhen": "listening"}
    ws = workspace(tmp_path, {"dev": {"exec": dev}})
    release = Release()
    release.set()
    finished: dict[str, TaskFinished] = {}

    def sink(event):
        if isinstance(event, TaskOutput) and "booting" in event.text:
            go.touch()
        if isinstance(event, TaskFinished):
            finished[str(event.id)] = event

    options = RunOptions(
        tasks=("dev",),
        cwd=ws / "packages/app",
        env=base_env({"HOME": str(tmp_path / "home")}),
        keep_servers=lambda held: held.stop(),
        release=release,
        warm=False,
    )
    outcome = run(options, sink)
    assert outcome.exit_code == 0
    assert finished["app#dev"].status is TaskStatus.RUNNING
    assert finished["app#dev"].reason is None  # ready, not let go


def test_a_run_that_holds_a_server_let_go_returns_when_it_exits(tmp_path):
    """Without `keep_servers` the run holds what it was let go of, as it holds a ready one."""
    go = tmp_path / "go"
    command = (
        "python3 -c \"import os, time; print('booting', flush=True)\n"
        f'while not os.path.exists({str(go)!r}): time.sleep(0.2)"'
    )
    dev = {"command": command, "persistent": True, "readyWhen": "never printed"}
    ws = workspace(tmp_path, {"dev": {"exec": dev}})
    release = Release()
    finished: dict[str, TaskFinished] = {}

    def sink(event):
        if isinstance(event, TaskOutput) and "booting" in event.text:
            release.set()
        if isinstance(event, TaskFinished):
            finished[str(event.id)] = event
            go.touch()  # the server exits once its wait was let go

    options = RunOptions(
        tasks=("dev",),
        cwd=ws / "packages/app",
        env=base_env({"HOME": str(tmp_path / "home")}),
        release=release,
        warm=False,
    )
    outcomes = []
    runner = threading.Thread(target=lambda: outcomes.append(run(options, sink)), daemon=True)
    runner.start()
    runner.join(120)  # a guard against a hang, not a measure: the run returns on the exit
    assert outcomes, "the run still holds a server that has exited"
    assert finished["app#dev"].reason == "not ready yet"
    assert outcomes[0].exit_code == 0


def test_the_release_hears_waiting_only_once_other_work_is_done(tmp_path):
    """A task in flight beside the server is work: no tick says `waiting` until it ends."""
    dev, _ = never_ready()
    go = tmp_path / "go"
    work = f'python3 -c "import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.1)"'
    ws = workspace(tmp_path, {"dev": {"exec": dev}, "work": {"exec": work}})
    heard: list[tuple[str, object]] = []
    release: Release

    def judge(waiting: bool) -> None:
        heard.append(("tick", waiting))
        if not waiting:
            go.touch()  # the task ends only once a tick said it was not waiting
        elif ("finished", "app#work") in heard:
            release.set()

    release = Release(judge)

    def sink(event):
        if isinstance(event, TaskFinished):
            heard.append(("finished", str(event.id)))

    options = RunOptions(
        tasks=("dev", "work"),
        cwd=ws / "packages/app",
        env=base_env({"HOME": str(tmp_path / "home")}),
        concurrency=2,
        keep_servers=lambda held: held.stop(),
        release=release,
        warm=False,
    )
    assert run(options, sink).exit_code == 0
    done = heard.index(("finished", "app#work"))
    assert ("tick", True) not in heard[:done]
    assert ("tick", True) in heard[done:]


def test_the_release_is_judged_while_the_server_output_flows(tmp_path):
    """The judge runs outside the run's lock: the server's output reaches the sink meanwhile."""
    token = f"vxrelease{uuid.uuid4().hex[:12]}"
    go = tmp_path / "go"
    command = (
        "python3 -c \"import os, time; print('booting', flush=True)\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.1)\n"
        f"print('still booting', flush=True); time.sleep(60)\" {token}"
    )
    dev = {"command": command, "persistent": True, "readyWhen": "never printed"}
    ws = workspace(tmp_path, {"dev": {"exec": dev}})
    more = threading.Event()
    flowed: list[bool] = []
    release: Release

    def judge(waiting: bool) -> None:
        if waiting and not flowed:
            go.touch()
            flowed.append(more.wait(60))  # a guard against a deadlock, not a measure
            release.set()

    release = Release(judge)

    def sink(event):
        if isinstance(event, TaskOutput) and "still booting" in event.text:
            more.set()

    options = RunOptions(
        tasks=("dev",),
        cwd=ws / "packages/app",
        env=base_env({"HOME": str(tmp_path / "home")}),
        keep_servers=lambda held: held.stop(),
        release=release,
        warm=False,
    )
    assert run(options, sink).exit_code == 0
    assert flowed == [True]
    assert processes_with(token) == []
