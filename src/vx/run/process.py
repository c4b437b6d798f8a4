"""The one module that spawns processes: a task's own group, arrival-ordered capture and kill
ladder; and `run_captured` for the short commands vx asks before or beside a run (a key's
runtime probe, `vx upgrade` asking the new binary its version). tests/test_spawns.py holds
the few other places that may start one, and why."""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

from vx.events import Stream
from vx.run.groups.registry import empty_group, killpg
from vx.run.groups.terminal import foreground_terminal
from vx.util.record import Frozen, Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from resource import struct_rusage

    from vx.run.groups.registry import ProcessRegistry
    from vx.run.groups.terminal import Terminal

    OnOutput = Callable[[Stream, str], None]

SHELL = "/bin/sh"
_GATE = 'read -r {0} || exit 125; exec </dev/null; exec "$@"'
"""What a captured task's shell runs first: it waits on stdin, a pipe, for vx's word that the
task's group is registered (and so known to the lifeline), then becomes the task's argv (its
prefix, if any, then `sh -c COMMAND`) with /dev/null for stdin. Should vx die before the word,
the pipe ends and the command never runs: no task can start that a SIGKILL of vx would leave
behind. `{0}` is a variable the task's environment does not hold, so the wait changes none."""
_GATE_LINE = "read -r {0} || exit 125; unset {0}; exec </dev/null; "
"""The same wait put before the command on its first line, after the prefix if any: the shell
that waits is the one that runs the command, which saves a shell's exec per task (about half a
millisecond of CPU, a sixth of a tiny task's). The command's lines keep their numbers, `$0` and
the error messages are those of `sh -c COMMAND`, and a first line that does not parse fails as
it would alone, before the wait, having run nothing. Only with dash: bash's syntax errors quote
the line, which would show the gate."""
_READ_SIZE = 1 << 16
_DRAIN_S = 0.2  # how long pipes a backgrounded leftover holds open are read after the task exits
_POLL_S = 0.05  # exit polling where there is no pidfd to wait on


