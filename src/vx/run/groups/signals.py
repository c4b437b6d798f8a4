"""SIGINT, SIGTERM and SIGHUP during a run: each task group hears it once, then a kill.

The handler itself only records the signal and queues it: the fan-out takes the registry's
lock, which the interrupted main thread might hold, so a helper thread does it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
from typing import TYPE_CHECKING, NoReturn, Self

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from types import FrameType, TracebackType
    from typing import TextIO

    from vx.run.groups.registry import ProcessRegistry

    Handler = Callable[[int, FrameType | None], object] | int | None

DEFAULT_KILL_GRACE_MS = 2000
KILL_GRACE_ENV = "VX_KILL_GRACE_MS"
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_LONGEST_TIMER_MS = 2**31 - 1
_STOP = 0  # no signal has number 0


def kill_grace_ms(env: Mapping[str, str] = os.environ) -> int:
    """`VX_KILL_GRACE_MS` when it is a positive integer a timer can hold, else the default."""
    try:
        value = int(env.get(KILL_GRACE_ENV, ""))
    except ValueError:
        return DEFAULT_KILL_GRACE_MS
    return value if 0 < value <= _LONGEST_TIMER_MS else DEFAULT_KILL_GRACE_MS


class RunSignals:
    """Stop signals for the length of a run, as a context manager (handlers restored after).

    The first signal is recorded in `signal`, sets `stopping` (the scheduler dispatches no
    more), and reaches each live task group once (a SIGHUP as SIGTERM: a task has no terminal
    to lose), and each descendant that left its group. After `kill_grace_ms` all of them still
    alive are killed; a second signal kills at once. Handlers go in only on the main thread
    (Python allows no other); elsewhere the context records nothing and `installed` is False.
    """

    def __init__(
        self,
        registry: ProcessRegistry,
        *,
        kill_grace_ms: int = DEFAULT_KILL_GRACE_MS,
        signals: Iterable[int] = HANDLED,
    ) -> None:
        self.stopping = threading.Event()
        self.signal: int | None = None
        self.installed = False
        self._registry = registry
        self._grace_s = kill_grace_ms / 1000
        self._signals = tuple(signals)
        self._queue: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._previous: dict[int, Handler] = {}
        self._thread = threading.Thread(target=self._serve, name="vx-signals", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        if threading.current_thread() is threading.main_thread():
            for signo in self._signals:
                self._previous[signo] = signal.signal(signo, self._on_signal)
            self.installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for signo, previous in self._previous.items():
            signal.signal(signo, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()
        self._queue.put(_STOP)
        self._thread.join()
        if exc_type is not None or self.signal is not None:
            # After a signal, what left its group keeps the rest of its grace: the registry's
            # close ends it.
            self._registry.kill_all(strays=exc_type is not None)

    def exit_code(self) -> int | None:
        """130, 143 or 129 after SIGINT, SIGTERM or SIGHUP (128 + the first signal); else None."""
        return None if self.signal is None else 128 + self.signal

    def _on_signal(self, signo: int, _frame: FrameType | None) -> None:
        if self.signal is None:
            self.signal = signo
        self._queue.put(signo)  # SimpleQueue.put is safe to call from a signal handler

    def _serve(self) -> None:
        first = self._queue.get()
        if first == _STOP:
            return
        self.stopping.set()
        self._registry.signal_all(signal.SIGTERM if first == signal.SIGHUP else first)
        try:
            again = self._queue.get(timeout=self._grace_s)
        except queue.Empty:
            again = None
        if again == _STOP:
            return
        self._registry.kill_all()
        while self._queue.get() != _STOP:
            self._registry.kill_all()


def die_of_signal(signo: int, *, streams: Iterable[TextIO] = (sys.stdout, sys.stderr)) -> NoReturn:
    """End vx by signo itself, so the shell or script that ran it sees a signal death.

    Call it on the main thread once the run is cleaned up (locks released, history written):
    nothing runs after, not even atexit handlers.
    """
    for stream in streams:
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    with contextlib.suppress(ValueError):
        signal.signal(signo, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signo})
    os.kill(os.getpid(), signo)
    os._exit(128 + signo)  # reached only if the signal could not end the process
