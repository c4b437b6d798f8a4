"""Live task groups and what left them: a stop signal reaches each once, none outlives the run."""

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

    from vx.run.groups.lifeline import Lifeline
    from vx.run.groups.strays import Proc

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
    (a container without an init), where a zombie would keep the group looking alive. It also
    keeps what left its task's group within reach (`vx.run.groups.strays`): a stop signal
    reaches those too, and `close` ends every one of them when the run is over. Processes this
    one already had as children before its first task, and what is below them, are never
    touched. The first task also starts the lifeline (`vx.run.groups.lifeline`), which kills
    the live groups if vx is SIGKILLed.
    """

    def __init__(
        self,
        *,
        adopt_orphans: bool = True,
        lifeline: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep
        self._live: dict[int, Group] = {}
        self._sent: dict[int, set[int]] = {}
        self._broadcast: int | None = None
        self._killed = False
        self._adopt = adopt_orphans
        self._want_lifeline = lifeline
        self._spawned = False
        self._closed = False
        self._own = os.getpid()
        self._spare: frozenset[tuple[int, int]] = frozenset()
        self._lifeline: Lifeline | None = None
        self._stray_sent: dict[tuple[int, int], float] = {}

    def live(self) -> tuple[int, ...]:
        """The group ids of every task not yet reaped and cleaned up."""
        with self._lock:
            return tuple(sorted(self._live))

    def signal_all(self, signo: int) -> int:
        """Send signo to each live group, and each stray, that has not had it yet.

        Returns how many groups got it.
        """
        with self._lock:
            self._broadcast = signo
            targets = [pgid for pgid, sent in self._sent.items() if signo not in sent]
            for pgid in targets:
                self._sent[pgid].add(signo)
                killpg(pgid, signo)
            groups = frozenset(self._live)
        self._signal_strays(signo, skip_groups=groups)
        return len(targets)

    def kill_all(self, *, strays: bool = True) -> int:
        """SIGKILL every live group, now and as each later one registers; strays too, unless
        told not to (`close` then gives them the rest of their grace). Returns how many groups.
        """
        with self._lock:
            self._killed = True
            for pgid in self._live:
                killpg(pgid, signal.SIGKILL)
            count = len(self._live)
        if strays:
            self._signal_strays(signal.SIGKILL, skip_groups=frozenset())
        return count

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
        task exiting at once cannot orphan its background children to init first. The children
        this process has at that moment are none of the run's: they are spared for good.
        """
        with self._lock:
            if self._spawned:
                return
            self._spawned = True
            if self._adopt:
                _become_subreaper()
            from vx.run.groups import strays

            spare = (
                {p.ident for p in strays.children(self._own)} if strays.has_children() else set()
            )
            if self._want_lifeline:
                from vx.run.groups.lifeline import Lifeline

                self._lifeline = Lifeline()
                mine = strays.stat(self._lifeline.pid) if self._lifeline.pid else None
                if mine is not None:
                    spare.add(mine.ident)
            self._spare = frozenset(spare)

    def register(self, group: Group) -> None:
        """Called by the spawner as soon as the group exists."""
        with self._lock:
            self._live[group.pgid] = group
            self._sent[group.pgid] = set()
            if self._lifeline is not None:
                self._lifeline.add(group.pgid)
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
                if self._lifeline is not None:
                    self._lifeline.drop(group.pgid)

    def close(self, grace_ms: int) -> bool:
        """The run is over: end and reap every stray, retire the lifeline; True once none is left.

        A stray gets SIGTERM unless a stop signal reached it already, SIGKILL grace_ms after
        its first signal, and is reaped. A group still live here (the run ended by an exception)
        is left to the lifeline, which kills it as it hangs up.
        """
        with self._lock:
            if not self._spawned or self._closed:
                return True
            self._closed = True
            lifeline, self._lifeline = self._lifeline, None
            release = not self._live
        if lifeline is not None:
            lifeline.close(release=release)
        from vx.run.groups import strays

        if not strays.has_children():
            return True
        gone = self._sweep(grace_ms / 1000)
        with self._lock:
            leaders = frozenset(self._live)
        strays.reap(strays.descendants(self._own, spare=self._spare), own=self._own, keep=leaders)
        return gone

    def _strays(self) -> list[Proc]:
        """Descendants still running, spared ones aside. Zombies are reaped only by `close`: a
        worker may be about to wait for a task that exited before it was registered."""
        from vx.run.groups import strays

        return [p for p in strays.descendants(self._own, spare=self._spare) if not p.zombie]

    def _mark(self, procs: list[Proc], now: float) -> list[Proc]:
        """Note that each of procs has had a stop signal; return those that had none before."""
        with self._lock:
            fresh = [p for p in procs if p.ident not in self._stray_sent]
            for proc in fresh:
                self._stray_sent[proc.ident] = now
        return fresh

    def _signal_strays(self, signo: int, *, skip_groups: frozenset[int]) -> None:
        """A stop signal reaches each stray once (members of live groups had it through their
        group); SIGKILL reaches every one."""
        with self._lock:
            if not self._spawned:
                return
        from vx.run.groups import strays

        found = [p for p in self._strays() if p.pgid not in skip_groups]
        fresh = self._mark(found, self._clock())
        for proc in found if signo == signal.SIGKILL else fresh:
            strays.send(proc, signo)

    def _sweep(self, grace_s: float) -> bool:
        from vx.run.groups import strays

        kill_at: float | None = None
        give_up_at: float | None = None
        while alive := self._strays():
            now = self._clock()
            fresh = self._mark(alive, now)
            if kill_at is None:
                with self._lock:
                    kill_at = max(self._stray_sent[p.ident] for p in alive) + grace_s
            if now < kill_at:
                for proc in fresh:
                    strays.send(proc, signal.SIGTERM)
            else:
                give_up_at = give_up_at or now + _GONE_AFTER_KILL_S
                if now >= give_up_at:
                    return False
                for proc in alive:
                    strays.send(proc, signal.SIGKILL)
            self._sleep(_GONE_POLL_S)
        return True


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
