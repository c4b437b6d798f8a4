"""Watchers on a real directory: proof by probe, the poller, and the fallbacks to it."""

from __future__ import annotations

import errno
import threading

from vx.watch.observe import PROBE, Slot, WatcherPool, _Handler, is_probe

WAIT_S = 60.0


class Heard:
    """Paths a watcher delivered, waited on by content."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.cond = threading.Condition()

    def __call__(self, path: str) -> None:
        with self.cond:
            self.paths.append(path)
            self.cond.notify_all()

    def wait_for(self, path: str) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: path in self.paths, WAIT_S), self.paths


def test_an_os_watcher_proves_itself_and_delivers(tmp_path):
    notices: list[str] = []
    heard = Heard()
    pool = WatcherPool(notice=notices.append, skip=lambda _d: False)
    try:
        slot = pool.arm(str(tmp_path), heard, recursive=True)
        assert slot is not None
        pool.prove()
        assert slot.poller is None  # proved: kept
        assert not (tmp_path / PROBE).exists()
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub/file").write_text("x")
        heard.wait_for(str(tmp_path / "sub/file"))
        assert not any(is_probe(p) for p in heard.paths)
        assert notices == []
    finally:
        pool.close()


class _Deaf(WatcherPool):
    """An OS watcher the system accepts and never feeds (a bind mount, a sandbox)."""

    def _schedule(self, slot: Slot) -> None:
        slot.handler = _Handler(slot.directory, slot.on_event)


class _Refused(WatcherPool):
    """An OS that refuses the watch for its watch limit."""

    def _schedule(self, _slot: Slot) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


def test_a_watcher_that_never_hears_its_probe_is_replaced_by_a_poller(tmp_path):
    notices: list[str] = []
    heard = Heard()
    pool = _Deaf(notice=notices.append, skip=lambda _d: False, probe_timeout_s=0.3)
    try:
        slot = pool.arm(str(tmp_path), heard, recursive=True)
        assert slot is not None
        pool.prove()
        assert slot.poller is not None
        assert notices == [
            f"vx watch: {tmp_path}: no OS watch events within 300 ms; polling every 250 ms instead"
        ]
        (tmp_path / "file").write_text("x")
        heard.wait_for(str(tmp_path / "file"))
    finally:
        pool.close()


def test_a_watch_limit_falls_back_to_polling_and_names_the_limit(tmp_path):
    notices: list[str] = []
    heard = Heard()
    pool = _Refused(notice=notices.append, skip=lambda _d: False)
    try:
        slot = pool.arm(str(tmp_path), heard, recursive=False)
        assert slot is not None
        assert slot.poller is not None
        [line] = notices
        assert "fs.inotify.max_user_watches" in line
        assert line.endswith("polling every 250 ms instead")
        (tmp_path / "file").write_text("x")
        heard.wait_for(str(tmp_path / "file"))
    finally:
        pool.close()


def test_the_poller_skips_what_it_is_told_and_reports_deletions(tmp_path):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "gone").write_text("x")
    notices: list[str] = []
    heard = Heard()
    pool = WatcherPool(notice=notices.append, skip=lambda d: d.endswith("node_modules"), poll=True)
    try:
        assert notices == ["vx watch: polling every 250 ms (VX_WATCH_POLL)"]
        pool.arm(str(tmp_path), heard, recursive=True)
        (tmp_path / "node_modules/pkg").write_text("x")
        (tmp_path / "gone").unlink()
        heard.wait_for(str(tmp_path / "gone"))
        (tmp_path / "last").write_text("x")
        heard.wait_for(str(tmp_path / "last"))
        assert str(tmp_path / "node_modules/pkg") not in heard.paths
    finally:
        pool.close()
