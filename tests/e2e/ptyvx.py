"""`vx` on a real pseudo-terminal, for the parts of a run that only a terminal gets."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from typing import TYPE_CHECKING

from tests.conftest import VX, base_env

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path


class PtyVx:
    """One `vx` whose stdin, stderr (and stdout, unless redirected) are a 100x40 terminal.

    `stdout_to` sends stdout to a file instead, as `vx run > out.txt` does, so what still
    reaches the terminal is what vx writes to stderr.
    """

    def __init__(
        self,
        args: Sequence[str],
        cwd: Path,
        *,
        home: Path,
        env: Mapping[str, str] | None = None,
        stdout_to: Path | None = None,
    ) -> None:
        full = base_env({"TERM": "xterm-256color", "HOME": str(home), **(env or {})})
        pid, fd = pty.fork()
        if pid == 0:  # the child becomes vx; nothing here may return into pytest
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
                os.chdir(cwd)
                if stdout_to is not None:
                    out = os.open(stdout_to, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.dup2(out, 1)
                    os.close(out)
                os.execve(sys.executable, [sys.executable, str(VX), *args], full)  # noqa: S606
            finally:
                os._exit(127)
        self.pid = pid
        self.fd = fd
        self.screen = b""
        self.code: int | None = None

    @property
    def text(self) -> str:
        return self.screen.decode("utf-8", "replace")

    def read_until(self, needle: str, timeout: float = 30) -> str:
        """Read the terminal until `needle` shows; fail with the screen so far if it never does."""
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"never saw {needle!r} on the terminal:\n{self.text}")
        return self.text

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def finish(self, timeout: float = 60) -> int:
        """Read to the end, reap vx, and return its exit code (negative: died of a signal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            pass
        if time.monotonic() >= deadline:
            os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: every writer to the terminal has gone
            return False
        self.screen += data
        return bool(data)


_CONTROL = re.compile(r"\x1b\[([\d;?]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+|\x1b")


def final_screen(text: str) -> str:
    """The lines a terminal shows once `text` has been played on it: the scrollback a user reads.

    Enough of a terminal for vx's live region: newline, carriage return, cursor up (`ESC[nA`)
    and erase line (`ESC[2K`); colours and any other escape leave no mark.
    """
    lines: list[str] = [""]
    row = col = 0
    for match in _CONTROL.finditer(text):
        piece = match.group(0)
        if piece == "\n":
            row += 1
            col = 0
            if row == len(lines):
                lines.append("")
        elif piece == "\r":
            col = 0
        elif match.group(2) == "A":
            row = max(row - int(match.group(1).split(";")[0] or 1), 0)
        elif match.group(2) == "K":
            lines[row] = ""
        elif not piece.startswith("\x1b"):
            line = lines[row].ljust(col)
            lines[row] = line[:col] + piece + line[col + len(piece) :]
            col += len(piece)
    return "\n".join(lines)
