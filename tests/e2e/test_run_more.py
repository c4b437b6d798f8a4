"""`vx run` end to end: the picker, forwarded args, a 200-package graph, servers, a terminal, git."""

from __future__ import annotations

import re
import shutil
import signal
import time
from typing import TYPE_CHECKING

import pytest
from tests.conftest import REPO, make_git_workspace, redact, write_tree
from tests.e2e import bigws
from tests.e2e.ptyvx import PtyVx, final_screen
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

# the picker


def picker_files() -> dict:
    return tree(
        {
            "lib": ((), {"build": {"description": "compile lib", "exec": "echo lib built"}}),
            "app": (
                ("lib",),
                {
                    "build": {"dependsOn": ["^build"], "exec": "echo app built"},
                    "test": {"description": "run the checks", "exec": "echo app tested"},
                },
            ),
        }
    )


MENU = """\
  1) app#build
  2) app#test   run the checks
  3) lib#build  compile lib
pick a task [1-3]: """


def test_the_picker_asks_on_stderr_and_runs_the_pick(workspace, tmp_path):
    root = workspace(picker_files())
    out = tmp_path / "out.txt"
    term = PtyVx(["run"], root / "packages/app", home=tmp_path / "home", stdout_to=out)
    screen = term.read_until("pick a task [1-3]: ")
    assert screen.replace("\r\n", "\n").endswith(MENU)
    term.send(b"3\n")
    assert term.finish() == 0, term.text
    assert "lib built" not in term.text  # the run's product went to stdout, not the terminal
    run = out.read_text()
    assert run.startswith("┌─ lib#build > $ echo lib built\n\nlib built\n\n└─ lib#build"), run
    assert "app#" not in run


def test_ctrl_c_at_the_prompt_is_an_interrupt(workspace, tmp_path):
    root = workspace(picker_files())
    term = PtyVx(["run"], root / "packages/app", home=tmp_path / "home")
    term.read_until("pick a task [1-3]: ")
    term.send(b"\x03")
    assert term.finish() in (130, -signal.SIGINT), term.text
    assert "Traceback" not in term.text


def test_ctrl_d_at_the_prompt_picks_nothing(workspace, tmp_path):
    root = workspace(picker_files())
    term = PtyVx(["run"], root / "packages/app", home=tmp_path / "home")
    term.read_until("pick a task [1-3]: ")
    term.send(b"\x04")
    assert term.finish() == 1, term.text
    assert term.text.replace("\r\n", "\n").endswith("\nno task picked\n"), term.text


def test_a_workspace_without_tasks_says_how_to_declare_one(workspace, tmp_path):
    files = tree({"lib": ((), {})})
    root = workspace(files)
    term = PtyVx(["run"], root / "packages/lib", home=tmp_path / "home")
    assert term.finish() == 1, term.text
    lines = term.text.replace("\r\n", "\n").strip().splitlines()
    assert len(lines) == 1, term.text
    assert "declares no task" in lines[0]
    assert "under `tasks` in a vx.config" in lines[0]


# forwarded args

FORWARD_TASKS = {
    "multi": {"dependsOn": ["^build"], "exec": "printf 'first\\n'\nprintf '[%s]\\n'\n\n\n"},
    "comment": {"exec": "printf '[%s]\\n' # the args land before this"},
    "comments": {"exec": "printf '[%s]\\n' # here\n# and not here\n"},
    "heredoc": {"exec": "xargs printf '[%s]\\n' <<EOF\nbody # no comment here\nEOF\n"},
    "serve": {
        "exec": {
            "command": "sleep 0.1; printf 'ready [%s]\\n'",
            "persistent": True,
            "readyWhen": "ready",
        }
    },
}


def forward_files() -> dict:
    return tree(
        {
            "lib": ((), {"build": {"exec": "printf 'lib[%s]\\n'"}}),
            "app": (("lib",), FORWARD_TASKS),
        }
    )


