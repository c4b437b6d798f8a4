"""Finding and cleaning declared outputs on a real file system: never past the base."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from conftest import write_tree
from vx.cache.manifest import Recorded
from vx.cache.outputs import clean_outputs, output_paths, output_tree, undeclared

if TYPE_CHECKING:
    from pathlib import Path


def files_under(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()
    )


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A project holding a dist/ of its own, and a directory beside it that it must not touch."""
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    write_tree(project, {"dist/a.js": "a", "dist/sub/b.js": "b", "src/x.ts": "x"})
    write_tree(outside, {"keep.txt": "keep", "sub/keep.txt": "keep", "lib/keep.txt": "keep"})
    return project, outside


def test_own_outputs_are_found_and_cleaned(layout: tuple[Path, Path]) -> None:
    project, _ = layout
    assert output_paths(project, ["dist/**"]) == ["dist/a.js", "dist/sub/b.js"]
    clean_outputs(project, ["dist/**"])
    assert files_under(project) == ["src/x.ts"]
    assert not (project / "dist").exists()


@pytest.mark.parametrize(
    "patterns",
    [
        ["../outside/**"],
        ["../outside/keep.txt"],
        ["../outside/sub/**", "dist/**"],
        ["dist/../../outside/**"],
        ["!nothing", "../**"],
    ],
)
def test_a_glob_that_climbs_selects_and_deletes_nothing_above(
    layout: tuple[Path, Path], patterns: list[str]
) -> None:
    project, outside = layout
    before = files_under(outside)
    found = output_paths(project, patterns)
    assert all(not p.startswith("..") and "/../" not in p for p in found), found
    clean_outputs(project, patterns)
    assert files_under(outside) == before


@pytest.mark.parametrize(
    ("link", "target", "patterns"),
    [
        ("dist", "outside", ["dist/**"]),
        ("dist", "outside", ["dist/sub/**"]),
        ("dist", "outside", ["dist/keep.txt"]),
        ("out", "outside", ["out/lib/**", "out/sub/keep.txt"]),
        ("gen", "outside/sub", ["gen/**/*.txt"]),
    ],
)
def test_a_symlinked_dir_on_the_way_is_never_followed(
    layout: tuple[Path, Path], link: str, target: str, patterns: list[str]
) -> None:
    project, outside = layout
    if (project / link).exists():
        (project / link).rename(project / f"{link}.real")
    (project / link).symlink_to(project.parent / target)
    before = files_under(outside)
    selected = output_paths(project, patterns)
    assert all(p == link for p in selected), selected
    clean_outputs(project, patterns)
    assert files_under(outside) == before


def test_the_link_itself_goes_when_its_glob_holds_it(layout: tuple[Path, Path]) -> None:
    project, outside = layout
    (project / "dist").rename(project / "old")
    (project / "dist").symlink_to(outside)
    assert output_paths(project, ["dist/**"]) == ["dist"]
    clean_outputs(project, ["dist/**"])
    assert not (project / "dist").is_symlink()
    assert (outside / "keep.txt").read_text() == "keep"


def test_a_file_symlink_inside_the_base_is_removed_not_followed(
    layout: tuple[Path, Path],
) -> None:
    project, outside = layout
    (project / "dist" / "escape.txt").symlink_to(outside / "keep.txt")
    (project / "dist" / "away").symlink_to(outside / "sub")
    clean_outputs(project, ["dist/**"])
    assert not (project / "dist").exists()
    assert files_under(outside) == ["keep.txt", "lib/keep.txt", "sub/keep.txt"]


def test_a_symlinked_base_is_held_to_where_it_resolves(tmp_path: Path) -> None:
    real = tmp_path / "real-app"
    write_tree(real, {"dist/a.js": "a", "src/x.ts": "x"})
    write_tree(tmp_path, {"keep.txt": "keep"})
    linked = tmp_path / "ws" / "app"
    linked.parent.mkdir()
    linked.symlink_to(real)
    assert output_paths(linked, ["dist/**"]) == ["dist/a.js"]
    assert output_paths(linked, ["**/*.js"]) == ["dist/a.js"]
    clean_outputs(linked, ["**/*.js", "../../keep.txt"])
    assert files_under(real) == ["src/x.ts"]
    assert linked.is_symlink()
    assert (tmp_path / "keep.txt").read_text() == "keep"


def test_a_link_inside_the_base_to_elsewhere_inside_is_followed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"build/out/a.js": "a", "keep.txt": "keep"})
    (tmp_path / "dist").symlink_to(tmp_path / "build")
    assert output_paths(tmp_path, ["dist/out/**"]) == ["dist/out/a.js"]
    clean_outputs(tmp_path, ["dist/out/**"])
    assert files_under(tmp_path) == ["dist", "keep.txt"]


def _rec(path: str, kind: str = "file") -> Recorded:
    return Recorded(path, "dir" if kind == "dir" else "link" if kind == "link" else "file")


