"""The commands a key declares (`inputs.runtime`, `workspaceRuntime`), run and digested once a run.

A probe is a key input, not a task: it runs before anything is scheduled, prints nothing, and
its stdout and exit status are all that is kept. That is why it lives here and not beside the
task processes in `run/process.py`. It still gets its own session, so a timed-out probe's
children die with it instead of holding the pipe open.
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import TYPE_CHECKING

from vx.cache.key import digest_bytes
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

DEFAULT_TIMEOUT_S = 30.0


class ProbeError(UserError):
    """A runtime command that could not give an answer: it hung, or `sh` would not start."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.REFUSED, message)


class RuntimeProbe:
    """Runs `sh -c <command>` in a directory and digests its exit status and stdout, memoised."""

    __slots__ = ("_env", "_memo", "_timeout")

    def __init__(
        self, *, env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._timeout = timeout
        self._memo: dict[tuple[str, str], str | ProbeError] = {}

    @property
    def runs(self) -> int:
        """How many commands this probe has started: once per (command, directory)."""
        return len(self._memo)

    def digest(self, command: str, cwd: Path) -> str:
        """The digest of what `command` prints in `cwd`; a failure is remembered, not re-run."""
        slot = (command, os.fspath(cwd))
        if slot not in self._memo:
            try:
                self._memo[slot] = self._run(command, cwd)
            except ProbeError as exc:
                self._memo[slot] = exc
        found = self._memo[slot]
        if isinstance(found, ProbeError):
            raise found
        return found

    def _run(self, command: str, cwd: Path) -> str:
        try:
            proc = subprocess.Popen(
                ["sh", "-c", command],
                cwd=cwd,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProbeError(f"cannot run `{command}` in {cwd}: {exc.strerror}") from None
        try:
            out, _ = proc.communicate(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ProbeError(
                f"`{command}` did not finish within {self._timeout:g}s in {cwd}"
                " — make it quicker or drop it from the task's inputs"
            ) from None
        return digest_bytes(b"%d\0" % proc.returncode + out)
