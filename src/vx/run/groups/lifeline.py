"""The lifeline: a small shell that outlives a SIGKILL of vx and then kills the run's task groups.

A SIGKILL gives vx no chance to stop anything, so something else must notice it died. The
lifeline is one `sh` per run, in a session of its own, reading a pipe whose only writer is vx:
vx tells it each task group as it starts (`+ pgid`) and once it is empty (`- pgid`). When the
pipe reaches end of file without the closing word (`q`), vx is gone, and the lifeline SIGKILLs
every group still on its list.

This stands in for `PR_SET_PDEATHSIG`, which was measured and set aside (see docs/cli.md,
"Stopping a run"): it must be set inside each child, between fork and exec, which costs a
`preexec_fn` (a full fork instead of vfork, and Python in the child) or an exec shim such as
`setpriv` on every spawn; it fires when the *thread* that forked exits, and vx forks on worker
threads that end before the servers they started; and it reaches the shell alone, not what
the shell started. The lifeline costs one spawn per run, a short write per task, and it leaves
the tasks exactly as they were.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

# Removal keeps the list space-delimited on both sides, so ` 12 ` never matches inside ` 123 `.
_SCRIPT = """trap '' INT TERM HUP
live=' '
while read -r op g; do
  case $op in
    +) live="$live$g " ;;
    -) case $live in *" $g "*) live="${live%% $g *} ${live#* $g }" ;; esac ;;
    q) exit 0 ;;
  esac
done
for g in $live; do kill -s KILL -- "-$g"; done 2>/dev/null
"""
_SHELL = "/bin/sh"
_EXIT_WAIT_S = 1.0


class Lifeline:
    """The running lifeline shell and the write end of its pipe.

    Writes never block: should the shell stop reading (stopped, or gone), a word that does not
    fit is dropped and the run goes on without this safety net.
    """

    def __init__(self) -> None:
        read_end, self._fd = os.pipe()
        try:
            self._popen: subprocess.Popen[bytes] | None = subprocess.Popen(
                [_SHELL, "-c", _SCRIPT],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={},
                start_new_session=True,
            )
        except OSError:
            os.close(self._fd)
            self._popen = None
        finally:
            os.close(read_end)
        if self._popen is not None:
            os.set_blocking(self._fd, False)
        self.pid = self._popen.pid if self._popen is not None else None

    def add(self, pgid: int) -> None:
        """A task group now exists."""
        self._say(f"+ {pgid}\n")

    def drop(self, pgid: int) -> None:
        """A task group is empty: the lifeline must never signal its number again."""
        self._say(f"- {pgid}\n")

    def close(self, *, release: bool) -> None:
        """Hang up and reap the shell; with release False, it first kills what is on its list."""
        if self._popen is None:
            return
        if release:
            self._say("q\n")
        popen, self._popen = self._popen, None
        os.close(self._fd)
        try:
            popen.wait(_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()

    def _say(self, word: str) -> None:
        if self._popen is not None:
            with contextlib.suppress(OSError):
                os.write(self._fd, word.encode())
