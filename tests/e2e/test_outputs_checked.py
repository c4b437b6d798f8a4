"""Outputs checked both ways (issue 26, item 5): a glob over committed sources is refused before
anything is cleaned, a cached task whose outputs matched nothing is told so, and an empty
directory among the outputs comes back on a restore."""

from __future__ import annotations

import shutil

import pytest
from tests.e2e.cachews import tree_bytes
from tests.e2e.runws import tree

from conftest import git

WEB = "packages/web/vx.config.json"


def web_with(outputs: dict, command: str = "mkdir -p lib && echo 'x' > lib/out.js") -> dict:
    """`web`, whose cached build declares `outputs`, beside a committed `eslint.config.js`."""
    build = {"exec": command, "cache": {"outputs": outputs}}
    files = tree({"web": ((), {"build": build})})
    files["packages/web/eslint.config.js"] = "export default [];\n"
    files[".gitignore"] = "lib/\ndist/\n"
    return files


@pytest.mark.parametrize(
    ("field", "glob", "named"),
    [
        ("files", "**/*.js", "eslint.config.js"),
        ("files", "*.js", "eslint.config.js"),
        ("workspaceFiles", "packages/web/*.js", "packages/web/eslint.config.js"),
    ],
)
def test_an_output_glob_over_a_tracked_file_is_refused_and_nothing_is_deleted(
    workspace, vx, field, glob, named
):
    root = workspace(web_with({field: [glob]}))
    config = root / "packages/web/eslint.config.js"
    config.write_text("export default [{ rules: {} }];\n")  # an edit git reports modified
    (root / "packages/web/lib").mkdir()
    (root / "packages/web/lib/old.js").write_text("old\n")
    before = tree_bytes(root)

    r = vx(["run", "build"], root / "packages/web").assert_code(1)

    assert r.err.count("\n") == 1, repr(r)
    assert r.err == (
        f"{WEB}: tasks.build.cache.outputs.{field}: {glob!r} matches {named}, which git tracks"
        " — vx cleans outputs before each run and would delete it; narrow the glob or add"
        f" '!{named}'\n"
    ), repr(r)
    assert tree_bytes(root) == before  # the edit, the leftover output: nothing was touched
    assert "run" not in r.out


def test_a_take_back_of_the_tracked_file_is_accepted_and_keeps_it(workspace, vx):
    root = workspace(web_with({"files": ["**/*.js", "!eslint.config.js"]}))
    vx(["run", "build"], root / "packages/web").assert_ok()
    vx(["run", "build"], root / "packages/web").assert_ok()
    assert (root / "packages/web/eslint.config.js").read_text() == "export default [];\n"


def test_outputs_that_match_no_file_warn_once_and_are_marked_in_the_history(workspace, vx):
    """The build writes `lib/`, the config guesses `dist/**`: the run says so in one line, the
    history row carries the mark, and `vx info` lists the task."""
    root = workspace(web_with({"files": ["dist/**"]}))
    web = root / "packages/web"

    r = vx(["run", "build"], web).assert_ok()

    warned = [line for line in r.err.splitlines() if "matched no file" in line]
    assert warned == [
        (
            "[vx] web#build: its outputs (dist/**) matched no file after a successful run, so"
            " a hit restores nothing — make cache.outputs.files name what the task writes"
        )
    ], repr(r)
    last = vx(["last", "--format", "json"], root).assert_ok().json()
    (row,) = [t for t in last["tasks"] if t["id"] == "web#build"]
    assert row["reason"] == "outputs matched no file"
    info = vx(["info"], root).assert_ok()
    assert "empty outputs:" in info.out, info.out
    (line,) = [x for x in info.out.splitlines() if x.startswith("empty outputs:")]
    assert line.split(":", 1)[1].strip().startswith("web#build — "), line
    assert vx(["info", "--format", "json"], root).json()["emptyOutputs"] == ["web#build"]

    (web / "vx.config.json").write_text(
        '{"tasks": {"build": {"exec": "mkdir -p lib && echo x > lib/out.js",'
        ' "cache": {"outputs": {"files": ["lib/**"]}}}}}'
    )
    r = vx(["run", "build"], web).assert_ok()
    assert "matched no file" not in r.err
    assert vx(["info", "--format", "json"], root).json()["emptyOutputs"] == []


def test_a_task_that_declares_no_outputs_is_not_warned(workspace, vx):
    root = workspace(web_with({}, command="echo checked"))
    r = vx(["run", "build"], root / "packages/web").assert_ok()
    assert "matched no file" not in r.err


def test_an_empty_directory_among_the_outputs_is_restored(workspace, vx):
    command = "mkdir -p dist/empty dist/full && echo x > dist/full/a.txt"
    root = workspace(web_with({"files": ["dist/**"]}, command=command))
    web = root / "packages/web"
    vx(["run", "build"], web).assert_ok()
    shutil.rmtree(web / "dist")

    r = vx(["run", "build", "--verbosity", "1"], web).assert_ok()

    assert "local" in r.out, repr(r)
    assert (web / "dist/empty").is_dir()
    assert (web / "dist/full/a.txt").read_text() == "x\n"
    assert "matched no file" not in r.err
    assert git(root, "status", "--porcelain") == ""
