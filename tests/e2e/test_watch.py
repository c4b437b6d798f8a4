"""`vx watch` end to end: a real watch subprocess, real edits, waits on its lines only.

"No extra cycle" is never asserted by waiting a while: after the cycles a test expects, it
saves a sentinel file, waits for that cycle, and checks the cycle labels in order. A cycle
the loop fed itself would be judged before (or with) the sentinel and name another path.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import uuid
from pathlib import Path

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.watchproc import WatchProc, edit, processes_with

WATCHING = r"^vx watch: watching"
RESULT = r"^  result  "  # the footer's last line: a run (or cycle) has finished


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def one_app(tmp_path, tasks, extra=None):
    files = tree({"app": ((), tasks)})
    files.update(extra or {})
    return make_git_workspace(tmp_path / "ws", files)


def settle_with_sentinel(w, app, expected):
    """Once the initial run and the `expected` cycles have finished, save a sentinel, wait for
    its cycle, and hold the labels to `expected` + the sentinel's."""
    w.wait_for(RESULT, count=1 + len(expected))
    edit(app / "src/sentinel.txt", uuid.uuid4().hex)
    w.wait_for(r"; re-running\.\.\.$", count=len(expected) + 1)
    w.wait_for(r"^vx watch: app src/sentinel\.txt; re-running")
    assert w.reruns() == [*expected, "app src/sentinel.txt"], w.dump()


def test_an_edit_reruns_the_task_and_its_new_content_appears(tmp_path, home):
    ws = one_app(tmp_path, {"show": {"exec": "cat src/index.txt"}})
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for("^vx watch: initial run")
        w.wait_for(WATCHING)
        assert "app" in w.wait_for(WATCHING)
        edit(app / "src/index.txt", "fresh words\n")
        w.wait_for("^fresh words$")
        assert w.reruns() == ["app src/index.txt"]
        assert w.stop() == 0
    assert w.out[-1] == "vx watch: stopped", w.dump()


