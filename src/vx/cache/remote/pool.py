"""The remote layer's worker threads: jobs queued in order, each waited on by whoever needs it.

`concurrent.futures` would do, but it costs a remote run ~6 ms to import (`logging` and
`traceback` come with it); the layer needs only submit, wait, cancel a job not yet begun,
and a shutdown that drops what is still queued.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")


class Cancelled(Exception):  # noqa: N818  it reads as what happened to the job
    """The job was dropped before it began."""


class Job(Generic[T]):
    """One queued call; `result()` waits for it and returns or raises what the call did."""

    __slots__ = ("_call", "_done", "_error", "_value")

    def __init__(self, call: Callable[[], T]) -> None:
        self._call: Callable[[], T] | None = call
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def result(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set by the call that finished

    def wait(self) -> None:
        """Wait for the job, whatever it did."""
        self._done.wait()

    def _take(self) -> Callable[[], T] | None:
        """The call to make, once; None when the job was cancelled. Under the pool's lock."""
        call, self._call = self._call, None
        return call

    def _finish(self, call: Callable[[], T]) -> None:
        try:
            self._value = call()
        except BaseException as err:  # noqa: BLE001  handed to whoever waits on the job
            self._error = err
        self._done.set()

    def _cancel(self) -> bool:
        """Drop the job unless it began (under the pool's lock); a waiter then gets Cancelled."""
        if self._call is None:
            return False
        self._call = None
        self._error = Cancelled()
        self._done.set()
        return True


class Pool:
    """Up to `workers` daemon threads, started as jobs arrive; jobs begin in the order given."""

    def __init__(self, workers: int, name: str) -> None:
        self._workers = workers
        self._name = name
        self._queue: deque[Job[object]] = deque()
        self._ready = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, call: Callable[[], T]) -> Job[T]:
        job = Job(call)
        with self._ready:
            if self._closed:
                job._cancel()
                return job
            self._queue.append(job)  # type: ignore[arg-type]  # a Job[T] is read as Job[object]
            if self._idle:
                self._ready.notify()
            elif len(self._threads) < self._workers:
                thread = threading.Thread(
                    target=self._serve, name=f"{self._name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return job

    def cancel(self, job: Job[T]) -> None:
        with self._ready:
            job._cancel()

    def shutdown(self) -> None:
        """Drop the jobs not begun, then wait for the ones under way."""
        with self._ready:
            self._closed = True
            while self._queue:
                self._queue.popleft()._cancel()
            self._ready.notify_all()
        for thread in self._threads:
            thread.join()

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._idle += 1
                    self._ready.wait()
                    self._idle -= 1
                if not self._queue:
                    return
                job = self._queue.popleft()
                call = job._take()
            if call is not None:
                job._finish(call)
