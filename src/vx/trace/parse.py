"""An strace log (`-f -o`, one call a line, pid first) read back as a `Trace` of absolute paths.

Relative paths are resolved as the kernel did: against the calling process's working directory,
or against the directory a `*at` call's descriptor names. So the reader follows, per pid, every
`chdir`/`fchdir`, the descriptors `open` returned, and each new process's start from its
parent's state at the moment of the `clone`/`fork`/`vfork` call (a child's first lines can come
before the parent's call returns, so the log is read twice: once to learn who made whom).
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path


class Trace(Record):
    """What one traced command did, as absolute, normalised paths (successful calls only).

    `reads`: files opened for reading (not directories); `writes`: files opened for writing,
    created or truncated, and the new names of links, symlinks and renames; `execs`: programs
    run; `renames`: (from, to) pairs, whose `from` is also in `unlinks` beside removed files
    and directories.
    """

    reads: frozenset[str]
    writes: frozenset[str]
    execs: frozenset[str]
    renames: tuple[tuple[str, str], ...]
    unlinks: frozenset[str]


class _Call(Record):
    pid: int
    name: str
    args: list[str]
    result: str


_LINE = re.compile(r"(\d+)\s+(.*)")
_RESUMED = re.compile(r"<\.\.\. [\w?]+ resumed>(.*)")
_UNFINISHED = " <unfinished ...>"
_FORKS = frozenset({"clone", "clone3", "fork", "vfork"})
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
_CWD = "AT_FDCWD"


def parse_log(log: Path, cwd: Path) -> Trace:
    """Read the log strace wrote for a command started in `cwd`."""
    with log.open(encoding="utf-8", errors="surrogateescape") as lines:
        return parse_lines(lines, os.fspath(cwd))


def parse_lines(lines: Iterable[str], cwd: str) -> Trace:
    """The `Trace` of a log's lines; the first pid seen is the command, started in `cwd`."""
    calls = list(_calls(lines))
    # Pass 1: each child pid → the index of the call that made it.
    made_by: dict[int, int] = {}
    for index, call in enumerate(calls):
        if call.name in _FORKS and call.result.isdigit():
            made_by[int(call.result)] = index
    # Pass 2: replay, snapshotting the parent's state at each fork call.
    state: dict[int, _Process] = {}
    at_fork: dict[int, _Process] = {}
    seen = _Seen()
    for index, call in enumerate(calls):
        process = state.get(call.pid)
        if process is None:
            origin = made_by.get(call.pid)
            parent = at_fork.get(origin) if origin is not None else None
            process = parent.copy() if parent is not None else _Process(cwd, {})
            state[call.pid] = process
        if call.name in _FORKS:
            at_fork[index] = process.copy()
        _apply(call, process, seen)
    return Trace(
        reads=frozenset(seen.reads),
        writes=frozenset(seen.writes),
        execs=frozenset(seen.execs),
        renames=tuple(seen.renames),
        unlinks=frozenset(seen.unlinks),
    )


class _Process:
    __slots__ = ("cwd", "fds")

    def __init__(self, cwd: str, fds: dict[str, str]) -> None:
        self.cwd = cwd
        self.fds = fds

    def copy(self) -> _Process:
        return _Process(self.cwd, dict(self.fds))

    def resolve(self, path: str, dirfd: str = _CWD) -> str | None:
        if path.startswith("/"):
            return posixpath.normpath(path)
        base = self.cwd if dirfd == _CWD else self.fds.get(dirfd)
        return None if base is None else posixpath.normpath(posixpath.join(base, path))


class _Seen:
    __slots__ = ("execs", "reads", "renames", "unlinks", "writes")

    def __init__(self) -> None:
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.execs: set[str] = set()
        self.renames: list[tuple[str, str]] = []
        self.unlinks: set[str] = set()