@pytest.mark.parametrize(
    ("task", "cmd", "out"),
    [
        ("multi", "printf 'first\\n'\nprintf '[%s]\\n' a 'b c'", "first\n[a]\n[b c]"),
        ("comment", "printf '[%s]\\n' a 'b c' # the args land before this", "[a]\n[b c]"),
        ("comments", "printf '[%s]\\n' a 'b c' # here\n# and not here", "[a]\n[b c]"),
        (
            "heredoc",
            "xargs printf '[%s]\\n' <<EOF a 'b c'\nbody # no comment here\nEOF",
            "[a]\n[b c]\n[body]\n[#]\n[no]\n[comment]\n[here]",
        ),
    ],
)
def test_forwarded_args_join_the_last_command_line(workspace, vx, task, cmd, out):
    root = workspace(forward_files())
    r = vx(["run", task, "--", "a", "b c"], root / "packages/app").assert_ok()
    assert r.out.startswith(f"┌─ app#{task} > $ {cmd}\n\n{out}\n\n└─ app#{task} ──"), repr(r)


def test_forwarded_args_skip_dependencies_and_show_on_the_requested_frame(workspace, vx):
    root = workspace(forward_files())
    r = vx(
        ["run", "multi", "--output-logs=full", "--", "a", "b c"], root / "packages/app"
    ).assert_ok()
    frames = redact(r.out).split("\n\n─ vx")[0]
    assert frames == (
        "┌─ lib#build > success\n\n"
        "$ printf 'lib[%s]\\n'\n\n"
        "├─ OUTPUT ──────────────────────────────────────────────────\n\n"
        "lib[]\n\n"
        "└─ lib#build ── ([DURATION]) success\n\n"
        "┌─ app#multi > success\n\n"
        "$ printf 'first\\n'\nprintf '[%s]\\n' a 'b c'\n\n"
        "├─ OUTPUT ──────────────────────────────────────────────────\n\n"
        "first\n[a]\n[b c]\n\n"
        "└─ app#multi ── ([DURATION]) success"
    ), repr(r)


def test_a_persistent_task_gets_forwarded_args(workspace, vx):
    root = workspace(forward_files())
    r = vx(["run", "serve", "--", "a", "b c"], root / "packages/app").assert_ok()
    assert "ready [a]\nready [b c]\n" in r.out, repr(r)


# a generated 200-package workspace


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, dict[str, tuple[str, ...]]]:
    deps = bigws.dependencies(200)
    root = make_git_workspace(tmp_path_factory.mktemp("big") / "ws", bigws.files(deps))
    return root, deps


def _events(root: Path) -> list[tuple[str, str]]:
    lines = (root / "log/events").read_text().splitlines()
    return [(kind, name) for kind, name in (line.split() for line in lines)]


def test_two_hundred_packages_build_in_order_three_at_a_time(big, vx):
    root, deps = big
    bigws.fresh_log(root)
    r = vx(["run", "build", "--all", "--concurrency=3", "--output-logs=hash-only"], root)
    r.assert_ok()
    assert not (root / "log/violations").exists(), (root / "log/violations").read_text()
    events = _events(root)
    position = {event: i for i, event in enumerate(events)}
    assert len(position) == len(events) == 400
    for name, linked in deps.items():
        for dep in linked:
            assert position[("end", dep)] < position[("start", name)], (name, dep)
    counts = {p.name: int(p.read_text()) for p in (root / "log/count").iterdir()}
    assert len(counts) == 200
    assert max(counts.values()) <= 3, counts


def test_a_package_builds_exactly_its_dependency_closure(big, vx):
    root, deps = big
    bigws.fresh_log(root)
    name = max(deps, key=lambda n: (len(bigws.closure(deps, n)), n))
    wanted = bigws.closure(deps, name)
    assert len(wanted) > 10
    r = vx(["run", "build", "--output-logs=hash-only"], root / "packages" / name).assert_ok()
    ran = {tid.removesuffix("#build") for tid in re.findall(r"\bpkg-\d+#build\b", r.out)}
    assert ran == wanted
    started = {n for kind, n in _events(root) if kind == "start"}
    assert started == wanted
    assert not (root / "log/violations").exists()


# persistent tasks that are slow to get ready


def server_files(command: str, **exec_fields: object) -> dict:
    spec = {"command": command, "persistent": True, "readyWhen": "ready in \\d+ms", **exec_fields}
    return tree(
        {
            "srv": ((), {"dev": {"exec": spec}}),
            "app": (("srv",), {"check": {"dependsOn": ["srv#dev"], "exec": "echo checked"}}),
        }
    )


def test_a_slow_server_gets_one_not_ready_notice(workspace, vx):
    root = workspace(server_files("echo booting; sleep 1; echo 'ready in 5ms'"))
    r = vx(["run", "check"], root / "packages/app", env={"VX_READY_NOTICE_MS": "100"})
    r.assert_ok()
    notice = "[vx] srv#dev is not ready yet; waiting for output matching /ready in \\d+ms/\n"
    assert r.err.count(notice) == 1, repr(r)
    assert notice not in r.out
    assert "checked" in r.out


