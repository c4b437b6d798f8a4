"""The syncer: files handed over are synced by its own thread, and `close` waits for them."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from vx.cache.syncer import Syncer

if TYPE_CHECKING:
    from pathlib import Path


def _syncer_threads() -> set[threading.Thread]:
    """Live syncer threads (compared before and after: another test's may still be about)."""
    return {t for t in threading.enumerate() if t.name == "vx-fsync"}


def test_close_without_files_starts_no_thread() -> None:
    before = _syncer_threads()
    syncer = Syncer()
    syncer.close()
    assert _syncer_threads() == before


def test_close_waits_for_every_file_and_passes_by_vanished_ones(tmp_path: Path) -> None:
    kept = [tmp_path / f"{i}.tar.zst" for i in range(20)]
    for path in kept:
        path.write_bytes(b"artifact")
    before = _syncer_threads()
    syncer = Syncer()
    for path in kept:
        syncer.add(path)
    syncer.add(tmp_path / "pruned-meanwhile.tar.zst")
    syncer.add(tmp_path / "gone" / "with-its-dir.tar.zst")
    syncer.close()
    assert _syncer_threads() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in kept)
    syncer.close()  # a second close waits for nothing


def test_a_closed_syncer_starts_again_on_the_next_file(tmp_path: Path) -> None:
    path = tmp_path / "a.tar.zst"
    path.write_bytes(b"artifact")
    before = _syncer_threads()
    syncer = Syncer()
    syncer.add(path)
    syncer.close()
    syncer.add(path)
    assert len(_syncer_threads() - before) == 1
    syncer.close()
    assert _syncer_threads() == before
