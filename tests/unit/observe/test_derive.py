"""From a task's observed reads and writes to its cache block: globs only as wide as stay true."""

from __future__ import annotations

import pytest

from vx.observe.derive import Seen, derive, differing, generalise, state_path


def seen(**fields: object) -> Seen:
    base: dict[str, object] = {
        "package": "packages/a",
        "reads": frozenset(),
        "written": frozenset(),
        "tracked": frozenset(),
        "existing": frozenset(),
        "others_wrote": frozenset(),
    }
    return Seen(**{**base, **fields})  # type: ignore[arg-type]


def test_a_build_writing_lib_dist_and_a_file_beside_them() -> None:
    verdict = derive(
        seen(
            reads=frozenset(
                {
                    "packages/a/src/index.js",
                    "packages/a/src/util/x.js",
                    "packages/a/package.json",
                    "tools/build.js",
                    "node_modules/esbuild/lib/main.js",
                    "packages/b/dist/out.js",
                }
            ),
            written=frozenset(
                {"packages/a/lib/index.js", "packages/a/dist/x/y.js", "packages/a/meta.json"}
            ),
            tracked=frozenset(
                {"packages/a/src/index.js", "packages/a/src/util/x.js", "tools/build.js"}
            ),
            others_wrote=frozenset({"packages/b/dist/out.js"}),
        )
    )
    assert verdict.reason is None
    assert verdict.block == {
        "inputs": {"files": ["package.json", "src/**"], "workspaceFiles": ["tools/build.js"]},
        "outputs": {"files": ["dist/**", "lib/**", "meta.json"]},
    }


def test_an_output_directory_holding_a_source_narrows_to_the_files() -> None:
    verdict = derive(
        seen(
            written=frozenset({"packages/a/lib/gen.js", "packages/a/lib/sub/more.js"}),
            tracked=frozenset({"packages/a/lib/handwritten.js"}),
        )
    )
    assert verdict.block is not None
    assert verdict.block["outputs"] == {"files": ["lib/gen.js", "lib/sub/**"]}


def test_a_write_to_a_tracked_file_is_no_cache() -> None:
    verdict = derive(
        seen(written=frozenset({"packages/a/src/x.js"}), tracked=frozenset({"packages/a/src/x.js"}))
    )
    assert verdict == (None, "it writes packages/a/src/x.js, which git tracks")


def test_the_root_package_names_paths_from_the_root() -> None:
    verdict = derive(seen(package=".", reads=frozenset({"src/a.py"}), written=frozenset({"out/a"})))
    assert verdict.block == {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["out/**"]}}


@pytest.mark.parametrize(
    ("rel", "state"),
    [
        ("node_modules/x/index.js", True),
        ("packages/a/.pytest_cache/v/x", True),
        ("packages/a/__pycache__/m.pyc", True),
        ("packages/a/.yarn/cache/x.zip", True),
        ("packages/a/dist/cache", False),
        ("packages/a/.eslintcache", False),
    ],
)
def test_state_paths(rel: str, state: bool) -> None:
    assert state_path(rel) is state


def test_generalise_and_differing() -> None:
    assert generalise(["a/b/c", "a/d", "e"], ["a/keep"]) == ["a/b/**", "a/d", "e"]
    assert differing({"x": "1", "y": "2"}, {"x": "1", "y": "3", "z": "4"}) == ["y", "z"]


def test_outputs_outside_the_package_are_named_file_by_file() -> None:
    verdict = derive(seen(written=frozenset({"docs/api/a.md", "packages/a/dist/x.js"})))
    assert verdict.block is not None
    assert verdict.block["outputs"] == {
        "files": ["dist/**"],
        "workspaceFiles": ["docs/api/a.md"],
    }