def test_an_undeclared_write_into_the_project_settles_after_one_extra_cycle(tmp_path, home):
    ws = one_app(tmp_path, {"copy": {"exec": "cp src/index.txt copy.txt"}})
    app = ws / "packages/app"
    with WatchProc(["copy"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        w.wait_for(r"^vx watch: app src/index\.txt; re-running")
        settle_with_sentinel(w, app, ["app src/index.txt", "app copy.txt"])
        assert w.stop() == 0


def test_a_clean_rebuild_of_declared_outputs_costs_no_extra_cycle(tmp_path, home):
    build = {
        "exec": "rm -rf dist && mkdir dist && cp src/index.txt dist/out.txt",
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }
    ws = one_app(tmp_path, {"build": build})
    app = ws / "packages/app"
    with WatchProc(["build"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        w.wait_for(r"^vx watch: app src/index\.txt; re-running")
        settle_with_sentinel(w, app, ["app src/index.txt"])
        assert (app / "dist/out.txt").read_text() == "edited\n"
        assert w.stop() == 0


def test_a_git_ignored_log_rewritten_every_run_starts_nothing(tmp_path, home):
    task = {"exec": "date +%s%N > run.log; cat src/index.txt"}
    ws = one_app(tmp_path, {"show": task}, {".gitignore": "*.log\n"})
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        w.wait_for("^edited$")
        settle_with_sentinel(w, app, ["app src/index.txt"])
        assert w.stop() == 0


def test_a_package_added_under_packages_is_run_then_watched(tmp_path, home):
    ws = make_git_workspace(
        tmp_path / "ws", tree({"a": ((), {"build": {"exec": "cat src/index.txt"}})})
    )
    with WatchProc(["build", "--all", "--output-logs=full"], ws, home=home) as w:
        w.wait_for(WATCHING)
        new = ws / "packages/b"
        (new / "src").mkdir(parents=True)
        edit(new / "src/index.txt", "b says hi\n")
        edit(new / "vx.config.json", '{"tasks": {"build": {"exec": "cat src/index.txt"}}}\n')
        edit(new / "package.json", '{"name": "b", "version": "1.0.0"}\n')
        w.wait_for("^b says hi$")
        w.wait_for(r"^vx watch: watching 2 projects: a, b$")
        edit(new / "src/index.txt", "b edited\n")
        w.wait_for("^b edited$")
        assert w.reruns()[-1] == "b src/index.txt", w.dump()
        assert w.stop() == 0


SERVER = """\
import http.server, os, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
httpd = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
print(f"listening pid={os.getpid()} port={httpd.server_port} args={sys.argv[1:]}", flush=True)
httpd.serve_forever()
"""


def server_pids(w):
    return [int(line.split("pid=")[1].split()[0]) for line in w.out if "listening pid=" in line]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"


def test_a_dev_server_stays_up_across_cycles_and_is_replaced_when_its_config_changes(
    tmp_path, home
):
    dev = {"command": "python3 server.py", "persistent": True, "readyWhen": "listening"}
    files = tree(
        {
            "lib": ((), {"build": {"exec": "cat src/index.txt"}}),
            "app": (("lib",), {"dev": {"dependsOn": ["^build"], "exec": dev}}),
        }
    )
    files["packages/app/server.py"] = SERVER
    ws = make_git_workspace(tmp_path / "ws", files)
    app = ws / "packages/app"
    with WatchProc(["dev"], app, home=home) as w:
        w.wait_for("listening pid=")
        w.wait_for(WATCHING)
        [first] = server_pids(w)
        edit(ws / "packages/lib/src/index.txt", "lib rebuilt\n")
        w.wait_for("^lib rebuilt$")
        w.wait_for(RESULT, count=2)  # the cycle is over: the initial run's footer, then its
        assert w.reruns() == ["lib src/index.txt"]
        assert alive(first), w.dump()
        assert len(server_pids(w)) == 1, w.dump()
        changed = {**dev, "command": "python3 server.py --again"}
        config = {"tasks": {"dev": {"dependsOn": ["^build"], "exec": changed}}}
        edit(app / "vx.config.json", json.dumps(config))
        w.wait_for("listening pid=.*--again")
        second = server_pids(w)[-1]
        assert second != first
        assert not alive(first), w.dump()
        assert w.stop() == 0
    assert not alive(second)


def test_sigint_during_the_initial_run_exits_0_and_leaves_no_process(tmp_path, home):
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    ws = one_app(tmp_path, {"slow": {"exec": f"echo started; sleep 60 # {token}"}})
    with WatchProc(["slow"], ws / "packages/app", home=home) as w:
        w.wait_for("^started$")
        assert processes_with(token)
        assert w.stop(signal.SIGINT) == 0
    assert processes_with(token) == []
    assert w.out[-1] == "vx watch: stopped", w.dump()


def test_sigint_during_a_cycle_exits_0_and_leaves_no_process(tmp_path, home):
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    command = f"cat src/index.txt; if grep -q slow src/index.txt; then sleep 60; fi # {token}"
    ws = one_app(tmp_path, {"maybe": {"exec": command}})
    app = ws / "packages/app"
    with WatchProc(["maybe"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "slow now\n")
        w.wait_for("^slow now$")
        assert processes_with(token)
        assert w.stop(signal.SIGINT) == 0
    assert processes_with(token) == []


def test_sigterm_stops_a_held_dev_server_too(tmp_path, home):
    token = f"vxwatch{uuid.uuid4().hex[:12]}"
    dev = {"command": f"python3 server.py {token}", "persistent": True, "readyWhen": "listening"}
    ws = one_app(tmp_path, {"dev": {"exec": dev}}, {"packages/app/server.py": SERVER})
    with WatchProc(["dev"], ws / "packages/app", home=home) as w:
        w.wait_for(WATCHING)
        assert processes_with(token)
        assert w.stop(signal.SIGTERM) == 0
    assert processes_with(token) == []


def test_the_poller_takes_over_under_vx_watch_poll(tmp_path, home):
    ws = one_app(tmp_path, {"show": {"exec": "cat src/index.txt"}})
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home, env={"VX_WATCH_POLL": "1"}) as w:
        w.wait_for(r"^vx watch: polling every 250 ms \(VX_WATCH_POLL\)$", stream="err")
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "polled\n")
        w.wait_for("^polled$")
        settle_with_sentinel(w, app, ["app src/index.txt"])
        assert w.stop() == 0


def test_a_config_that_does_not_load_is_a_failed_cycle_and_its_fix_reruns(tmp_path, home):
    ws = one_app(tmp_path, {"show": {"exec": "cat src/index.txt"}})
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "vx.config.json", "{ not json")
        w.wait_for("^vx watch: cycle failed: ", stream="err")
        edit(app / "vx.config.json", '{"tasks": {"show": {"exec": "echo fixed"}}}')
        w.wait_for("^fixed$")
        assert w.stop() == 0


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("--dry", "--dry runs nothing"),
        ("--graph", "--graph runs nothing"),
        ("--summarize", "--summarize writes one run's file"),
        ("--profile", "--profile writes one run's file"),
        ("--report", "--report formats one run's result"),
        ("--report-file=r.md", "--report-file formats one run's result"),
        ("--verbosity=1", "--verbosity above 0"),
        ("--format=json", "--format json prints one run's summary"),
        ("--shard=1/2", "--shard splits one CI run across machines"),
    ],
)
def test_flags_about_one_run_are_refused_before_the_initial_run(tmp_path, vx, flag, words):
    ws = one_app(tmp_path, {"show": {"exec": "echo ran"}})
    r = vx(["watch", "show", flag], ws / "packages/app").assert_code(1)
    assert r.err.startswith(f"vx watch: {words}"), repr(r)
    assert "ran" not in r.out


