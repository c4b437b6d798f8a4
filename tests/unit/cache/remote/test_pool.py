"""The remote layer's thread pool: jobs begin in order, hand back what they returned or
raised, and a job cancelled or dropped by a shutdown before it began never runs."""

from __future__ import annotations

import threading

import pytest

from vx.cache.remote.pool import Cancelled, Pool

HANG_LIMIT_S = 30.0  # only there so a broken pool fails instead of hanging


def gate() -> tuple[threading.Event, threading.Event]:
    """A job's `started` (set when it begins) and `go` (it returns once set)."""
    return threading.Event(), threading.Event()


def blocked(started: threading.Event, go: threading.Event, value: object) -> object:
    started.set()
    assert go.wait(HANG_LIMIT_S)
    return value


def test_jobs_hand_back_their_values_and_errors() -> None:
    pool = Pool(2, "test")
    ok = pool.submit(lambda: 41 + 1)
    boom = pool.submit(lambda: 1 // 0)
    assert ok.result() == 42
    with pytest.raises(ZeroDivisionError):
        boom.result()
    boom.wait()  # waiting on a failed job does not raise
    pool.shutdown()


def test_one_worker_begins_jobs_in_the_order_given() -> None:
    pool = Pool(1, "test")
    seen: list[int] = []
    jobs = [pool.submit(lambda n=n: seen.append(n)) for n in range(20)]
    for job in jobs:
        job.result()
    assert seen == list(range(20))
    pool.shutdown()


def test_no_more_threads_than_workers() -> None:
    pool = Pool(3, "test")
    go = threading.Event()
    names: set[str] = set()
    lock = threading.Lock()

    def job() -> None:
        with lock:
            names.add(threading.current_thread().name)
        assert go.wait(HANG_LIMIT_S)

    jobs = [pool.submit(job) for _ in range(10)]
    go.set()
    for j in jobs:
        j.result()
    assert len(names) <= 3
    assert all(name.startswith("test-") for name in names)
    pool.shutdown()


def test_a_job_cancelled_before_it_began_never_runs() -> None:
    pool = Pool(1, "test")
    started, go = gate()
    first = pool.submit(lambda: blocked(started, go, "first"))
    ran: list[str] = []
    second = pool.submit(lambda: ran.append("second"))
    assert started.wait(HANG_LIMIT_S)
    pool.cancel(second)
    pool.cancel(first)  # under way: it finishes
    go.set()
    assert first.result() == "first"
    with pytest.raises(Cancelled):
        second.result()
    pool.shutdown()
    assert ran == []


def test_a_shutdown_drops_what_is_queued_and_waits_for_what_runs() -> None:
    pool = Pool(1, "test")
    started, go = gate()
    running = pool.submit(lambda: blocked(started, go, "done"))
    queued = pool.submit(lambda: "never")
    assert started.wait(HANG_LIMIT_S)
    stopper = threading.Thread(target=pool.shutdown)
    stopper.start()
    with pytest.raises(Cancelled):
        queued.result()
    go.set()
    stopper.join(HANG_LIMIT_S)
    assert not stopper.is_alive()
    assert running.result() == "done"
    with pytest.raises(Cancelled):
        pool.submit(lambda: "late").result()
