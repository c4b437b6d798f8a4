"""What the loop watches and how an event is labelled: read off a real workspace's plan."""

from __future__ import annotations

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree

from vx.run.prepare import RunOptions, select_plan
from vx.util.globs import compile_globs
from vx.watch.route import route_event
from vx.watch.targets import from_plan, member_bases


@pytest.fixture
def watched(tmp_path):
    files = tree(
        {
            "lib": ((), {"build": {"exec": "true", "cache": {"outputs": {"files": ["dist/**"]}}}}),
            "app": (("lib",), {"build": {"dependsOn": ["^build"], "exec": "true"}}),
            "other": ((), {"build": {"exec": "true"}}),
        }
    )
    ws = make_git_workspace(tmp_path / "ws", files)
    plan = select_plan(RunOptions(tasks=("build",), cwd=ws / "packages/app", env={}))
    return ws, from_plan(plan, cache=[str(ws / "cache")])


def test_the_set_is_what_a_cycle_can_run(watched):
    ws, wanted = watched
    assert [p.name for p in wanted.watched] == ["app", "lib"]
    assert wanted.bases == (str(ws / "packages"),)
    assert not wanted.wide


@pytest.mark.parametrize(
    ("role", "where", "path", "label"),
    [
        ("project", "packages/app", "packages/app/src/a.ts", "app src/a.ts"),
        ("project", "packages/lib", "packages/lib/vx.config.json", "lib vx.config.json"),
        ("root", ".", "pnpm-lock.yaml", "// pnpm-lock.yaml"),
        ("root", ".", "vx.workspace.json", "// vx.workspace.json"),
        ("root", ".", "build.log", None),  # no key sees it
        ("base", "packages", "packages/new", "// packages/new"),
        ("base", "packages", "packages/.DS_Store", None),
        ("members", "packages", "packages/app/src/a.ts", "app src/a.ts"),
        ("members", "packages", "packages/other/src/a.ts", None),  # out of the run
    ],
)
def test_routes(watched, role, where, path, label):
    ws, wanted = watched
    heard = route_event(wanted, role, str(ws / where), str(ws / path))
    assert (heard[0] if heard else None) == label


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("packages/app/src/a.ts", "app src/a.ts"),  # a file of a project in the run
        ("packages/other/src/a.ts", None),  # a project with no task in the run: not its tree
        ("shared/x.txt", "// shared/x.txt"),  # a declared workspaceFiles match
        ("yarn.lock", "// yarn.lock"),
        ("coverage/lcov.info", None),  # nothing a key can see
        ("build.log", None),
    ],
)
def test_the_wide_watcher_keeps_only_what_a_key_can_see(watched, path, label):
    ws, wanted = watched
    wide = wanted._replace(wide=True, wide_globs=compile_globs(["shared/*.txt"]))
    heard = route_event(wide, "wide", str(ws), str(ws / path))
    assert (heard[0] if heard else None) == label


def test_only_a_literal_dir_glob_has_a_member_base(tmp_path):
    root = make_git_workspace(
        tmp_path / "ws",
        {"package.json": {"name": "r", "workspaces": ["packages/*", "apps/**", "tools/cli"]}},
    )
    assert member_bases(root) == (str(root / "packages"),)
