"""Staging dirs a killed restore left behind: found where restores make them, and only those."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cache.staging import Staging, sweep

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
