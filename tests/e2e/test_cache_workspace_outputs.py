"""Outputs a task writes outside its project (`outputs.workspaceFiles`) are saved and restored."""

from __future__ import annotations

from tests.e2e.runws import tree


def test_workspace_outputs_round_trip(workspace, vx):
    files = tree(
        {
            "lib": (
                (),
                {
                    "gen": {
                        "exec": "mkdir -p dist ../../generated && echo own > dist/own.txt"
                        " && echo shared > ../../generated/lib.txt",
                        "cache": {
                            "inputs": {"files": ["src/**"]},
                            "outputs": {
                                "files": ["dist/**"],
                                "workspaceFiles": ["generated/**"],
                            },
                        },
                    }
                },
            )
        }
    )
    files[".gitignore"] = "dist/\ngenerated/\n"
    root = workspace(files)
    lib = root / "packages/lib"
    first = vx(["run", "gen", "--output-logs=hash-only"], lib).assert_ok()
    assert first.out.startswith("success         lib#gen ")
    (root / "generated/lib.txt").unlink()
    (lib / "dist/own.txt").unlink()
    again = vx(["run", "gen", "--output-logs=hash-only"], lib).assert_ok()
    assert again.out.startswith("restored-local  lib#gen ")
    assert (root / "generated/lib.txt").read_text() == "shared\n"
    assert (lib / "dist/own.txt").read_text() == "own\n"
    third = vx(["run", "gen", "--output-logs=hash-only"], lib).assert_ok()
    assert third.out.startswith("up-to-date      lib#gen ")


def test_a_cache_dir_inside_the_work_tree_is_no_input(workspace, vx):
    files = tree(
        {
            "lib": (
                (),
                {"t": {"exec": "echo ran", "cache": {"outputs": {"files": []}}}},
            )
        }
    )
    root = workspace(files)
    lib = root / "packages/lib"
    args = ["run", "t", "--cache-dir", ".cachedir", "--output-logs=hash-only"]
    first = vx(args, lib).assert_ok()
    second = vx(args, lib).assert_ok()
    assert first.out.split()[:1] == ["success"]
    assert second.out.split()[0] in ("up-to-date", "restored-local"), repr(second)
    assert first.out.split()[2] == second.out.split()[2]


def test_a_crashed_restores_staging_dir_is_no_input(workspace, vx):
    files = tree({"lib": ((), {"t": {"exec": "echo ran", "cache": {"outputs": {"files": []}}}})})
    root = workspace(files)
    lib = root / "packages/lib"
    first = vx(["run", "t", "--output-logs=hash-only"], lib).assert_ok()
    (lib / ".vx-restore-abc123").mkdir()
    (lib / ".vx-restore-abc123" / "half.txt").write_text("left by a crash")
    second = vx(["run", "t", "--output-logs=hash-only"], lib).assert_ok()
    assert first.out.split()[2] == second.out.split()[2]
