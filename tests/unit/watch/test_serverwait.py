"""The watch's judging while a cycle waits only on servers: real batches, a clock the test moves.

The run's ticks are `Release.tick` calls, made here as a run makes them; no edit in these
tests closes its window, so no verdict (git, the judge) is asked for.
"""

from __future__ import annotations

from vx.watch.arming import Heard
from vx.watch.batch import Batches
from vx.watch.serverwait import ServerWait

EDIT = Heard("/ws/packages/lib/src/a.ts", "lib src/a.ts", shape=False, at=0.0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def waiting_cycle():
    clock = Clock()
    batches = Batches(None, clock=clock, notice=lambda _line: None)  # type: ignore[arg-type]
    waits: list[bool] = []
    wait = ServerWait(batches, clock=clock, on_wait=lambda: waits.append(True))
    wait.release.tick(waiting=True)  # only the server is left: the wait begins
    clock.now += 1.0
    batches.put(EDIT._replace(at=clock.now))
    clock.now += 0.05
    wait.release.tick(waiting=True)  # heard, its window still open
    return clock, batches, wait, waits


def test_an_edit_in_its_window_when_the_run_ends_is_the_loops_to_judge():
    _, batches, wait, waits = waiting_cycle()
    assert batches.next(0) is None  # taken into the open batch
    wait.close()  # the server became ready, the run returned: no further tick
    assert batches.next(0) == EDIT._replace(at=101.0)
    assert not wait.release.is_set()
    assert waits == [True]


def test_work_in_flight_again_puts_the_open_batch_back():
    _, batches, wait, _ = waiting_cycle()
    wait.release.tick(waiting=False)  # a task started: the wait was a gap between two
    assert batches.next(0) == EDIT._replace(at=101.0)


def test_the_wait_is_announced_once():
    _, _, wait, waits = waiting_cycle()
    wait.release.tick(waiting=False)
    wait.release.tick(waiting=True)
    assert waits == [True]
