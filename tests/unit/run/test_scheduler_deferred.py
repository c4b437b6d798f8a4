"""The scheduler's deferred servers: parked while hits restore, started late when one misses."""

from __future__ import annotations

import threading

from vx.ids import TaskId
from vx.run.scheduler import ContinueMode, Done, Lanes, NodeKind, Result, Schedule, Ticket
from vx.run.scheduler import run_schedule as schedule_run

SRV = TaskId.parse("srv#dev")
A = TaskId.parse("a#check")
B = TaskId.parse("b#check")


def schedule() -> Schedule:
    deps = {SRV: (), A: (SRV,), B: (SRV,)}
    kind = {SRV: NodeKind.DEFERRED, A: NodeKind.RESTORE, B: NodeKind.RESTORE}
    return Schedule((SRV, A, B), deps, kind)


class Worker:
    """Restores hit unless named in `misses`; a miss handed back runs on its requeued ticket."""

    def __init__(self, misses: set[TaskId], *, server: Result = Result.OK) -> None:
        self.misses = misses
        self.server = server
        self.log: list[tuple[TaskId, str]] = []
        self.lock = threading.Lock()

    def run(self, ticket: Ticket) -> Done:
        if ticket.id == SRV:
            self._note(SRV, "started")
            return Done(self.server)
        if ticket.id in self.misses and not ticket.missed:
            assert ticket.hands_back
            self._note(ticket.id, "handed back")
            return Done(Result.REQUEUE)
        self._note(ticket.id, "executed" if ticket.missed else "restored")
        return Done(Result.OK)

    def _note(self, tid: TaskId, what: str) -> None:
        with self.lock:
            self.log.append((tid, what))


def walk(worker: Worker, skipped: dict[TaskId, TaskId | None]) -> dict[TaskId, Result]:
    return schedule_run(
        schedule(),
        lanes=Lanes(1, 2),
        mode=ContinueMode.NEVER,
        run_task=worker.run,
        on_skip=skipped.__setitem__,
        on_not_run=lambda _t: None,
        stopping=threading.Event(),
    )


def test_a_server_whose_dependants_all_restore_is_never_started() -> None:
    worker = Worker(set())
    res = walk(worker, {})
    assert res == {SRV: Result.NOT_STARTED, A: Result.OK, B: Result.OK}
    assert sorted(worker.log) == [(A, "restored"), (B, "restored")]


def test_a_miss_starts_the_server_and_executes_after_it() -> None:
    worker = Worker({A})
    res = walk(worker, {})
    assert res == {SRV: Result.OK, A: Result.OK, B: Result.OK}
    log = worker.log
    assert log.index((A, "handed back")) < log.index((SRV, "started")) < log.index((A, "executed"))
    assert log.count((SRV, "started")) == 1


def test_two_misses_start_the_server_once() -> None:
    worker = Worker({A, B})
    res = walk(worker, {})
    assert res == {SRV: Result.OK, A: Result.OK, B: Result.OK}
    assert worker.log.count((SRV, "started")) == 1
    started = worker.log.index((SRV, "started"))
    assert worker.log.index((A, "executed")) > started
    assert worker.log.index((B, "executed")) > started


def test_a_late_server_that_fails_skips_the_miss_waiting_on_it() -> None:
    worker = Worker({A}, server=Result.FAILED)
    skipped: dict[TaskId, TaskId | None] = {}
    res = walk(worker, skipped)
    assert res[SRV] is Result.FAILED
    assert res[A] is Result.SKIPPED
    assert skipped[A] == SRV
    assert (A, "executed") not in worker.log
