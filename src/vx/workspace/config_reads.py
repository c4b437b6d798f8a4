"""What a `.py` config read of the world while it ran: environment variables and files.

A `vx.config.py` is a program, and its answer may depend on more than its own bytes:
`os.environ["MODE"]`, a JSON file beside it, a directory it lists. The warm path replays a run
without loading configs, so it must prove those reads would answer the same. While a config
runs inside a `recording` session, `os.environ` is a mapping that notes every name looked up
(`[...]`, `.get`, `os.getenv`, `in`; iterating it notes the whole environment), and an audit
hook notes every path opened or listed. Outside a session nothing is swapped and the hook
(installed once, on the first recorded config: audit hooks cannot be removed) returns at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})


class ConfigReads:
    """The reads of every `.py` config one load ran: names with the value each saw (kept in
    memory only: the warm path stores digests), whether one walked the whole environment, and
    the absolute paths opened or listed."""

    __slots__ = ("env", "files", "whole_env")

    def __init__(self) -> None:
        self.env: dict[str, str | None] = {}
        self.whole_env = False
        self.files: dict[str, None] = {}


_SESSION: ContextVar[ConfigReads | None] = ContextVar("vx_config_reads_session", default=None)
_NOW: ContextVar[ConfigReads | None] = ContextVar("vx_config_reads_now", default=None)
_hooked = False
_skipped: tuple[str, ...] = ()


@contextlib.contextmanager
def session(reads: ConfigReads | None) -> Iterator[None]:
    """Record into `reads` what each `.py` config loaded inside this block reads (None: off)."""
    token = _SESSION.set(reads)
    try:
        yield
    finally:
        _SESSION.reset(token)


@contextlib.contextmanager
def recording() -> Iterator[None]:
    """Around one config's execution: note its reads when a session asks for them.

    The caller holds the lock that serialises config execution, so one swap of `os.environ`
    is in place at a time; other threads reading it meanwhile see the same values, unrecorded.
    """
    reads = _SESSION.get()
    if reads is None:
        yield
        return
    _install_hook()
    real = os.environ
    token = _NOW.set(reads)
    # A swap, not a clear: the process environment itself is untouched.
    os.environ = _RecordingEnviron(real)  # type: ignore[assignment]  # noqa: B003
    try:
        yield
    finally:
        os.environ = real  # noqa: B003
        _NOW.reset(token)


class _RecordingEnviron(MutableMapping[str, str]):
    """`os.environ` as a config sees it: the same values, and every lookup noted."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self._real = real

    def _note(self, name: str, value: str | None) -> None:
        reads = _NOW.get()
        if reads is not None and name not in reads.env:
            reads.env[name] = value

    def _note_all(self) -> None:
        reads = _NOW.get()
        if reads is not None:
            reads.whole_env = True
            for name, value in self._real.items():
                reads.env.setdefault(name, value)

    def __getitem__(self, name: str) -> str:
        value = self._real.get(name)
        self._note(name, value)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        self._real[name] = value

    def __delitem__(self, name: str) -> None:
        del self._real[name]

    def __iter__(self) -> Iterator[str]:
        self._note_all()
        return iter(self._real)

    def __len__(self) -> int:
        self._note_all()
        return len(self._real)

    def copy(self) -> dict[str, str]:
        """`os.environ.copy()`: a plain dict of everything, so everything counts as read."""
        self._note_all()
        return dict(self._real)


def _install_hook() -> None:
    global _hooked, _skipped  # noqa: PLW0603 - one process-wide hook, added once
    if _hooked:
        return
    import vx

    here = os.path.dirname(os.path.abspath(vx.__file__))  # noqa: PTH100, PTH120
    _skipped = tuple(p.rstrip(os.sep) + os.sep for p in {sys.prefix, sys.base_prefix, here} if p)
    sys.addaudithook(_hook)
    _hooked = True


def _hook(event: str, args: tuple[object, ...]) -> None:
    """Note a path the running config opens or lists; anything else returns at once."""
    if event not in _PATH_EVENTS:
        return
    reads = _NOW.get()
    if reads is None or not args:
        return
    path = args[0]
    if path is None:
        path = "."  # os.listdir() with no argument lists the working directory
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # an open descriptor: its path was noted when it was opened
    text = os.fsdecode(path)
    full = os.path.abspath(text)  # noqa: PTH100
    if full.startswith(_skipped) or "__pycache__" in full:
        return  # the interpreter's own files and vx's: no config's answer hangs on them
    reads.files[full] = None
