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
            parent = None
            if origin is not None:
                # The fork's own line may come later (strace prints it when the call returns,
                # and the child can run first): the parent is still inside that call, so its
                # state now is its state at the fork.
                parent = at_fork.get(origin) or state.get(calls[origin].pid)
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
        if not path.startswith("/"):
            base = self.cwd if dirfd == _CWD else self.fds.get(dirfd)
            if base is None:
                return None
            path = f"{base}/{path}"
        # normpath only where there is something to normalise: most paths are clean.
        return posixpath.normpath(path) if "/." in path or "//" in path else path


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
        head, _, text = line.rstrip("\n").partition(" ")
        if not head.isdigit():
            continue
        pid, text = int(head), text.lstrip(" ")
        if text.startswith("<..."):
            resumed = _RESUMED.match(text)
            if resumed is None:
                continue
            text = pending.pop(pid, "") + resumed[1]
        if text.endswith(_UNFINISHED):
            pending[pid] = text[: -len(_UNFINISHED)]
            continue
        call = _split(pid, text)
        if call is not None:
            yield call


_ARG = re.compile(r'[ ]*("(?:[^"\\]|\\.)*"|[^,]*)(?:,|$)')
_MOST_ARGS = 4  # no call read here needs an argument past the fourth
_ARGS_READ = {"clone": 0, "clone3": 0, "fork": 0, "vfork": 0, "execve": 1, "chdir": 1}
_ARGS_READ |= {"fchdir": 1, "open": 2, "creat": 1, "openat": 3, "openat2": 3, "unlink": 1}
_ARGS_READ |= {"rmdir": 1, "unlinkat": 2, "truncate": 1, "rename": 2, "link": 2, "symlink": 2}


# Most lines of a log are a successful `openat(dirfd, "path", FLAGS[, mode]) = fd`: one match.
_OPENAT = re.compile(
    r'openat\((AT_FDCWD|\d+), ("(?:[^"\\]|\\.)*"), ([A-Z_|0-9x]+)[^)]*\) += (\d+)$'
)


def _split(pid: int, text: str) -> _Call | None:
    """`name(arg, arg) = result …` → its parts, None for a failed call (it changed nothing).

    The result follows the last ` = ` (strace pads before it; error text after it has none).
    Only the arguments a call's reading needs are split, on commas outside strings: the later
    ones (argv arrays, structs) are never read, and splitting them is most of the cost."""
    fast = _OPENAT.match(text)
    if fast is not None:
        return _Call(pid, "openat", [fast[1], fast[2], fast[3]], fast[4])
    open_paren = text.find("(")
    name = text[:open_paren]
    if open_paren <= 0 or not name.replace("_", "").isalnum():
        return None
    equals = text.rfind(" = ")
    body = text[open_paren + 1 : equals].rstrip()
    if equals < 0 or not body.endswith(")"):
        return None
    body, result = body[:-1], text[equals + 3 :]
    if result.startswith(("-", "?")):
        return None  # a failed call changed nothing, and most probes fail
    wanted = _ARGS_READ.get(name, _MOST_ARGS)
    args: list[str] = []
    pos = 0
    while pos < len(body) and len(args) < wanted:
        found = _ARG.match(body, pos)
        if found is None or found.end() == pos:
            break
        args.append(found[1].strip())
        pos = found.end()
    return _Call(pid, name, args, result.split(maxsplit=1)[0] if result.strip() else "?")


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
