"""`vx watch` end to end, a package added under a member glob of any shape: run, then watched.

`packages/*` is covered in test_watch.py; here the globs a `<dir>/*` base cannot serve: a `**`
glob whose base does not exist yet, and a glob with a wildcard in a middle segment.
"""

from __future__ import annotations

import json

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree
from tests.e2e.watchproc import WatchProc, edit

BUILD = {"exec": "cat src/index.txt"}


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def workspace_with(tmp_path, globs, extra=None):
    files = tree({"a": ((), {"build": BUILD})})
    files["package.json"] = {"name": "root", "private": True, "workspaces": globs}
    files.update(extra or {})
    return make_git_workspace(tmp_path / "ws", files)


def add_package(directory, name, words):
    """Write a package as a user would: its source and config, then its manifest."""
    edit(directory / "src/index.txt", words)
    edit(directory / "vx.config.json", json.dumps({"tasks": {"build": BUILD}}))
    edit(directory / "package.json", json.dumps({"name": name, "version": "1.0.0"}))


def test_a_package_added_deep_under_a_double_star_glob_is_run_then_watched(tmp_path, home):
    ws = workspace_with(tmp_path, ["packages/*", "apps/**"])  # apps/ is not there yet
    with WatchProc(["build", "--all", "--output-logs=full"], ws, home=home) as w:
        w.wait_for(r"^vx watch: watching 1 project: a$")
        site = ws / "apps/web/site"
        add_package(site, "site", "site says hi\n")
        w.wait_for("^site says hi$")
        w.wait_for(r"^vx watch: watching 2 projects: a, site$")
        edit(site / "src/index.txt", "site edited\n")
        w.wait_for("^site edited$")
        assert w.reruns()[-1] == "site src/index.txt", w.dump()
        second = ws / "apps/docs"  # a second one, now that apps/ is watched with its tree
        add_package(second, "docs", "docs says hi\n")
        w.wait_for("^docs says hi$")
        w.wait_for(r"^vx watch: watching 3 projects: a, docs, site$")
        edit(second / "src/index.txt", "docs edited\n")
        w.wait_for("^docs edited$")
        assert w.reruns()[-1] == "docs src/index.txt", w.dump()
        assert w.stop() == 0
    assert not any("cycle failed" in line for line in w.err), w.dump()


def test_a_package_added_under_a_glob_with_a_middle_wildcard_is_run_then_watched(tmp_path, home):
    ws = workspace_with(tmp_path, ["packages/*", "libs/*/pkg"], {"libs/README.md": "libs\n"})
    with WatchProc(["build", "--all", "--output-logs=full"], ws, home=home) as w:
        w.wait_for(r"^vx watch: watching 1 project: a$")
        pkg = ws / "libs/math/pkg"
        add_package(pkg, "math", "math says hi\n")
        w.wait_for("^math says hi$")
        w.wait_for(r"^vx watch: watching 2 projects: a, math$")
        edit(pkg / "src/index.txt", "math edited\n")
        w.wait_for("^math edited$")
        assert w.reruns()[-1] == "math src/index.txt", w.dump()
        assert w.stop() == 0
