"""Descendants that left their task's process group: found through /proc, signalled, reaped.

vx signals a task by its process group, and a descendant that calls `setsid()` or `setpgid()`
(a `setsid cmd &`, a double-forking daemon) is no longer in it. It is still vx's descendant:
while its parent lives it hangs below the task, and once the parent exits it is re-parented to
vx, which the registry makes a child subreaper. So a walk down the parent links in /proc from
vx's pid finds every one of them, wherever in the tree it is when the walk runs. Linux only:
elsewhere the walk finds nothing and a task's group is all vx can reach.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Container, Iterable

_PROC = "/proc"


class Proc(Record):
    """One process as a walk saw it; (pid, start) names it even after its pid is reused."""

    pid: int
    ppid: int
    pgid: int
    zombie: bool
    start: int  # clock ticks after boot

    @property
    def ident(self) -> tuple[int, int]:
        return self.pid, self.start


def has_children() -> bool:
    """Whether this process has any child, running or a zombie; one system call, no walk."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def children(root: int) -> list[Proc]:
    """root's direct children."""
    return [p for p in _table() if p.ppid == root]


def descendants(root: int, *, spare: Container[tuple[int, int]] = ()) -> list[Proc]:
    """Every process below root, parents first; a spared process and all below it are left out."""
    below: dict[int, list[Proc]] = {}
    for proc in _table():
        below.setdefault(proc.ppid, []).append(proc)
    found: list[Proc] = []
    todo = [root]
    while todo:
        for proc in below.get(todo.pop(), ()):
            if proc.ident not in spare:
                found.append(proc)
                todo.append(proc.pid)
    return found


def send(proc: Proc, signo: int) -> bool:
    """Signal the process the walk saw, never one that took its pid since; True if it was sent.

    A pidfd pins the process; reading its start time again through the pid after opening the
    pidfd proves the two are the same one.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (OSError, AttributeError):
        return _kill(proc, signo)
    try:
        again = stat(proc.pid)
        if again is None or again.start != proc.start:
            return False
        signal.pidfd_send_signal(fd, signo)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def reap(procs: Iterable[Proc], *, own: int, keep: Container[int] = ()) -> None:
    """Collect each zombie that is own's child and not in keep (a pid another waiter owns)."""
    for proc in procs:
        if proc.zombie and proc.ppid == own and proc.pid not in keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(proc.pid, os.WNOHANG)


def _kill(proc: Proc, signo: int) -> bool:
    try:
        os.kill(proc.pid, signo)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _table() -> list[Proc]:
    try:
        with os.scandir(_PROC) as entries:
            pids = [int(e.name) for e in entries if e.name.isdigit()]
    except OSError:
        return []
    return [p for pid in pids if (p := stat(pid)) is not None]


def stat(pid: int) -> Proc | None:
    """One process as /proc shows it now; None once it is gone (or where there is no /proc)."""
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name sits in parentheses and may hold spaces or ')': the fields follow the last.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return Proc(pid, int(fields[1]), int(fields[2]), fields[0] in (b"Z", b"X"), int(fields[19]))
    except (IndexError, ValueError):
        return None
