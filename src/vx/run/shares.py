"""A replay's restores, shared between this process and forked workers.

A restore is mostly Python (tar headers, globs, the staging object) between short system
calls, so threads of one process take turns on one interpreter lock: on the bench's 100 small
restores, two threads were no faster than one. A forked worker has an interpreter of its own.
On Linux, with cores for it and enough restores to pay for a fork, the items are dealt
round-robin to this process and up to three children; each child writes every result down a
pipe as it lands. A child never touches the index (its SQLite connection is the parent's), so
it only reports a bad entry; whatever a child did not report, because it died or was stopped,
the parent settles itself afterwards.

Stops land between restores, never inside one: SIGINT and SIGTERM are held off while a
restore is under way, in every process, so none is cut between cleaning a task's outputs and
moving the staged entry in. A parent interrupted tells its children to stop, waits for the
restores under way, and goes on stopping; a second interrupt while it waits kills them. A
child whose parent is gone takes no more work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

from vx.run.caching import RestoreResult

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

_HELD = frozenset({signal.SIGINT, signal.SIGTERM})
_MIN_SHARE = 8  # restores a child must get to pay back its fork (~1 ms on the bench host)
_MAX_SHARES = 4


def share_count(items: int, concurrency: int) -> int:
    """How many processes settle `items` restores: this one plus the children worth forking,
    no more than the run's concurrency allows."""
    if sys.platform != "linux" or not _single_threaded():
        return 1
    return max(1, min(concurrency, _MAX_SHARES, items // _MIN_SHARE))


def _single_threaded() -> bool:
    """Only a process with one thread may fork: a lock another thread holds would stay held
    in the child forever. `threading` is only asked when something loaded it."""
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def settle_shared(
    here: Callable[[int], RestoreResult],
    there: Callable[[int], RestoreResult],
    items: Sequence[int],
    shares: int,
) -> dict[int, RestoreResult]:
    """Each item's result: `here` settles items in this process, `there` in a forked child
    (it must leave the index alone). With `shares` below 2 no child is forked."""
    step = max(1, shares)
    dealt = [list(items[k::step]) for k in range(step)]
    pending: list[tuple[int, int]] = []
    done: dict[int, RestoreResult] = {}
    try:
        # Held across the forks, so no stop lands between a fork and its child being listed
        # here, nor in a child before it can take it.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            for part in dealt[1:]:
                try:
                    pending.append(_fork(there, part, held))
                except OSError:
                    break  # no fork to be had (memory, a process limit): this process does more
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        done.update(_settle(here, dealt[0]))
        while pending:
            pid, fd = pending.pop(0)
            done.update(_collect(pid, fd))
    except BaseException:
        _stop(pending)
        raise
    done.update(_settle(here, [i for i in items if i not in done]))
    return done


def _settle(work: Callable[[int], RestoreResult], items: Sequence[int]) -> dict[int, RestoreResult]:
    """`work` over `items`, each call with the stop signals held off until it returns."""
    done: dict[int, RestoreResult] = {}
    for i in items:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            done[i] = work(i)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held stop lands here
    return done


def _fork(
    there: Callable[[int], RestoreResult], items: Sequence[int], mask: Iterable[int]
) -> tuple[int, int]:
    """A child settling `items`: its pid and the read end of the pipe it reports on. Called
    with the stop signals held; the child sets `mask` once it is ready to take one."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        raise
    if pid == 0:  # the child: never returns, never runs the parent's exit handlers
        code = 1  # a stop or a fault: the parent settles what was not reported
        try:
            os.close(read_end)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for i in items:
                if os.getppid() != parent:
                    break
                result = _settle(there, (i,))[i]
                os.write(write_end, f"{i} {result.value}\n".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, fd: int) -> dict[int, RestoreResult]:
    """What a child reported, once it has exited; a wait cut short stops the child first."""
    data = bytearray()
    try:
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
        raise
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    results: dict[int, RestoreResult] = {}
    for line in data[: data.rfind(b"\n") + 1].decode().splitlines():
        i, _, value = line.partition(" ")
        results[int(i)] = RestoreResult(value)
    return results


def _stop(children: list[tuple[int, int]]) -> None:
    """Ask every child to stop after its restore under way and wait for it; a second
    interrupt while waiting kills the ones not yet waited for."""
    for pid, _ in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    for n, (pid, fd) in enumerate(children):
        try:
            _collect(pid, fd)
        except KeyboardInterrupt:
            for later, later_fd in children[n + 1 :]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(later, signal.SIGKILL)
                os.close(later_fd)
                os.waitpid(later, 0)
            raise
