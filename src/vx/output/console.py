"""Where a run's text meets a stream: the colour decision, EPIPE-safe writes, ANSI stripping."""

from __future__ import annotations

import errno
import io
import os
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

_ESC = "\x1b"
_CSI_8BIT = "\x9b"


def decide_color(flag: bool | None, env: Mapping[str, str], is_tty: bool) -> bool:
    """Decide colour once: an explicit flag, then NO_COLOR, then FORCE_COLOR, then the terminal.

    An empty NO_COLOR means nothing (no-color.org); FORCE_COLOR's `0` and `false` are its
    "off", as supports-color and Node read it, and every other value, empty included, is "on".
    """
    if flag is not None:
        return flag
    if env.get("NO_COLOR"):
        return False
    force = env.get("FORCE_COLOR")
    if force is not None:
        return force.strip().lower() not in {"0", "false"}
    return is_tty


def _stream_closed(stream: TextIO) -> bool:
    return bool(getattr(stream, "closed", False))


class Console:
    """A stream with its colour decided up front; a closed pipe silences it instead of raising.

    A reader that goes away (`vx run … | head`) must not fail the run, so the first
    BrokenPipeError marks the console closed and every later write is dropped.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        env: Mapping[str, str],
        is_tty: bool,
        width: int | None,
        color: bool | None = None,
    ) -> None:
        self._stream = stream
        self.is_tty = is_tty and not _stream_closed(stream)
        self.width = width if width is not None and width > 0 else None
        self.color = decide_color(color, env, self.is_tty)
        self.closed = _stream_closed(stream)

    @classmethod
    def for_stream(
        cls, stream: TextIO, *, env: Mapping[str, str], color: bool | None = None
    ) -> Console:
        """Build a console for a real stream, asking it whether it is a terminal and how wide."""
        try:
            is_tty = stream.isatty()
        except ValueError:
            is_tty = False
        width: int | None = None
        if is_tty:
            try:
                width = os.get_terminal_size(stream.fileno()).columns
            except (OSError, ValueError, io.UnsupportedOperation):
                width = None
        return cls(stream, env=env, is_tty=is_tty, width=width, color=color)

    def write(self, text: str) -> None:
        if self.closed or not text:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except BrokenPipeError:
            self._silence()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            self._silence()

    def _silence(self) -> None:
        # Point the descriptor at /dev/null so the interpreter's flush at exit finds no broken pipe.
        self.closed = True
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
        except (OSError, ValueError, io.UnsupportedOperation):
            return
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


class _State(Enum):
    TEXT = 0
    ESC = 1
    CSI = 2
    STRING = 3
    STRING_ESC = 4
    INTERMEDIATE = 5


class AnsiStripper:
    """Drops escape sequences from one task's output, one chunk at a time.

    A pipe hands vx arbitrary slices, so an escape may begin in one chunk and end in the
    next; the parser's state is the carry between them.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state = _State.TEXT

    def feed(self, text: str) -> str:
        if self._state is _State.TEXT and _ESC not in text and _CSI_8BIT not in text:
            return text
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            if self._state is _State.TEXT:
                j = _next_escape(text, i)
                out.append(text[i:j])
                if j == n:
                    break
                self._state = _State.CSI if text[j] == _CSI_8BIT else _State.ESC
                i = j + 1
                continue
            self._state = _advance(self._state, text[i])
            i += 1
        return "".join(out)


def _next_escape(text: str, start: int) -> int:
    hits = [k for k in (text.find(_ESC, start), text.find(_CSI_8BIT, start)) if k >= 0]
    return min(hits) if hits else len(text)


def _advance(state: _State, ch: str) -> _State:
    code = ord(ch)
    if state is _State.ESC:
        if ch == "[":
            return _State.CSI
        if ch in "]PX^_":
            return _State.STRING
        if 0x20 <= code <= 0x2F:
            return _State.INTERMEDIATE
        return _State.TEXT
    if state is _State.CSI:
        return _State.TEXT if 0x40 <= code <= 0x7E else _State.CSI
    if state is _State.INTERMEDIATE:
        return _State.TEXT if 0x30 <= code <= 0x7E else _State.INTERMEDIATE
    if state is _State.STRING:
        if ch == "\x07":
            return _State.TEXT
        return _State.STRING_ESC if ch == _ESC else _State.STRING
    # STRING_ESC: `ESC \` ends the string; any other byte keeps us inside it.
    if ch == "\\":
        return _State.TEXT
    return _State.STRING_ESC if ch == _ESC else _State.STRING


def strip_ansi(text: str) -> str:
    """Strip every escape from a whole string (an unfinished one at the end is dropped)."""
    return AnsiStripper().feed(text)
