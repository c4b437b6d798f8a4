"""Whether a tracer (seccomp notification, or `strace`) and the sandbox (`bwrap`) can start on
this host, probed once.

Each needs the kernel's help (seccomp listeners; ptrace; user namespaces) that containers often
withhold, so being on PATH proves nothing: each probe runs its tracer or tool on `true` and keeps
the first line it complained with as the reason.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys

from vx.util.record import Record

_PROBE_TIMEOUT_S = 20.0
_WAIT_OUT_S = 1.0  # a kernel that ends the wait does so within a millisecond


class Probe(Record):
    """A probe's verdict: `ok`, or the reason it is not (one line, for `vx info` and errors)."""

    ok: bool
    reason: str = ""
    # The flags the tool works with here (strace without `--seccomp-bpf` where it is too old;
    # "waits" where the seccomp notifier's thread may wait in the kernel's receive alone).
    flags: tuple[str, ...] = ()
    # Which tracer: "seccomp" (vx's own notifier) or "strace".
    tracer: str = ""


TRACERS = ("auto", "seccomp", "strace")
"""`VX_TRACER`'s values: the notifier where it works, else strace; or one of them only."""


# `-z`: successful calls only (a failed one changed nothing; most are the loader's probes).
STRACE_FLAGS = ("-f", "--seccomp-bpf", "-qq", "-z")
_STRACE_FALLBACK = ("-f", "-qq")


@functools.cache
def tracing_available(path: str | None = None, tracer: str = "auto") -> Probe:
    """Which tracer works here: seccomp notification (no tool needed, the cheaper) unless
    `tracer` says "strace"; strace where the notifier cannot start, unless it says "seccomp".
    `path` is the PATH to search for strace (vx's own by default)."""
    if tracer not in TRACERS:
        allowed = ", ".join(TRACERS)
        return Probe(ok=False, reason=f"VX_TRACER={tracer} is not one of {allowed}")
    notify = _notify_probe() if tracer != "strace" else None
    if notify is not None and (notify.ok or tracer == "seccomp"):
        return notify
    found = _strace_probe(path)
    if not found.ok and notify is not None:
        return Probe(ok=False, reason=f"{notify.reason}; and {found.reason}")
    return found


@functools.cache
def _notify_probe() -> Probe:
    """Can vx's notifier see `true` run? (Linux 5.5 or later, seccomp not denied.)"""
    if sys.platform != "linux":
        return Probe(ok=False, reason=f"tracing needs Linux (this is {sys.platform})")
    from vx.trace.notify import Notifier, NotifyUnavailableError

    try:
        notifier = Notifier(waits=True)
    except NotifyUnavailableError as exc:
        return Probe(ok=False, reason=f"seccomp notification: {exc}")
    true = shutil.which("true") or "/bin/true"
    try:
        subprocess.run(
            [*notifier.prefix, true],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
            pass_fds=notifier.pass_fds,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(ok=False, reason=f"seccomp notification: {exc}")
    finally:
        notifier.spawned()
    trace = notifier.finish()
    if trace is None or not trace.execs:
        return Probe(ok=False, reason=f"seccomp notification: {notifier.reason or 'saw nothing'}")
    # Its thread waited in the kernel's receive alone: "waits" where that wait ended with the
    # command (else tasks' threads poll first, and this one thread stays parked).
    waits = notifier.ended(_WAIT_OUT_S)
    return Probe(ok=True, tracer="seccomp", flags=("waits",) if waits else ())


def _strace_probe(path: str | None) -> Probe:
    """Can `strace -f` follow `true` here?"""
    if sys.platform != "linux":
        return Probe(ok=False, reason=f"tracing needs Linux (this is {sys.platform})")
    strace = shutil.which("strace", path=path)
    if strace is None:
        return Probe(ok=False, reason="strace is not on PATH (Debian: apt-get install strace)")
    reason = ""
    for flags in (STRACE_FLAGS, _STRACE_FALLBACK):
        reason = _try([strace, *flags, "-o", "/dev/null", "true"])
        if not reason:
            return Probe(ok=True, flags=(strace, *flags), tracer="strace")
    return Probe(ok=False, reason=f"strace cannot trace here: {reason}")


@functools.cache
def sandbox_available(path: str | None = None) -> Probe:
    """Can `bwrap --ro-bind / / true` start here? `path` is the PATH to search."""
    if sys.platform != "linux":
        return Probe(
            ok=False, reason=f"the sandbox needs Linux with bubblewrap (this is {sys.platform})"
        )
    bwrap = shutil.which("bwrap", path=path)
    if bwrap is None:
        return Probe(ok=False, reason="bwrap is not on PATH (Debian: apt-get install bubblewrap)")
    reason = _try([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"])
    if reason:
        return Probe(ok=False, reason=f"bwrap cannot start here: {reason}")
    return Probe(ok=True, flags=(bwrap,))


def _try(argv: list[str]) -> str:
    """Run argv quietly; "" when it exited 0, else the first line it printed (or its status)."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[0] if lines else f"exit {done.returncode}"