def test_watch_needs_a_task_and_refuses_an_unknown_one_as_run_does(tmp_path, vx):
    ws = one_app(tmp_path, {"show": {"exec": "echo ran"}})
    r = vx(["watch"], ws / "packages/app").assert_code(1)
    assert r.err == "vx watch: name the task to watch (vx watch build)\n"
    r = vx(["watch", "shwo"], ws / "packages/app").assert_code(1)
    assert "show" in r.err
    assert "watching" not in r.out


def test_verbosity_0_is_accepted(tmp_path, home):
    ws = one_app(tmp_path, {"show": {"exec": "echo ran"}})
    with WatchProc(["show", "--verbosity=0"], ws / "packages/app", home=home) as w:
        w.wait_for(WATCHING)
        assert w.stop() == 0


def test_under_workspace_files_one_root_watcher_keeps_only_what_a_key_can_see(tmp_path, home):
    show = {
        "exec": "date +%s%N > ../../root.log; cat ../../shared/a.txt",
        "cache": {"inputs": {"workspaceFiles": ["shared/*.txt"]}},
    }
    ws = one_app(tmp_path, {"show": show}, {"shared/a.txt": "shared\n"})
    app = ws / "packages/app"
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for(r"^vx watch: watching the whole workspace \(a task reads workspaceFiles\)$")
        edit(ws / "shared/a.txt", "shared edited\n")
        w.wait_for("^shared edited$")
        settle_with_sentinel(w, app, ["// shared/a.txt"])
        assert w.stop() == 0


def test_a_file_rewritten_with_new_bytes_every_run_is_named_after_three_cycles(tmp_path, home):
    ws = one_app(tmp_path, {"stamp": {"exec": "date +%s%N > stamp.txt"}})
    app = ws / "packages/app"
    with WatchProc(["stamp"], app, home=home) as w:
        w.wait_for(WATCHING)
        edit(app / "src/index.txt", "edited\n")
        line = w.wait_for(r"^vx watch: packages/app/stamp\.txt changed during each", stream="err")
        assert line.endswith("declare it an output (cache.outputs.files) or git-ignore it")
        assert w.reruns()[:3] == ["app src/index.txt", "app stamp.txt", "app stamp.txt"]
        assert w.stop() == 0
    assert len([x for x in w.err if "changed during each" in x]) == 1


def test_affected_with_nothing_affected_exits_0_without_watching(tmp_path, vx):
    ws = one_app(tmp_path, {"show": {"exec": "echo ran"}})
    r = vx(["watch", "show", "--affected=HEAD"], ws / "packages/app").assert_ok()
    assert "vx watch: nothing affected since HEAD" in r.out.splitlines(), repr(r)
    assert "watching" not in r.out


def test_affected_reads_the_diff_once_and_later_cycles_keep_its_scope(tmp_path, home):
    build = {"exec": "cat src/index.txt"}
    files = tree({"a": ((), {"build": build}), "b": ((), {"build": build})})
    ws = make_git_workspace(tmp_path / "ws", files)
    edit(ws / "packages/b/src/index.txt", "b changed\n")  # uncommitted: b is affected
    args = ["build", "--affected=HEAD", "--output-logs=full"]
    with WatchProc(args, ws, home=home) as w:
        w.wait_for("^b changed$")
        w.wait_for(r"^vx watch: watching 1 project: b$")
        edit(ws / "packages/b/src/index.txt", "b again\n")
        w.wait_for("^b again$")
        assert not any(line.startswith("┌─ a#build") for line in w.out), w.dump()
        assert w.stop() == 0


def test_many_projects_share_one_watcher_per_package_dir(tmp_path, home):
    names = [f"p{i:02d}" for i in range(12)]
    ws = make_git_workspace(
        tmp_path / "ws", tree({n: ((), {"build": {"exec": "cat src/index.txt"}}) for n in names})
    )
    with WatchProc(["build", "--all", "--output-logs=full"], ws, home=home) as w:
        w.wait_for(r"^vx watch: watching 12 projects: p00, .* and 4 more$")
        edit(ws / "packages/p07/src/index.txt", "seven edited\n")
        w.wait_for("^seven edited$")
        assert w.reruns() == ["p07 src/index.txt"]
        assert w.stop() == 0
    assert not any("polling" in line for line in w.err), w.dump()