def _apply(call: _Call, process: _Process, seen: _Seen) -> None:
    name, args, result = call.name, call.args, call.result
    if result.startswith("-") or result == "?":
        return  # a failed call changed nothing
    if name in {"open", "creat"}:
        args = [_CWD, *args]
        name = "openat"
    if name in {"openat", "openat2"} and len(args) >= 2:
        path = process.resolve(_string(args[1]), args[0])
        flags = args[2] if len(args) > 2 else ""
        if path is None:
            return
        if result.isdigit():
            process.fds[result] = path
        if call.name == "creat" or any(flag in flags for flag in _WRITE_FLAGS):
            seen.writes.add(path)
            if "O_RDWR" in flags:
                seen.reads.add(path)
        elif "O_DIRECTORY" not in flags and "O_PATH" not in flags:
            seen.reads.add(path)
    elif name in {"execve", "execveat"}:
        dirfd, raw = (_CWD, args[0]) if name == "execve" else (args[0], args[1])
        path = process.resolve(_string(raw), dirfd)
        if path is not None:
            seen.execs.add(path)
    elif name == "chdir":
        path = process.resolve(_string(args[0]))
        if path is not None:
            process.cwd = path
    elif name == "fchdir":
        path = process.fds.get(args[0])
        if path is not None:
            process.cwd = path
    elif name in {"rename", "renameat", "renameat2"}:
        pair = (args[0], args[1]) if name == "rename" else (args[1], args[3])
        dirs = (_CWD, _CWD) if name == "rename" else (args[0], args[2])
        old = process.resolve(_string(pair[0]), dirs[0])
        new = process.resolve(_string(pair[1]), dirs[1])
        if old is not None and new is not None:
            seen.renames.append((old, new))
            seen.unlinks.add(old)
            seen.writes.add(new)
    elif name in {"unlink", "rmdir", "unlinkat"}:
        path = (
            process.resolve(_string(args[1]), args[0])
            if name == "unlinkat"
            else process.resolve(_string(args[0]))
        )
        if path is not None:
            seen.unlinks.add(path)
    elif name in {"link", "symlink", "truncate", "linkat", "symlinkat"}:
        made = {"link": (1, None), "symlink": (1, None), "truncate": (0, None)}
        at = {"linkat": (3, 2), "symlinkat": (2, 1)}
        index, dirfd_index = made.get(name) or at[name]
        dirfd = _CWD if dirfd_index is None else args[dirfd_index]
        path = process.resolve(_string(args[index]), dirfd)
        if path is not None:
            seen.writes.add(path)


def _calls(lines: Iterable[str]) -> Iterator[_Call]:
    """Each complete call, an `<unfinished ...>` half joined to its `<... resumed>` half."""
    pending: dict[int, str] = {}
    for line in lines:
        match = _LINE.match(line.rstrip("\n"))
        if match is None:
            continue
        pid, text = int(match[1]), match[2]
        resumed = _RESUMED.match(text)
        if resumed is not None:
            text = pending.pop(pid, "") + resumed[1]
        if text.endswith(_UNFINISHED):
            pending[pid] = text[: -len(_UNFINISHED)]
            continue
        call = _split(pid, text)
        if call is not None:
            yield call


def _split(pid: int, text: str) -> _Call | None:
    """`name(arg, arg) = result …` → its parts, commas inside strings and brackets kept."""
    open_paren = text.find("(")
    name = text[:open_paren]
    if open_paren <= 0 or not name.replace("_", "").isalnum():
        return None
    args: list[str] = []
    depth, start, quoted, escaped = 0, open_paren + 1, False, False
    for i in range(open_paren + 1, len(text)):
        char = text[i]
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        elif char == "," and not depth:
            args.append(text[start:i].strip())
            start = i + 1
        elif char == ")":
            last = text[start:i].strip()
            if last:
                args.append(last)
            rest = text[i + 1 :].strip()
            if not rest.startswith("="):
                return None
            return _Call(pid, name, args, rest[1:].split(maxsplit=1)[0] if rest[1:] else "?")
    return None


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")


def _string(arg: str) -> str:
    """A quoted strace string as the bytes it names (decoded as the file system would)."""
    if not (arg.startswith('"') and '"' in arg[1:]):
        return arg
    body = arg[1 : arg.rindex('"')]
    if "\\" not in body:
        return body
    raw = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(body):
        raw += body[pos : match.start()].encode("utf-8", "surrogateescape")
        code = match[1]
        if code[0] == "x":
            raw.append(int(code[1:], 16))
        elif code[0] in "01234567":
            raw.append(int(code, 8) & 0xFF)
        else:
            raw += _ESCAPES.get(code, code).encode("utf-8", "surrogateescape")
        pos = match.end()
    raw += body[pos:].encode("utf-8", "surrogateescape")
    return os.fsdecode(bytes(raw))
