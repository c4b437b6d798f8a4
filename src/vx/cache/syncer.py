"""Deferred fsyncs of saved artifacts: a thread of their own makes the bytes durable.

A run's worker that saved an artifact goes on to its next task instead of waiting for the
disk (two fsyncs, most of a small task's save). What that defers is durability against a
power loss only: the artifact was renamed into place whole, so every reader sees all of it
while the system runs, and one a power loss tore fails its restore's size and digest check
and is a miss, never a wrong output (`docs/reliability.md`). The thread syncs each file,
then its directory once nothing is queued, and `close` waits for the rest.
"""

from __future__ import annotations

import contextlib
import os
import threading
from queue import SimpleQueue
from typing import TYPE_CHECKING

from vx.util.atomic import fsync_dir

if TYPE_CHECKING:
    from pathlib import Path


class Syncer:
    """fsyncs the files handed to `add`, then their directories; started on the first one."""

    __slots__ = ("_lock", "_queue", "_thread")

    def __init__(self) -> None:
        self._queue: SimpleQueue[Path | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, path: Path) -> None:
        """Make `path` (already renamed into place) and its directory entry durable soon."""
        with self._lock:
            if self._thread is None:
                # A daemon: a run that dies without `close` loses only the power-loss
                # guarantee of its last saves, never the bytes the kernel already holds.
                self._thread = threading.Thread(target=self._work, name="vx-fsync", daemon=True)
                self._thread.start()
        self._queue.put(path)

    def close(self) -> None:
        """Wait until everything added so far is synced."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _work(self) -> None:
        directories: set[Path] = set()
        while True:
            path = self._queue.get()
            if path is not None:
                _sync_file(path)
                directories.add(path.parent)
            if path is None or self._queue.empty():
                for directory in directories:
                    with contextlib.suppress(OSError):  # a store removed meanwhile: nothing to keep
                        fsync_dir(directory)
                directories.clear()
            if path is None:
                return


def _sync_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pruned or replaced meanwhile: nothing of it left to keep
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
