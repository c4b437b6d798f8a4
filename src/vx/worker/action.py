"""Run one leased action: lay out its input root in a fresh directory, run it there, report.

Where bubblewrap works the command runs inside it, seeing the input root (writable) and the
system's read-only directories, nothing else of this machine: a task that reads a file it did
not declare fails here as it would on any other worker. The process is spawned through
`vx.run.process`, like every task vx runs, so a timeout and a stop end its whole group.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from vx.events import Stream
from vx.remoteexec.messages import (
    ACTION_TYPE,
    DIGEST_TYPE,
    Action,
    ActionResult,
    Command,
    Directory,
)
from vx.remoteexec.tree import TreeBuilder, lay_out
from vx.run.process import ProcessSpec, run_process

if TYPE_CHECKING:
    from vx.cache.remote.reapi import Digest, ReapiCache
    from vx.run.groups.registry import ProcessRegistry

# What a sandboxed action sees of the host besides its input root, read-only where present.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")


def sandbox_works() -> str | None:
    """bwrap's path when the sandbox probe (`bwrap --ro-bind / / true`) passes here, else None
    (run unsandboxed)."""
    from vx.trace.probe import sandbox_available

    return shutil.which("bwrap") if sandbox_available().ok else None


class Runner:
    """Runs leased actions under `scratch`, one fresh directory each."""

    def __init__(
        self, cas: ReapiCache, scratch: Path, registry: ProcessRegistry, bwrap: str | None
    ) -> None:
        self.cas = cas
        self.scratch = scratch
        self.registry = registry
        self.bwrap = bwrap
        self.stop = threading.Event()

    def action_of(self, type_url: str, value: bytes) -> Action:
        """A lease's payload: the Action itself, or its digest to read from the CAS."""
        from vx.cache.remote.reapi import Digest

        if type_url == ACTION_TYPE:
            return Action.decode(value)
        if type_url == DIGEST_TYPE:
            return Action.decode(self.cas.read_blob(Digest.decode(value)))
        msg = f"a lease payload of type {type_url or 'none'} is not an action"
        raise ValueError(msg)

    def run(self, action: Action) -> ActionResult:
        command = Command.decode(self.cas.read_blob(action.command))
        self.scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="action-", dir=self.scratch))
        try:
            root = work / "root"
            lay_out(self._directory(action.input_root), root, self.cas.read_blob, self._directory)
            cwd = root / command.cwd
            cwd.mkdir(parents=True, exist_ok=True)
            for path in command.output_paths:
                (cwd / path).parent.mkdir(parents=True, exist_ok=True)
            out: list[str] = []
            err: list[str] = []

            def feed(stream: Stream, text: str) -> None:
                (out if stream is Stream.STDOUT else err).append(text)

            spec = ProcessSpec(
                command=self._shell(command, root, cwd),
                cwd=cwd,
                env=dict(command.env),
                timeout_ms=action.timeout_s * 1000 if action.timeout_s else None,
            )
            done = run_process(spec, feed, registry=self.registry)
            if done.spawn_error:
                err.append(done.spawn_error + "\n")
            return self._report(command, cwd, done.exit_code, "".join(out), "".join(err))
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _directory(self, digest: Digest) -> Directory:
        return Directory.decode(self.cas.read_blob(digest))

    def _shell(self, command: Command, root: Path, cwd: Path) -> str:
        """The line `sh -c` runs: the action's arguments, inside bubblewrap where it works."""
        argv = list(command.arguments)
        if self.bwrap is None:
            return shlex.join(argv)
        wrap = [self.bwrap, "--die-with-parent", "--unshare-pid", "--proc", "/proc"]
        wrap += ["--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108  a private tmpfs, not a shared path
        for system in _SYSTEM_DIRS:
            if Path(system).exists():
                wrap += ["--ro-bind", system, system]
        wrap += ["--bind", str(root), str(root), "--chdir", str(cwd), "--", *argv]
        return "exec " + shlex.join(wrap)

    def _report(self, command: Command, cwd: Path, code: int, out: str, err: str) -> ActionResult:
        """Upload what the action wrote at its output paths, and its logs."""
        builder = TreeBuilder(str(cwd))
        files: list[tuple[str, Digest, bool]] = []
        trees: list[tuple[str, Digest]] = []
        for path in command.output_paths:
            target = cwd / path
            if target.is_dir() and not target.is_symlink():
                trees.append((path, self.cas.write_blob(builder.tree(str(target)))))
            elif target.is_file():
                entry = builder.file_entry(path, str(target))
                files.append((path, entry.digest, entry.executable))
        for blob in builder.blobs.values():
            self.cas.write_blob(blob if isinstance(blob, bytes) else Path(blob).read_bytes())
        return ActionResult(
            exit_code=code,
            files=tuple(files),
            trees=tuple(trees),
            stdout=self.cas.write_blob(out.encode()),
            stderr=self.cas.write_blob(err.encode()),
        )
