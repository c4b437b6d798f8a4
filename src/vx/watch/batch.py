"""Heard events gathered into batches, and each batch's verdict: which path (if any) is an edit.

A batch closes 150 ms after its last event, and at most 1 s after its first, so a writer that
never pauses holds no edit back. Its paths are asked of git once (an ignored path starts
nothing), then judged by settled state; the first edited path still there names the cycle,
else the first deletion. A path that starts the third cycle in a row after a run is named
once, with the remedy.
"""

from __future__ import annotations

import os
import queue
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import UserError
from vx.util.record import Record
from vx.watch.judge import SelfWrites

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from vx.watch.arming import Arming, Heard

DEBOUNCE_S = 0.15
LONGEST_WAIT_S = 1.0


class Trigger(Record):
    """The edit a cycle is started for: its path, its label, and whether it can change the
    watched set (read the set again before the cycle)."""

    path: str
    label: str
    shape: bool


class Batches:
    """The queue the watchers feed, and the batches the loop takes off it."""

    def __init__(
        self, arming: Arming, *, clock: Callable[[], float], notice: Callable[[str], None]
    ) -> None:
        self._arming = arming
        self._clock = clock
        self._notice = notice
        self._queue: queue.SimpleQueue[Heard] = queue.SimpleQueue()
        self._self_writes = SelfWrites()
        self._open: dict[str, Heard] = {}
        self._first = 0.0
        self._last = 0.0

    def put(self, heard: Heard) -> None:
        """A routed event (called on a watcher thread)."""
        self._queue.put(heard)

    def next(self, timeout: float) -> Heard | None:
        """The next event, or None after `timeout` seconds of quiet."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def collect(
        self, first: Heard, *, after_run: bool, stopping: threading.Event
    ) -> dict[str, Heard]:
        """Everything heard until 150 ms pass quietly, or 1 s after the first event.

        Right after a cycle, the window counts from its end: what it wrote has settled.
        """
        start = self._clock() if after_run else first.at
        batch = {first.path: first}
        last = max(first.at, start)
        while not stopping.is_set():
            wait = min(last + DEBOUNCE_S, start + LONGEST_WAIT_S) - self._clock()
            if wait <= 0:
                break
            heard = self.next(wait)
            if heard is None:
                break
            batch.setdefault(heard.path, heard)
            last = self._clock()
        return batch

    def settled(self, *, since: float) -> dict[str, Heard] | None:
        """Without blocking: take what was heard, and give the batch back once it closed by
        the same window as `collect`, counted from `since` at the earliest (what was written
        before then has settled). None while it is open, or nothing was heard."""
        while True:
            try:
                heard = self._queue.get_nowait()
            except queue.Empty:
                break
            if not self._open:
                self._first = max(heard.at, since)
                self._last = self._first
            self._open.setdefault(heard.path, heard)
            self._last = max(self._last, heard.at)
        if not self._open:
            return None
        if self._clock() < min(self._last + DEBOUNCE_S, self._first + LONGEST_WAIT_S):
            return None
        batch, self._open = self._open, {}
        return batch

    def reopen(self) -> None:
        """Put the open batch back on the queue, to be judged with what follows it."""
        batch, self._open = self._open, {}
        for heard in batch.values():
            self._queue.put(heard)

    def verdict(self, batch: Mapping[str, Heard]) -> Trigger | None:
        """The first edited path still there (else the first deletion), with its label."""
        from vx import git

        current, judge = self._arming.current, self._arming.judge
        if current is None or judge is None:
            return None
        rels = {p: current.rules.relative(p) for p in batch}
        try:
            ignored = git.check_ignore(Path(current.root), [r for r in rels.values() if r])
        except UserError:
            ignored = frozenset()
        present: Trigger | None = None
        gone: Trigger | None = None
        shape = False
        for path, heard in batch.items():
            if rels[path] in ignored or not judge.edited(path):
                continue
            shape = shape or heard.shape
            if path in current.workspace_imports:
                self._notice(
                    f"vx watch: {rels[path]} is imported by the workspace config, which is"
                    " loaded once per process: restart vx watch to use the edit"
                )
            if os.path.lexists(path):
                present = present or Trigger(path, heard.label, shape)
            else:
                gone = gone or Trigger(path, heard.label, shape)
        found = present or gone
        return None if found is None else found._replace(shape=shape)

    def blame(self, path: str, *, after_run: bool, server: bool) -> None:
        """The third cycle in a row a path heard during a cycle starts: name it, once."""
        current = self._arming.current
        if current is None:
            return
        streak = self._self_writes.cycle(path, after_run=after_run)
        if streak < 3:
            return
        rel = current.rules.relative(path) or path
        if server and self._arming.is_tracked(rel):
            return  # a tracked file is the user's to edit, not the server's doing
        line = self._self_writes.notice(path, rel, server=server)
        if line:
            self._notice(line)
