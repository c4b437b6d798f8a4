"""Whether the tracer (`strace`) and the sandbox (`bwrap`) can start on this host, probed once.

Both need the kernel's help (ptrace; user namespaces) that containers often withhold, so being
on PATH proves nothing: each probe runs the tool on `true` and keeps the first line it
complained with as the reason.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys

from vx.util.record import Record

_PROBE_TIMEOUT_S = 20.0


class Probe(Record):
    """A probe's verdict: `ok`, or the reason it is not (one line, for `vx info` and errors)."""

    ok: bool
    reason: str = ""
    # The flags the tool works with here (strace without `--seccomp-bpf` where it is too old).
    flags: tuple[str, ...] = ()


# `-z`: successful calls only (a failed one changed nothing; most are the loader's probes).
STRACE_FLAGS = ("-f", "--seccomp-bpf", "-qq", "-z")
_STRACE_FALLBACK = ("-f", "-qq")


@functools.cache
def tracing_available(path: str | None = None) -> Probe:
    """Can `strace -f` follow `true` here? `path` is the PATH to search (vx's own by default)."""
    if sys.platform != "linux":
        return Probe(ok=False, reason=f"tracing needs Linux (this is {sys.platform})")
    strace = shutil.which("strace", path=path)
    if strace is None:
        return Probe(ok=False, reason="strace is not on PATH (Debian: apt-get install strace)")
    reason = ""
    for flags in (STRACE_FLAGS, _STRACE_FALLBACK):
        reason = _try([strace, *flags, "-o", "/dev/null", "true"])
        if not reason:
            return Probe(ok=True, flags=(strace, *flags))
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