@pytest.mark.parametrize(
    ("patterns", "stops", "paths", "first_undeclared"),
    [
        (["dist/**"], [], [("dist/a.js", "file"), ("dist/l", "link")], None),
        (["dist/**"], [], [("src/index.js", "file")], "src/index.js"),
        (["dist/**"], [], [("dist/a.js", "file"), ("vx.config.json", "file")], "vx.config.json"),
        (["dist/**", "!dist/cache/**"], [], [("dist/cache/x", "file")], "dist/cache/x"),
        (["dist/**", "!dist/cache/**", "dist/cache/keep"], [], [("dist/cache/keep", "file")], None),
        ([], [], [("dist/a.js", "file")], "dist/a.js"),
        ([], [], [], None),
        (["dist/*.js"], [], [("dist", "dir"), ("dist/a.js", "file")], None),
        (["dist/*.js"], [], [("dist/sub", "dir")], "dist/sub"),
        (["dist/*.js"], [], [("src", "dir"), ("dist/a.js", "file")], "src"),
        (["dist/**"], [], [("dist/empty", "dir")], None),
        (["**/*.js"], ["nested"], [("nested/src/x.js", "file")], "nested/src/x.js"),
        (["**/*.js"], [], [("lib/node_modules/x.js", "file")], "lib/node_modules/x.js"),
        (["**/*.js"], [], [(".git/hooks/x.js", "file")], ".git/hooks/x.js"),
        (["node_modules/.cache/**"], [], [("node_modules/.cache/a", "file")], None),
        (["dist/**"], [], [("dist/../src/x", "file")], "dist/../src/x"),
        (["**"], [], [("/etc/passwd", "file")], "/etc/passwd"),
        (["dist/**"], [], [("dist//a", "file")], "dist//a"),
    ],
    ids=[
        "declared",
        "a-source",
        "the-config",
        "negated",
        "negation-taken-back",
        "no-outputs-any-member",
        "no-outputs-no-member",
        "dir-parent-of-a-match",
        "dir-holding-nothing-matched",
        "dir-outside",
        "dir-matched-itself",
        "in-a-nested-project",
        "under-node-modules",
        "under-git",
        "node-modules-as-the-walk-start",
        "dot-dot",
        "absolute",
        "empty-segment",
    ],
)
def test_undeclared_names_what_the_outputs_would_never_have_saved(
    patterns: list[str],
    stops: list[str],
    paths: list[tuple[str, str]],
    first_undeclared: str | None,
) -> None:
    recorded = [_rec(path, kind) for path, kind in paths]
    assert undeclared(recorded, patterns, stop_at=stops) == first_undeclared


def test_a_wholly_selected_tree_goes_in_one_rename(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dist/a.js": "a", "dist/sub/b.js": "b", "src/x.js": "x"})
    clean_outputs(tmp_path, ["dist/**"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # no dist, no staging left


@pytest.mark.parametrize(
    ("patterns", "left"),
    [
        (["dist/**", "!dist/keep.txt"], ["dist/keep.txt"]),  # a `!` entry stays, file by file
        (["dist/*.js"], ["dist/notes.md"]),  # a file the globs do not select stays
        (["dist/**"], ["dist/node_modules/m.js"]),  # a walk never enters node_modules
    ],
)
def test_a_tree_holding_what_the_globs_leave_is_cleaned_file_by_file(
    tmp_path: Path, patterns: list[str], left: list[str]
) -> None:
    write_tree(
        tmp_path,
        {
            "dist/a.js": "a",
            "dist/keep.txt": "k",
            "dist/notes.md": "n",
            "dist/node_modules/m.js": "m",
        },
    )
    clean_outputs(tmp_path, patterns)
    for rel in left:
        assert (tmp_path / rel).is_file(), rel
    assert not (tmp_path / "dist/a.js").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".vx-restore-")]


def test_output_tree_gives_the_files_and_every_directory_the_walk_entered(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"dist/a.js": "a", "dist/sub/b.js": "b", "dist/node_modules/m.js": "m", "src/x": "x"},
    )
    files, entered = output_tree(tmp_path, ["dist/**"])
    assert files == output_paths(tmp_path, ["dist/**"]) == ["dist/a.js", "dist/sub/b.js"]
    assert sorted(entered) == ["dist", "dist/sub"]  # never node_modules, never src


def test_a_clean_reuses_the_walk_it_is_given_unless_a_tree_went(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dist/a.js": "a", "dist/keep.txt": "k", "out.txt": "o"})
    patterns = ["dist/**", "!dist/keep.txt", "out.txt"]
    given = ["out.txt"]  # what a caller found: the clean trusts it, since no tree was dropped
    clean_outputs(tmp_path, patterns, present=given)
    assert files_under(tmp_path) == ["dist/a.js", "dist/keep.txt"]
    write_tree(tmp_path, {"dist/a.js": "a", "dist/b.js": "b"})
    clean_outputs(tmp_path, ["dist/**"], present=["dist/a.js"])  # dist/ goes whole, walk again
    assert files_under(tmp_path) == []


def test_a_directory_through_a_link_out_of_the_base_is_never_inside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_tree(project, {"dist/a.js": "a"})
    write_tree(tmp_path, {"elsewhere/deep/x.js": "x"})
    (project / "dist/away").symlink_to(tmp_path / "elsewhere")
    clean_outputs(project, ["dist/away/deep/*.js", "dist/*.js"])
    assert (tmp_path / "elsewhere/deep/x.js").is_file()
    assert not (project / "dist/a.js").exists()


@pytest.mark.parametrize("patterns", [["dist/**"], ["**/*.js"], ["dist/sub/b.js", "dist/a.js"]])
def test_a_spared_path_survives_the_clean_and_keeps_its_tree(
    layout: tuple[Path, Path], patterns: list[str]
) -> None:
    """The last guard: a path the caller says git tracks stays, whatever the globs say, and
    the tree holding it is not moved away whole."""
    project, _ = layout
    clean_outputs(project, patterns, spare=lambda rel: rel == "dist/sub/b.js")
    assert "dist/sub/b.js" in files_under(project)
    assert "dist/a.js" not in files_under(project)
    assert "src/x.ts" in files_under(project)