def test_a_server_past_its_readiness_timeout_is_never_ready(workspace, vx):
    root = workspace(server_files("echo booting; sleep 30", timeout=300))
    r = vx(["run", "check"], root / "packages/app")
    assert r.code == 1, repr(r)
    rows = redact(r.out).split("\n\n")[0]
    assert rows == (
        " ◼︎ [DURATION] failed  no-cache srv#dev\n"
        " ⊘         skipped          app#check • blocked by srv#dev"
    ), repr(r)
    assert "└─ ▸ srv#dev ── ([DURATION]) failed (never ready: timed out, exit 143)" in redact(r.out)


# an interactive task under a terminal


MARK = "../../log"
RECORD = f"ls {MARK}/running > {MARK}/seen-$VX_RUN_TASK"


def interactive_files() -> dict:
    def wrap(body: str) -> str:
        start = f": > {MARK}/running/$VX_RUN_TASK; {RECORD}.start"
        end = f"{RECORD}.end; rm {MARK}/running/$VX_RUN_TASK"
        return f"{start}; {body}; {end}"

    ask = 'printf "name? "; read answer; echo "got <$answer>" > ../../log/answer'
    files = tree(
        {
            "a": ((), {"go": {"exec": wrap("sleep 0.5")}}),
            "b": ((), {"go": {"exec": wrap("sleep 0.5")}}),
            "z": ((), {"go": {"exec": {"command": wrap(ask), "interactive": True}}}),
        }
    )
    files[".gitignore"] = "log/\n"
    return files


def test_an_interactive_task_owns_the_terminal_alone(workspace, tmp_path):
    root = workspace(interactive_files())
    (root / "log/running").mkdir(parents=True)
    term = PtyVx(["run", "go", "--all", "--concurrency=3"], root, home=tmp_path / "home")
    term.read_until("name? ")
    time.sleep(0.5)  # a person takes a moment to answer: long enough for vx to redraw, if it would
    term.send(b"hello there\n")
    assert term.finish() == 0, term.text
    assert (root / "log/answer").read_text() == "got <hello there>\n"
    seen = {p.name: p.read_text().split() for p in (root / "log").glob("seen-*")}
    assert seen["seen-z#go.start"] == seen["seen-z#go.end"] == ["z#go"], seen
    for other in ("a#go", "b#go"):
        for when in ("start", "end"):
            assert "z#go" not in seen[f"seen-{other}.{when}"], seen
    assert "name? hello there" in final_screen(term.text), term.text


# git


def test_outside_a_git_work_tree_is_one_line(tmp_path, vx):
    root = tmp_path / "plain"
    write_tree(root, tree({"a": ((), {"build": {"exec": "echo hi"}})}))
    for cwd, args in ((root, ["run", "build", "--all"]), (root / "packages/a", ["run", "build"])):
        r = vx(args, cwd)
        assert r.code == 1, repr(r)
        assert redact(r.err, tmp_path) == (
            "vx requires git: [TMP]/plain is not inside a git work tree\n"
        ), repr(r)
        assert r.out == ""


def test_a_repository_without_a_commit_is_one_line(workspace, tmp_path, vx):
    root = workspace(tree({"a": ((), {"build": {"exec": "echo hi"}})}), commit=False)
    for cwd, args in ((root, ["run", "build", "--all"]), (root / "packages/a", ["run", "build"])):
        r = vx(args, cwd)
        assert r.code == 1, repr(r)
        assert redact(r.err, tmp_path) == (
            "vx requires git: [TMP]/ws is a git repository with no commit yet"
            " — commit once and re-run\n"
        ), repr(r)


# the repository's own example


def test_the_example_workspace_tests_a_package_and_its_closure(tmp_path, vx):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root, ignore=shutil.ignore_patterns("dist", "node_modules"))
    make_git_workspace(root, {})
    r = vx(["run", "test", "--verbosity=1"], root / "packages/app").assert_ok()
    assert "app: 3 checks passed" in r.out
    table = re.findall(r"^ ⏺︎ .* (\S+#\S+)(?: · first run)?$", r.out, re.MULTILINE)
    assert table == [
        "@example/app#build",
        "@example/app#test",
        "@example/core#build",
        "@example/utils#build",
    ], repr(r)
