"""A cycle that waits only on servers not yet ready: edits are judged meanwhile, and one ends it.

Nothing is judged while a cycle runs, since its writes are mid-flight. But once every ticket in
flight (a cache restore counts as one) is a server that has not printed its `readyWhen` line,
the cycle's own work is done and only the server is left, which may never be ready without a
fix. The run says so on each tick of its `Release`; from then on what is heard is judged as
between cycles (one window after the wait began at the earliest), and the first edit sets the
release: the wait ends, the server is left running, and the loop starts the next cycle for
that edit. Should work be in flight again (the wait was a gap between two tasks), the batch is
put back, to be judged after the cycle; so is one still open when the run ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.run.servers import Release

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.watch.batch import Batches, Trigger


class ServerWait:
    """One cycle's wait on servers: `release` goes to the run, whose ticks (on the thread
    running the cycle, outside the run's locks) drive the judging. `on_wait` is called once,
    when the wait begins; `close` once the run has returned."""

    def __init__(
        self,
        batches: Batches,
        *,
        clock: Callable[[], float],
        on_wait: Callable[[], None] = lambda: None,
    ) -> None:
        self.release = Release(self._judge)
        self.trigger: Trigger | None = None
        self._batches = batches
        self._clock = clock
        self._on_wait = on_wait
        self._since: float | None = None
        self._waited = False

    def _judge(self, waiting: bool) -> None:
        """Judge what settled while only servers are waited on; an edit sets the release."""
        if not waiting:
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

    def close(self) -> None:
        """The run returned: a batch still open (the server became ready, or exited, inside
        its window) goes back on the queue, so the loop judges it and its edit is a cycle."""
        self._batches.reopen()