class ProcessSpec(Frozen):
    """What to run: `sh -c command` in cwd with exactly env; the timeout and kill grace in ms.

    An interactive task inherits vx's stdin, stdout and stderr and is captured by nobody.
    `prefix` is an argv put before the shell, a wrapper that execs it (a tracer, the sandbox):
    it runs in the task's group and dies with it. `pass_fds` stay open, at their numbers, in a
    captured task's process (the seccomp tracer's socket, which its launcher names in `prefix`).
    """

    __slots__ = (
        "command",
        "cwd",
        "env",
        "interactive",
        "kill_grace_ms",
        "pass_fds",
        "prefix",
        "timeout_ms",
    )
    command: str
    cwd: Path
    env: Mapping[str, str]
    timeout_ms: int | None
    kill_grace_ms: int
    interactive: bool
    prefix: tuple[str, ...]
    pass_fds: tuple[int, ...]

    def __init__(
        self,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        timeout_ms: int | None = None,
        kill_grace_ms: int = 2000,
        *,
        interactive: bool = False,
        prefix: tuple[str, ...] = (),
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        if timeout_ms is not None and timeout_ms <= 0:
            raise ValueError(f"timeout_ms must be positive: {timeout_ms}")
        if kill_grace_ms < 0:
            raise ValueError(f"kill_grace_ms must not be negative: {kill_grace_ms}")
        if interactive and pass_fds:
            raise ValueError("an interactive task is handed no descriptors: it is never traced")
        self._init(
            command=command,
            cwd=cwd,
            env=env,
            timeout_ms=timeout_ms,
            kill_grace_ms=kill_grace_ms,
            interactive=interactive,
            prefix=prefix,
            pass_fds=pass_fds,
        )


class ProcessResult(Record):
    """How a task process ended, as a shell would report it (a signal death is 128 + signal).

    A timed-out task reads 143, or 137 when it outlived the grace and was killed.
    `spawn_error` is set when no process started; the exit code is then 127. `peak_rss_bytes`
    never reads below vx's own size at the spawn: Linux counts the parent's high-water mark,
    from before the exec, in the child's.
    """

    exit_code: int
    duration_ms: float
    cpu_ms: float | None = None
    peak_rss_bytes: int | None = None
    timed_out: bool = False
    signal: int | None = None
    spawn_error: str | None = None


class Captured(Record):
    """How a short command ended: its exit code (negative: the signal), stdout and stderr."""

    returncode: int
    stdout: bytes
    stderr: bytes


class SpawnError(Exception):
    """The shell could not be started (a missing cwd, a command holding a NUL byte)."""


class _Reaped(Record):
    status: int
    ended: float
    cpu_ms: float
    peak_rss_bytes: int


class ProcessHandle:
    """A started task process. `wait()` drives it (reads, deadlines, reaping) on the caller's
    thread and returns the same result when called again; `terminate()` may come from any thread.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        spec: ProcessSpec,
        on_output: OnOutput,
        *,
        pipes: Mapping[int, Stream],
        wake: tuple[int, int],
        registry: ProcessRegistry,
        terminal: Terminal | None,
        clock: Callable[[], float],
        started: float,
    ) -> None:
        self.pid = popen.pid
        self.pgid = popen.pid
        self._popen = popen
        self._spec = spec
        self._on_output = on_output
        self._registry = registry
        self._terminal = terminal
        self._clock = clock
        self._started = started
        self._lock = threading.Lock()
        self._readers = {fd: (stream, _decoder()) for fd, stream in pipes.items()}
        self._wake_r, self._wake_w = wake
        for fd in wake:
            os.set_blocking(fd, False)  # terminate() writes under the lock: it must never block
        self._pidfd = _open_pidfd(self.pid)
        self._closed = False
        self._deadline = None if spec.timeout_ms is None else started + spec.timeout_ms / 1000
        self._kill_at: float | None = None
        self._timed_out = False
        self._killed = False
        self._reaped: _Reaped | None = None
        self._result: ProcessResult | None = None

    def terminate(self, grace_ms: int | None = None) -> None:
        """SIGTERM the group now and SIGKILL it after grace_ms (the spec's grace by default)."""
        grace = self._spec.kill_grace_ms if grace_ms is None else grace_ms
        with self._lock:
            if self._reaped is not None or self._closed:
                return
            self._start_ladder(grace, self._clock())
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")

    def wait(self) -> ProcessResult:
        """Run the process to its end; on any exception (an on_output that raised) kill it first."""
        if self._result is None:
            try:
                reaped = self._drive()
                self._clean_group()
            except BaseException:
                self._abort()
                raise
            finally:
                self._close()
            self._result = self._build_result(reaped)
        return self._result

    def _drive(self) -> _Reaped:
        with selectors.DefaultSelector() as sel:
            for fd in self._readers:
                sel.register(fd, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            if self._pidfd is not None:
                sel.register(self._pidfd, selectors.EVENT_READ)
            drain_until = 0.0
            while True:
                now = self._clock()
                reaped = self._reaped
                if reaped is None:
                    self._enforce_deadlines(now)
                elif not self._readers or now >= drain_until:
                    return reaped
                exited = self._pidfd is None
                for key, _ in sel.select(self._select_timeout(now, drain_until)):
                    if key.fd == self._pidfd:
                        exited = True
                    elif key.fd == self._wake_r:
                        with contextlib.suppress(BlockingIOError):
                            os.read(self._wake_r, 512)
                    else:
                        self._read(key.fd, sel)
                if self._reaped is None and exited and self._reap(block=self._pidfd is not None):
                    drain_until = self._clock() + _DRAIN_S
                    if self._pidfd is not None:
                        sel.unregister(self._pidfd)

    def _select_timeout(self, now: float, drain_until: float) -> float | None:
        if self._reaped is not None:
            return max(0.0, drain_until - now)
        moments = [self._deadline if not self._timed_out else None]
        moments.append(self._kill_at if not self._killed else None)
        if self._pidfd is None:
            moments.append(now + _POLL_S)
        due = [m for m in moments if m is not None]
        return max(0.0, min(due) - now) if due else None

    def _enforce_deadlines(self, now: float) -> None:
        with self._lock:
            if self._deadline is not None and not self._timed_out and now >= self._deadline:
                self._timed_out = True
                self._start_ladder(self._spec.kill_grace_ms, now)
            if self._kill_at is not None and not self._killed and now >= self._kill_at:
                self._killed = True
                killpg(self.pgid, signal.SIGKILL)

    def _start_ladder(self, grace_ms: int, now: float) -> None:
        killpg(self.pgid, signal.SIGTERM)
        kill_at = now + grace_ms / 1000
        if self._kill_at is None or kill_at < self._kill_at:
            self._kill_at = kill_at

    def _read(self, fd: int, sel: selectors.BaseSelector) -> None:
        stream, decoder = self._readers[fd]
        data = os.read(fd, _READ_SIZE)
        if not data:
            sel.unregister(fd)
            self._close_reader(fd)
            return
        text = decoder.decode(data)
        if text:
            self._on_output(stream, text)

    def _close_reader(self, fd: int) -> None:
        stream, decoder = self._readers.pop(fd)
        os.close(fd)
        tail = decoder.decode(b"", final=True)
        if tail:
            self._on_output(stream, tail)

    def _reap(self, *, block: bool) -> bool:
        pid, status, rusage = os.wait4(self.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        self._mark_reaped(status, rusage)
        return True

    def _mark_reaped(self, status: int, rusage: struct_rusage) -> None:
        cpu_ms = (rusage.ru_utime + rusage.ru_stime) * 1000
        # ru_maxrss is KiB on Linux and bytes on macOS.
        rss = rusage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        with self._lock:
            self._reaped = _Reaped(status, self._clock(), cpu_ms, rss)
        # Tell Popen the child is gone so it never waits on a pid number the kernel may reuse.
        self._popen.returncode = os.waitstatus_to_exitcode(status)
        if self._terminal is not None:
            self._terminal.take_back()

    def _clean_group(self) -> None:
        """The task has exited; whatever it left in its group gets the same ladder."""
        while self._readers:
            self._close_reader(next(iter(self._readers)))
        empty_group(self.pgid, grace_s=self._spec.kill_grace_ms / 1000, clock=self._clock)

    def _abort(self) -> None:
        killpg(self.pgid, signal.SIGKILL)
        if self._reaped is None:
            with contextlib.suppress(ChildProcessError):
                _, status, rusage = os.wait4(self.pid, 0)
                self._mark_reaped(status, rusage)
        empty_group(self.pgid, grace_s=0, clock=self._clock)

    def _close(self) -> None:
        for reader in list(self._readers):
            os.close(reader)
        self._readers.clear()
        with self._lock:
            self._closed = True
            os.close(self._wake_r)
            os.close(self._wake_w)
            if self._pidfd is not None:
                os.close(self._pidfd)
            self._pidfd = None
        self._registry.unregister(self)

    def _build_result(self, reaped: _Reaped) -> ProcessResult:
        code = os.waitstatus_to_exitcode(reaped.status)
        signo = -code if code < 0 else None
        exit_code = 128 + signo if signo is not None else code
        if self._timed_out:
            exit_code = 128 + (signal.SIGKILL if signo == signal.SIGKILL else signal.SIGTERM)
        return ProcessResult(
            exit_code=exit_code,
            duration_ms=(reaped.ended - self._started) * 1000,
            cpu_ms=reaped.cpu_ms,
            peak_rss_bytes=reaped.peak_rss_bytes,
            timed_out=self._timed_out,
            signal=signo,
        )


def start_process(
    spec: ProcessSpec,
    on_output: OnOutput,
    *,
    registry: ProcessRegistry,
    clock: Callable[[], float] = time.monotonic,
    terminal_fd: int = 0,
) -> ProcessHandle:
    """Spawn `sh -c` for spec and register its group; raise SpawnError when nothing started.

    A captured task gets /dev/null for stdin and a session of its own, so a terminal's Ctrl-C
    reaches vx alone and vx passes it on once. An interactive task is handed terminal_fd when
    vx holds it in the foreground (see `vx.run.groups.terminal`).
    """
    argv = [*spec.prefix, SHELL, "-c", spec.command]
    registry.before_spawn()
    gate: int | None = None
    started = clock()
    opened: list[int] = []
    pipes: dict[int, Stream] = {}
    terminal: Terminal | None = None
    try:
        wake = _pipe(opened)
        if spec.interactive:
            terminal = foreground_terminal(terminal_fd)
            popen = subprocess.Popen(
                argv,
                cwd=spec.cwd,
                env=dict(spec.env),
                process_group=0,
            )
        else:
            (out_r, out_w), (err_r, err_w) = _pipe(opened), _pipe(opened)
            gate_r, gate = _pipe(opened)
            pipes = {out_r: Stream.STDOUT, err_r: Stream.STDERR}
            try:
                popen = subprocess.Popen(
                    _gated(spec, argv),
                    cwd=spec.cwd,
                    env=dict(spec.env),
                    stdin=gate_r,
                    stdout=out_w,
                    stderr=err_w,
                    start_new_session=True,
                    pass_fds=spec.pass_fds,
                )
            finally:
                for fd in (out_w, err_w, gate_r):
                    opened.remove(fd)
                    os.close(fd)
    except (OSError, ValueError) as exc:
        for fd in opened:
            os.close(fd)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        msg = f"cannot start {SHELL} in {spec.cwd}: {reason}"
        raise SpawnError(msg) from exc
    if terminal is not None:
        terminal.give(popen.pid)
    handle = ProcessHandle(
        popen,
        spec,
        on_output,
        pipes=pipes,
        wake=wake,
        registry=registry,
        terminal=terminal,
        clock=clock,
        started=started,
    )
    registry.register(handle)
    if gate is not None:
        with contextlib.suppress(OSError):  # a task killed already: its shell is gone
            os.write(gate, b"\n")
        os.close(gate)
    return handle


def run_process(
    spec: ProcessSpec,
    on_output: OnOutput,
    *,
    registry: ProcessRegistry,
    clock: Callable[[], float] = time.monotonic,
    terminal_fd: int = 0,
) -> ProcessResult:
    """Run one task process to its end on this thread; a failed spawn is a result, not a raise."""
    try:
        handle = start_process(
            spec, on_output, registry=registry, clock=clock, terminal_fd=terminal_fd
        )
    except SpawnError as exc:
        return ProcessResult(exit_code=127, duration_ms=0.0, spawn_error=str(exc))
    return handle.wait()


def run_captured(
    argv: Sequence[str | Path],
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    keep_stderr: bool = False,
) -> Captured | None:
    """Run a short command to its end in a session of its own, stdin from /dev/null; None when
    it outlived `timeout_s`. OSError when it could not start.

    On a timeout, or anything raised while waiting (a Ctrl-C reaches vx's session only), the
    command's whole session is killed and reaped: nothing it started outlives it or holds its
    pipes open. stderr goes to /dev/null unless `keep_stderr`.
    """
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if keep_stderr else subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_session(proc)
        return None
    except BaseException:
        _kill_session(proc)
        raise
    return Captured(proc.returncode, out, err or b"")


def run_probe(
    argv: Sequence[str | Path], *, timeout_s: float, head: int = 1 << 16
) -> Captured | None:
    """Run a program that may leave something running (`vx upgrade`'s probe of a new binary)
    to its end; None when it outlived `timeout_s`. OSError when it could not start.

    It writes to files, not pipes: a pipe is read to its end, and a daemon it left in a session
    of its own would hold that end for as long as it lives. So the wait is on the program
    alone; its process group is killed before it is reaped, and the first `head` bytes of each
    stream are kept. Ctrl-C and TERM are held off while it starts, so none arrives between the
    fork and knowing its pid (the program inherits the mask; SIGKILL ends it regardless).
    """
    import tempfile

    held = {signal.SIGINT, signal.SIGTERM}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            child = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        except OSError:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
            raise
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
            exited = _exited_within(child, timeout_s)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        if not exited:
            return None
        out.seek(0)
        err.seek(0)
        return Captured(child.returncode, out.read(head), err.read(head))


def _exited_within(child: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether the child exits within `seconds`, left unreaped (WNOWAIT) so its pid, and with
    it its group's id, cannot be reused before the group is killed."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # macOS before Python 3.13: reaped here; its group is signalled after
        try:
            child.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + seconds
    pause = 0.001
    while waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)
    return True


def _kill_session(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the session's group and reap its leader (the group outlives a leader that exited)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def _gated(spec: ProcessSpec, argv: list[str]) -> list[str]:
    """The argv of a captured task: the gate, then the task.

    With dash the gate is the command's own first line, behind the prefix (a tracer, the
    sandbox): the prefix then starts before vx's word, but runs nothing of the task's until the
    shell it execs has read it, and ends with that shell should the word never come."""
    var = "_"
    while var in spec.env:
        var += "_"
    if not _shell_is_dash():
        return [SHELL, "-c", _GATE.format(var), SHELL, *argv]
    return [*spec.prefix, SHELL, "-c", _GATE_LINE.format(var) + spec.command]


@functools.cache
def _shell_is_dash() -> bool:
    """Whether the shell is dash, whose messages never quote a line of the script and which
    keeps no `$_` of its own (bash does both)."""
    from pathlib import Path  # loaded already by every run that spawns a task

    return Path(SHELL).resolve().name == "dash"


def _pipe(opened: list[int]) -> tuple[int, int]:
    r, w = os.pipe()
    opened += (r, w)
    return r, w


def _decoder() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _open_pidfd(pid: int) -> int | None:
    if sys.platform != "linux":
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None
