"""A cycle that waits only on servers not yet ready: edits are judged meanwhile, and one ends it.

Nothing is judged while a cycle runs, since its writes are mid-flight. But once every task in
flight is a server that has not printed its `readyWhen` line, the cycle's own work is done
and only the server is left, which may never be ready without a fix. From then on what is
heard is judged as between cycles (one window after the wait began at the earliest), and the
first edit sets the run's `release`: the wait ends, the server is left running, and the loop
starts the next cycle for that edit. Should a task start again (the wait was a gap between
two tasks), the batch is put back, to be judged after the cycle.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from vx.events import RunStarted, TaskFinished, TaskStarted

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.events import Event
    from vx.ids import TaskId
    from vx.watch.batch import Batches, Trigger


class ServerWait:
    """Follows one cycle's events (`see`, on any thread) and judges on its ticks (`tick`, on
    the thread running the cycle). `on_wait` is called once, when the wait begins."""

    def __init__(
        self,
        batches: Batches,
        *,
        clock: Callable[[], float],
        on_wait: Callable[[], None] = lambda: None,
    ) -> None:
        self.release = threading.Event()
        self.trigger: Trigger | None = None
        self._batches = batches
        self._clock = clock
        self._on_wait = on_wait
        self._lock = threading.Lock()
        self._persistent: frozenset[TaskId] = frozenset()
        self._in_flight: set[TaskId] = set()
        self._since: float | None = None
        self._waited = False

    def see(self, event: Event) -> None:
        """Track what is in flight from the cycle's events."""
        with self._lock:
            if isinstance(event, RunStarted):
                self._persistent = frozenset(t.id for t in event.tasks if t.persistent)
            elif isinstance(event, TaskStarted):
                self._in_flight.add(event.id)
            elif isinstance(event, TaskFinished):
                self._in_flight.discard(event.id)

    def _waiting(self) -> bool:
        with self._lock:
            return bool(self._in_flight) and self._in_flight <= self._persistent

    def tick(self) -> None:
        """Judge what settled while only servers are waited on; an edit releases the wait."""
        if self.release.is_set():
            return
        if not self._waiting():
            if self._since is not None:
                self._since = None
                self._batches.reopen()
            return
        if self._since is None:
            if not self._waited:
                self._waited = True
                self._on_wait()
            self._since = self._clock()
        batch = self._batches.settled(since=self._since)
        if batch is None:
            return
        trigger = self._batches.verdict(batch)
        if trigger is not None:
            self.trigger = trigger
            self.release.set()
