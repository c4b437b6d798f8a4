"""Staging dirs a killed restore left behind: found where restores make them, and only those."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vx.cache.staging import Blocked, Staging, sweep

if TYPE_CHECKING:
    from pathlib import Path


def test_sweep_removes_leftover_staging_dirs_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "dist").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    left = Staging(root)  # never closed: what a SIGKILL mid-restore leaves
    staged = left.file(("dist", "a.js"), 0o644)
    with staged:
        staged.write(b"half")
    (left._dir / "out").symlink_to(outside)  # a link inside the leftover
    leftover = left._dir
    (root / ".vx-restore-notmkdtemp").mkdir()  # not a name mkdtemp gives
    (root / ".vx-restore-abcd1234.txt").write_text("a file")
    (root / ".vx-restore-zzzz9999").symlink_to(outside)
    (root / "dist" / ".vx-restore-abcd1234").mkdir()  # no restore stages there

    sweep([root, tmp_path / "missing"])

    assert not leftover.exists()
    assert sorted(p.name for p in root.iterdir()) == [
        ".vx-restore-abcd1234.txt",
        ".vx-restore-notmkdtemp",
        ".vx-restore-zzzz9999",
        "dist",
    ]
    assert (root / "dist" / ".vx-restore-abcd1234").is_dir()
    assert (outside / "keep.txt").read_text() == "keep"


def test_a_restore_into_an_absent_top_dir_is_one_rename(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    staging = Staging(root, whole="dist")
    staging.add_dir(("dist",))
    with staging.file(("dist", "sub", "a.js"), 0o644) as staged:
        staged.write(b"a")
    staging.commit([("dist", 0o750)])
    staging.close()
    assert sorted(p.name for p in root.iterdir()) == ["dist"]  # no staging dir left
    assert (root / "dist/sub/a.js").read_bytes() == b"a"
    assert (root / "dist").stat().st_mode & 0o777 == 0o750


def test_a_top_dir_that_appeared_meanwhile_blocks_the_restore(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    staging = Staging(root, whole="dist")
    with staging.file(("dist", "a.js"), 0o644) as staged:
        staged.write(b"new")
    (root / "dist").mkdir()
    (root / "dist/keep.txt").write_text("someone else's")
    with pytest.raises(Blocked):
        staging.commit([])
    staging.close()
    assert sorted(p.name for p in root.iterdir()) == ["dist"]
    assert sorted(p.name for p in (root / "dist").iterdir()) == ["keep.txt"]
