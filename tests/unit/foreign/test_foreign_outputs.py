"""Outputs read from turbo.json / nx.json made safe for a runner that cleans them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.conftest import make_git_workspace

from vx.foreign.driver import Warnings
from vx.foreign.outputs import MAX_TAKEN_BACK, overlap, settle_outputs

if TYPE_CHECKING:
    from pathlib import Path


def cached(*outputs: str, deps: tuple[str, ...] = ()) -> dict[str, Any]:
    task: dict[str, Any] = {
        "exec": {"command": "x"},
        "cache": {"outputs": {"files": list(outputs)}},
    }
    if deps:
        task["dependsOn"] = list(deps)
    return task


def settle(root: Path, tasks: dict[str, dict[str, Any]]) -> list[str]:
    warnings = Warnings()
    settle_outputs(root, {"a": tasks}, {"a": "pkg"}, warnings)
    return warnings.render()


def test_overlap_is_a_shared_literal_prefix() -> None:
    assert overlap(["dist/**"], ["dist/types/**"]) == ("dist/**", "dist/types/**")
    assert overlap(["dist/**"], ["lib/**"]) is None
    assert overlap(["dist/**", "!dist/x"], ["!dist/x"]) is None  # a take-back claims nothing


def test_the_task_a_dependant_waits_for_keeps_its_cache(tmp_path: Path) -> None:
    root = make_git_workspace(tmp_path / "ws", {"pkg/src/a.ts": ""})
    tasks = {
        "build:types": cached("dist/**"),
        "build": cached("dist/**", deps=("^build",)),
        "bundle": cached("dist/**", deps=("build",)),
    }
    warnings = settle(root, tasks)
    assert "cache" in tasks["build"]
    assert "cache" in tasks["bundle"]  # an edge orders it after the keeper: additive, cached
    assert "cache" not in tasks["build:types"]
    assert warnings == [
        (
            "a#build:types: its output 'dist/**' overlaps a#build's 'dist/**' with no dependsOn edge"
            " between them — vx cleans outputs before a run and a restore, so it runs uncached; give"
            " it its own output path, or order the two"
        )
    ]


def test_committed_and_own_files_are_taken_back(tmp_path: Path) -> None:
    root = make_git_workspace(
        tmp_path / "ws", {"pkg/data/sponsors.json": "[]", "pkg/package.json": "{}"}
    )
    build, pack = {"build": cached("data/**")}, {"pack": cached("dist/**", "package.json")}
    settle(root, build)
    settle(root, pack)
    assert build["build"]["cache"]["outputs"]["files"] == ["data/**", "!data/sponsors.json"]
    assert pack["pack"]["cache"]["outputs"]["files"] == ["dist/**", "package.json", "!package.json"]


def test_too_many_committed_files_under_an_output_uncache_the_task(tmp_path: Path) -> None:
    files = {f"pkg/docs/{i}.md": "x" for i in range(MAX_TAKEN_BACK + 1)}
    root = make_git_workspace(tmp_path / "ws", files)
    tasks = {"docs": cached("docs/**")}
    (warning,) = settle(root, tasks)
    assert "cache" not in tasks["docs"]
    assert warning.startswith(f"a#docs: its outputs cover {MAX_TAKEN_BACK + 1} committed files")


def test_a_wildcard_first_output_is_cached_only_where_it_reaches_no_source(
    tmp_path: Path,
) -> None:
    root = make_git_workspace(
        tmp_path / "ws", {"pkg/src/env.d.ts": "", "pkg/src/index.ts": "", "pkg/README.md": ""}
    )
    for glob, stays in (
        ("**/*.d.ts", False),  # src/env.d.ts is a source
        ("*.xml", True),  # no committed .xml
        ("dist-*/**", True),  # no committed top-level dist-* entry
        ("**/coverage/**", True),  # no committed file under a coverage dir
    ):
        tasks = {"t": cached(glob)}
        warnings = settle(root, tasks)
        assert ("cache" in tasks["t"]) is stays, glob
        assert len(warnings) == (0 if stays else 1), warnings
