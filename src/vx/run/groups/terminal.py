"""Handing the controlling terminal to an interactive task's process group and taking it back.

An interactive task gets a process group of its own inside vx's session, not a new session: a
process without a controlling terminal cannot open /dev/tty, where ssh, sudo, git credential
helpers and pinentry prompt. Made the terminal's foreground group, the task reads the terminal
and receives its Ctrl-C directly while vx, now in the background, does not; a prompt handles
Ctrl-C as it would under a shell, and vx learns of it only from the exit code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import termios

from vx.run.groups.registry import killpg


class Terminal:
    """A terminal vx holds in the foreground, with the modes it had before the hand-off."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._modes = termios.tcgetattr(fd)

    def give(self, pgid: int) -> None:
        """Make pgid the foreground group; wake it if it already read the terminal and stopped."""
        _set_foreground(self.fd, pgid)
        killpg(pgid, signal.SIGCONT)

    def take_back(self) -> None:
        """Put vx in front again and restore the modes a task may have left raw."""
        _set_foreground(self.fd, os.getpgrp())
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._modes)


def foreground_terminal(fd: int) -> Terminal | None:
    """The terminal on fd if vx is its foreground group; None off a terminal or in the back."""
    try:
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return Terminal(fd)
    except (OSError, termios.error):
        return None
    return None


def _set_foreground(fd: int, pgid: int) -> None:
    # Once the task is in front vx is a background group, and tcsetpgrp from there raises
    # SIGTTOU (stopping vx) unless the calling thread blocks it.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pgid)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