def test_a_replayed_warm_initial_run_still_watches_its_projects(tmp_path, home, vx):
    """A second watch on an all-cached workspace (its initial run may be answered by the warm
    path, whose replay carries no plan) still knows which projects to watch."""
    build = {
        "exec": "mkdir -p dist && cp src/index.txt dist/out.txt",
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }
    ws = one_app(tmp_path, {"build": build})
    app = ws / "packages/app"
    vx(["run", "build"], app, home=home).assert_ok()
    with WatchProc(["build"], app, home=home) as w:  # all cached: the warm path remembers
        w.wait_for(WATCHING)
        assert w.stop() == 0
    with WatchProc(["build"], app, home=home) as w:
        w.wait_for(r"^vx watch: watching 1 project: app$")
        edit(app / "src/index.txt", "warm edit\n")
        w.wait_for(r"^vx watch: app src/index\.txt; re-running")
        settle_with_sentinel(w, app, ["app src/index.txt"])
        assert (app / "dist/out.txt").read_text() == "warm edit\n"
        assert w.stop() == 0


def test_a_server_that_dies_while_watch_idles_is_said_and_the_next_edit_restarts_it(tmp_path, home):
    signal_file = tmp_path / "die"  # outside the workspace: no watcher hears it
    script = (
        "import os, sys, time\n"
        "print(f'listening pid={os.getpid()}', flush=True)\n"
        "while not os.path.exists(sys.argv[1]):\n"
        "    time.sleep(0.05)\n"
        "os.unlink(sys.argv[1])\n"
        "sys.exit(3)\n"
    )
    dev = {
        "command": f"python3 server.py {signal_file}",
        "persistent": True,
        "readyWhen": "listening",
    }
    ws = one_app(tmp_path, {"dev": {"exec": dev}}, {"packages/app/server.py": script})
    app = ws / "packages/app"
    with WatchProc(["dev"], app, home=home) as w:
        w.wait_for(WATCHING)
        # Watching may start while the server boots: kill it only once the initial run has
        # ended and handed it over, so its exit is one the idle watch hears.
        w.wait_for(RESULT)
        signal_file.write_text("")
        w.wait_for(r"^vx: app#dev exited with code 3$", stream="err")
        edit(app / "src/index.txt", "restart\n")
        w.wait_for("listening pid=", count=2)
        assert w.stop() == 0


def test_a_package_dir_removed_and_made_again_is_watched_again(tmp_path, home):
    ws = make_git_workspace(
        tmp_path / "ws", tree({"a": ((), {"build": {"exec": "cat src/index.txt"}})})
    )
    with WatchProc(["build", "--all", "--output-logs=full"], ws, home=home) as w:
        w.wait_for(WATCHING)
        copy = tmp_path / "copy"
        shutil.copytree(ws / "packages", copy)
        shutil.rmtree(ws / "packages")  # a checkout: the dirs are new ones, new inodes
        shutil.copytree(copy, ws / "packages")
        w.wait_for(WATCHING, count=2)  # the set read again, the new dirs armed
        w.wait_for(RESULT, count=len(w.reruns()) + 1)
        edit(ws / "packages/a/src/index.txt", "after the checkout\n")
        w.wait_for("^after the checkout$")
        assert w.stop() == 0


CONFIG_WITH_PRESET = """\
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "presets"))
import preset
from vx import define_project

define_project(tasks={"show": {"exec": preset.COMMAND}})
"""


def test_an_edit_to_a_file_a_config_imports_re_reads_the_config(tmp_path, home):
    ws = one_app(
        tmp_path,
        {},
        {
            "presets/preset.py": 'COMMAND = "echo from the preset"\n',
        },
    )
    app = ws / "packages/app"
    (app / "vx.config.json").unlink()
    edit(app / "vx.config.py", CONFIG_WITH_PRESET)
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for("^from the preset$")
        w.wait_for(WATCHING)
        edit(ws / "presets/preset.py", 'COMMAND = "echo the preset changed"\n')
        w.wait_for("^the preset changed$")
        assert w.reruns() == ["// presets/preset.py"]
        assert w.stop() == 0


def test_a_broken_config_at_start_is_a_failed_initial_run_and_watch_waits_for_the_fix(
    tmp_path, home
):
    ws = one_app(tmp_path, {"show": {"exec": "echo ran"}})
    app = ws / "packages/app"
    edit(app / "vx.config.json", "{ not json")
    with WatchProc(["show"], app, home=home) as w:
        w.wait_for("^vx watch: cycle failed: ", stream="err")
        w.wait_for(r"^vx watch: watching the whole workspace \(no plan yet\)$")
        edit(app / "vx.config.json", '{"tasks": {"show": {"exec": "echo repaired"}}}')
        w.wait_for("^repaired$")
        w.wait_for(r"^vx watch: watching 1 project: app$")
        assert w.stop() == 0
