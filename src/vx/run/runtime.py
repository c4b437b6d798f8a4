"""The commands a key declares (`inputs.runtime`, `workspaceRuntime`), run and digested once a run.

A probe is a key input, not a task: it runs before anything is scheduled, prints nothing, and
its stdout and exit status are all that is kept (`cache/inputs.py` asks for the digest and
knows nothing of processes). `run/process.run_captured` starts it in a session of its own, so
a timed-out probe's children die with it instead of holding the pipe open.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.cache.inputs import ProbeError
from vx.cache.key import digest_bytes

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

DEFAULT_TIMEOUT_S = 30.0


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
        from vx.run.process import run_captured

        try:
            done = run_captured(
                ["sh", "-c", command], cwd=cwd, env=self._env, timeout_s=self._timeout
            )
        except OSError as exc:
            raise ProbeError(f"cannot run `{command}` in {cwd}: {exc.strerror}") from None
        if done is None:
            raise ProbeError(
                f"`{command}` did not finish within {self._timeout:g}s in {cwd}"
                " — make it quicker or drop it from the task's inputs"
            )
        return digest_bytes(b"%d\0" % done.returncode + done.stdout)
