"""The argv prefix that runs a task inside bubblewrap, seeing only what `exec.sandbox` grants.

The system is there read-only; the workspace is replaced by an empty directory into which the
grants are bound back: each read grant read-only, each write grant read-write, and the root's
and the project's `node_modules` read-only. A read of anything else fails as a missing file
would (`ENOENT`), a write as a read-only file system would, so a task that strays fails and
saves nothing. A write grant is bound as the directory its glob starts in (`dist/**` binds
`dist/`, a file such as `out.txt` its directory), so every file beside it is writable too.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from vx.trace.probe import sandbox_available
from vx.util.globs import fixed_prefix, has_magic, normalize

if TYPE_CHECKING:
    from collections.abc import Sequence


class SandboxUnavailableError(Exception):
    """bwrap cannot start here; the message is the probe's reason."""


def sandbox_prefix(
    root: Path,
    project: Path,
    read: Sequence[str],
    write: Sequence[str],
    *,
    path: str | None = None,
) -> tuple[str, ...]:
    """The bwrap argv for a task in `project` (inside the workspace at `root`); the write
    grants' directories are made first, since a mount needs something to mount."""
    probe = sandbox_available(path)
    if not probe.ok:
        raise SandboxUnavailableError(probe.reason)
    base, home = os.fspath(root), os.fspath(project)
    argv = [*probe.flags, "--die-with-parent", "--ro-bind", "/", "/"]
    scratch = "/tmp"  # noqa: S108 -- a fresh, private tmpfs inside the sandbox, not a file
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", scratch, "--tmpfs", base]
    argv += ["--dir", home]
    for modules in dict.fromkeys((f"{base}/node_modules", f"{home}/node_modules")):
        if Path(modules).is_dir():
            argv += ["--ro-bind", modules, modules]
    for grant in read:
        target = _read_target(home, grant)
        if os.path.lexists(target):
            argv += ["--ro-bind", target, target]
    for grant in write:
        target = _write_target(home, grant)
        Path(target).mkdir(parents=True, exist_ok=True)
        argv += ["--bind", target, target]
    return (*argv, "--chdir", home)


def _read_target(home: str, grant: str) -> str:
    prefix = "" if grant == "." else fixed_prefix(grant)
    return posixpath.normpath(posixpath.join(home, prefix)) if prefix else home


def _write_target(home: str, grant: str) -> str:
    body = normalize(grant.removeprefix("!"))
    prefix = fixed_prefix(grant)
    if prefix == body and not has_magic(body):
        prefix = posixpath.dirname(prefix)  # a file-shaped grant: its directory
    return posixpath.normpath(posixpath.join(home, prefix)) if prefix else home
