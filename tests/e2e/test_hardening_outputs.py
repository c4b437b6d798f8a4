"""Outputs vx does not own are never deleted: climbing globs are refused at load, and the clean
before a run never goes through a symlink that leads out of the project (issue 8, item 1)."""

from __future__ import annotations

import pytest
from tests.e2e.cachews import tree_bytes
from tests.e2e.runws import tree

APP = "packages/app/vx.config.json"

# what a clean through each glob would reach, beside the task's own project
CLIMBING = [
    ("files", "../lib/**"),
    ("files", "../../**"),
    ("files", "../../../*.txt"),
    ("workspaceFiles", "../*.txt"),
]


def workspace_with(outputs: dict) -> dict:
    """`app` whose cached build declares `outputs`, beside a `lib` with sources of its own."""
    build = {"exec": "mkdir -p dist && echo built > dist/out.txt", "cache": {"outputs": outputs}}
    files = tree({"lib": ((), {}), "app": ((), {"build": build})})
    files["packages/lib/src/lib.js"] = "export const lib = 1;\n"
    return files


@pytest.mark.parametrize(("field", "glob"), CLIMBING)
@pytest.mark.parametrize("verb", [["run", "build"], ["show"]])
def test_a_climbing_output_glob_is_refused_at_load_and_nothing_is_deleted(
    workspace, vx, tmp_path, field, glob, verb
):
    root = workspace(workspace_with({field: [glob]}))
    beside = tmp_path / "beside.txt"
    beside.write_text("not vx's\n")
    before = tree_bytes(root)

    r = vx(verb, root / "packages/app").assert_code(1)

    assert r.err.count("\n") == 1, repr(r)
    line = r.err.rstrip("\n")
    base = "project directory" if field == "files" else "workspace root"
    assert line.startswith(
        f'{APP}: tasks.build.cache.outputs.{field}[0]: "{glob}" reaches outside the {base}'
        ' through ".."'
    ), line
    assert "Traceback" not in r.err
    assert beside.read_text() == "not vx's\n"
    assert tree_bytes(root) == before  # the sibling's sources, the root package.json, all
    assert (root / "packages/lib/src/lib.js").exists()
    assert (root / "package.json").exists()


@pytest.mark.parametrize("target", ["sibling", "outside"])
def test_a_symlinked_output_dir_is_removed_itself_never_followed(workspace, vx, tmp_path, target):
    """`dist -> <elsewhere>` with `dist/**`: the clean removes the link, which lies in the
    project and which the glob names, and leaves everything it points at alone."""
    root = workspace(workspace_with({"files": ["dist/**"]}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not vx's\n")
    link = root / "packages/app/dist"
    link.symlink_to("../lib/src" if target == "sibling" else outside)
    lib_before = tree_bytes(root / "packages/lib")

    vx(["run", "build"], root / "packages/app").assert_ok()

    assert tree_bytes(outside) == {"keep.txt": b"not vx's\n"}
    assert tree_bytes(root / "packages/lib") == lib_before
    assert not link.is_symlink()  # the task made a real dir where the link was
    assert tree_bytes(link) == {"out.txt": b"built\n"}


def test_an_output_glob_under_a_link_that_leaves_the_project_is_skipped(workspace, vx, tmp_path):
    """`dist -> /elsewhere` with `dist/sub/**`: the glob's walk would start outside the project,
    so the clean touches nothing there; the link is no output of that glob and stays."""
    build = {"exec": "echo ran", "cache": {"outputs": {"files": ["dist/sub/**"]}}}
    root = workspace(tree({"app": ((), {"build": build})}))
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub/keep.txt").write_text("not vx's\n")
    link = root / "packages/app/dist"
    link.symlink_to(outside)

    vx(["run", "build"], root / "packages/app").assert_ok()
    vx(["run", "build", "--force"], root / "packages/app").assert_ok()

    assert tree_bytes(outside) == {"sub/keep.txt": b"not vx's\n"}
    assert link.is_symlink()
