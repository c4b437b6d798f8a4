"""Live task process groups: a stop signal reaches each once, and none outlives its task."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

_PR_SET_CHILD_SUBREAPER = 36
_GONE_POLL_S = 0.02
_GONE_AFTER_KILL_S = 1.0


class Group(Protocol):
    """What the registry needs of a started task: its group id and its kill ladder."""

    @property
    def pgid(self) -> int: ...

    def terminate(self, grace_ms: int | None = None) -> None: ...


class ProcessRegistry:
    """Every task group spawned and not yet cleaned up, shared by a run's worker threads.

    A group registered after `signal_all` or `kill_all` gets that signal at once, so a task
    spawned while vx is stopping cannot slip through. Call it from threads, never from a signal
    handler: its lock is not reentrant.

    On Linux, its first task turns this process into a child subreaper: what a task leaves in the
    background is re-parented to vx, which reaps it, rather than to a PID 1 that may never reap
    (a container without an init), where a zombie would keep the group looking alive.
    """

    def __init__(self, *, adopt_orphans: bool = True) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, Group] = {}
        self._sent: dict[int, set[int]] = {}
        self._broadcast: int | None = None
        self._killed = False
        self._adopt = adopt_orphans

    def live(self) -> tuple[int, ...]:
        """The group ids of every task not yet reaped and cleaned up."""
        with self._lock:
            return tuple(sorted(self._live))

    def signal_all(self, signo: int) -> int:
        """Send signo to each live group that has not had it yet; return how many got it."""
        with self._lock:
            self._broadcast = signo
            targets = [pgid for pgid, sent in self._sent.items() if signo not in sent]
            for pgid in targets:
                self._sent[pgid].add(signo)
                killpg(pgid, signo)
        return len(targets)

    def kill_all(self) -> int:
        """SIGKILL every live group, now and as each later one registers."""
        with self._lock:
            self._killed = True
            for pgid in self._live:
                killpg(pgid, signal.SIGKILL)
            return len(self._live)

    def terminate_all(self, grace_ms: int) -> int:
        """Start every live task's SIGTERM → SIGKILL ladder (how persistent tasks end)."""
        with self._lock:
            groups = list(self._live.values())
        for group in groups:
            group.terminate(grace_ms)
        return len(groups)

    def before_spawn(self) -> None:
        """Called by the spawner before each spawn: the first makes vx a subreaper.

        Deferred to here so a run of cache hits never loads ctypes, and early enough that a
        task exiting at once cannot orphan its background children to init first.
        """
        with self._lock:
            if self._adopt:
                self._adopt = False
                _become_subreaper()

    def register(self, group: Group) -> None:
        """Called by the spawner as soon as the group exists."""
        with self._lock:
            self._live[group.pgid] = group
            self._sent[group.pgid] = set()
            if self._killed:
                killpg(group.pgid, signal.SIGKILL)
            elif self._broadcast is not None:
                self._sent[group.pgid].add(self._broadcast)
                killpg(group.pgid, self._broadcast)

    def unregister(self, group: Group) -> None:
        """Called once the task is reaped and its group is empty (or given up on)."""
        with self._lock:
            if self._live.get(group.pgid) is group:
                del self._live[group.pgid]
                del self._sent[group.pgid]


def killpg(pgid: int, signo: int) -> None:
    """Signal a group that may already be gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signo)


def empty_group(
    pgid: int,
    *,
    grace_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """SIGTERM what is left in a finished task's group, SIGKILL it after grace_s; True once empty.

    Members re-parented to vx (see `ProcessRegistry`) are reaped as they go. A member vx may
    not signal, or one that outlives SIGKILL (stuck in the kernel), is given up on after a bound.
    """

    def gone_within(seconds: float) -> bool:
        until = clock() + seconds
        while _group_alive(pgid):
            if clock() >= until:
                return False
            sleep(_GONE_POLL_S)
        return True

    if not _group_alive(pgid):
        return True
    if grace_s > 0:
        killpg(pgid, signal.SIGTERM)
        if gone_within(grace_s):
            return True
    killpg(pgid, signal.SIGKILL)
    return gone_within(_GONE_AFTER_KILL_S)


def _group_alive(pgid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-pgid, os.WNOHANG)[0] != 0:
            pass
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _become_subreaper() -> bool:
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
