"""The argv prefix that starts a task under `strace` (the tracer where vx's seccomp notifier
cannot start): a prefix, so `run/process.py` stays the one module that spawns.

Only the calls that name a file the task reads, writes, runs, renames or removes are traced, and
the calls that change a process's working directory or make a process; `stat`, `access` and
`readlink` (most of a node or Python start-up's calls) are left out, which keeps a file-heavy
task's overhead down: with `--seccomp-bpf` an untraced call never stops the process. A `?`
marks a call some architectures lack (arm64 has no `open`), so strace skips it there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

TRACED_CALLS = (
    "?open",
    "openat",
    "?openat2",
    "?creat",
    "truncate",
    "execve",
    "execveat",
    "chdir",
    "fchdir",
    "?rename",
    "renameat",
    "?renameat2",
    "?unlink",
    "unlinkat",
    "?rmdir",
    "?link",
    "linkat",
    "?symlink",
    "symlinkat",
    "clone",
    "?clone3",
    "?fork",
    "?vfork",
)


def strace_argv(flags: tuple[str, ...], log: Path) -> tuple[str, ...]:
    """The argv to put before `sh -c …` so its whole tree is traced into `log`; `flags` are
    the probe's (strace's path and the options it works with here)."""
    return (
        *flags,
        "-e",
        "trace=" + ",".join(TRACED_CALLS),
        "-e",
        "signal=none",
        "-o",
        os.fspath(log),
    )
