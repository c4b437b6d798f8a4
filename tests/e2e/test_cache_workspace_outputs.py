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
