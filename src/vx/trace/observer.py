"""One traced command, whichever tracer this host has: what the spawner needs to start it under
the tracer, and the `Trace` read back once it ended.

Both tracers are an argv prefix for the spawner (`run/process.py`): strace writes a log read
back at the end; vx's seccomp launcher hands a thread of vx a listener over a socket the child
keeps open (`pass_fds`), and the thread records as the task runs. Callers (the run's audit,
`vx init --observe`) see one shape.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vx.trace.probe import tracing_available

if TYPE_CHECKING:
    from vx.trace.parse import Trace

# A log lives for one task: memory (tmpfs) where the host has it, so making and removing one
# never waits behind the cache's fsyncs on the disk's journal; else the temp directory.
# mkstemp makes it O_EXCL and 0600 there, as in any shared temp directory.
_SHM = "/dev/shm"  # noqa: S108
_LOG_DIR = _SHM if os.access(_SHM, os.W_OK | os.X_OK) else None


class TracingUnavailableError(Exception):
    """No tracer can follow a process here; the message is the probe's reason."""


class Observer:
    """A command about to run under a tracer.

    Hand `prefix` and `pass_fds` to the spawner, call `spawned()` once it returned or failed,
    and `finish()` after the command ended: its `Trace`, or None with `reason` saying why
    nothing could be seen. `discard()` when it never ran."""

    prefix: tuple[str, ...] = ()
    pass_fds: tuple[int, ...] = ()
    reason = ""

    def spawned(self) -> None:
        """The spawn returned (or failed)."""

    def finish(self) -> Trace | None:
        """What the command did."""
        raise NotImplementedError

    def discard(self) -> None:
        """Nothing ran: let go of what was set up."""
        self.spawned()


class _StraceObserver(Observer):
    def __init__(self, flags: tuple[str, ...], cwd: Path, within: tuple[str, ...]) -> None:
        self._within = tuple(f"{w.rstrip('/')}/" for w in within)
        fd, name = tempfile.mkstemp(prefix="vx-trace-", suffix=".log", dir=_LOG_DIR)
        os.close(fd)
        self._log, self._cwd = Path(name), cwd
        from vx.trace.strace import strace_argv

        self.prefix = strace_argv(flags, self._log)

    def finish(self) -> Trace | None:
        from vx.trace.parse import parse_log

        try:
            if self._log.stat().st_size == 0:
                self.reason = "the tracer saw nothing run"
                return None
            trace = parse_log(self._log, self._cwd)
        except OSError as exc:
            self.reason = f"the trace could not be read: {exc}"
            return None
        finally:
            self.discard()
        return _within(trace, self._within) if self._within else trace

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self._log.unlink()


class _NotifyObserver(Observer):
    def __init__(self, within: tuple[str, ...], *, waits: bool) -> None:
        from vx.trace.notify import Notifier

        self._notifier = Notifier(within, waits=waits)
        self.prefix = self._notifier.prefix
        self.pass_fds = self._notifier.pass_fds

    def spawned(self) -> None:
        self._notifier.spawned()

    def finish(self) -> Trace | None:
        trace = self._notifier.finish()
        self.reason = self._notifier.reason
        return trace


def observer(
    cwd: Path, *, path: str | None = None, tracer: str = "auto", within: tuple[str, ...] = ()
) -> Observer:
    """An observer for a command started in `cwd`; `path` is the PATH strace is looked up on,
    `tracer` the `VX_TRACER` choice; with `within` (directories) the `Trace` holds only paths
    under them. Raises TracingUnavailableError with the probe's reason."""
    probe = tracing_available(path, tracer)
    if not probe.ok:
        raise TracingUnavailableError(probe.reason)
    if probe.tracer == "seccomp":
        return _NotifyObserver(within, waits="waits" in probe.flags)
    return _StraceObserver(probe.flags, cwd, within)


def _within(trace: Trace, prefixes: tuple[str, ...]) -> Trace:
    """`trace` without the paths outside `prefixes` (a rename stays if either name is in)."""
    from vx.trace.parse import Trace

    def keep(paths: frozenset[str]) -> frozenset[str]:
        return frozenset(p for p in paths if p.startswith(prefixes))

    return Trace(
        reads=keep(trace.reads),
        writes=keep(trace.writes),
        execs=keep(trace.execs),
        renames=tuple(
            r for r in trace.renames if r[0].startswith(prefixes) or r[1].startswith(prefixes)
        ),
        unlinks=keep(trace.unlinks),
    )
