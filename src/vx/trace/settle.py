"""Calls seen before they ran, kept as a `Trace` when the file system shows their effect.

vx's seccomp notifier sees each call before the kernel runs it, so it never learns whether the
call worked, and most failed ones are probes (a module resolver trying `index.ts`, `index.js`…).
Once the command ended: a read or a run counts if the file exists (or the command removed it), a
write if the file exists (or was moved or removed), a removal if the path is gone. That is what
strace's successful calls say, less a failed open of a file that exists (denied, say).

Existence is read a directory at a time where several paths share one: a build reads thousands
of files from few directories, and one listing costs about what one `stat` does.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import TYPE_CHECKING

from vx.trace.parse import Trace

if TYPE_CHECKING:
    from collections.abc import Iterable

OPEN, WRITE, EXEC, RENAME, UNLINK = range(5)
"""The kinds of call a `seen` entry records: an open (read or write by its flags), a write
(creat, truncate, a link's new name), a run, a rename (the entry right after it is its new
name, flags -1), a removal."""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_LISTED = 3  # from this many paths in one directory, list it instead of looking at each


def settle(seen: list[tuple[int, str, int]]) -> Trace:
    """`seen`: (kind, absolute path, open flags) in call order."""
    removed = {path for kind, path, _ in seen if kind in (RENAME, UNLINK)}
    disk = _Disk(path for _, path, _ in seen)
    reads: set[str] = set()
    writes: set[str] = set()
    execs: set[str] = set()
    unlinks: set[str] = set()
    renames: list[tuple[str, str]] = []
    for index, (kind, path, flags) in enumerate(seen):
        if kind == OPEN and flags & _WRITE_FLAGS:
            if disk.exists(path) or path in removed:
                writes.add(path)
                if flags & os.O_RDWR:
                    reads.add(path)
        elif kind == OPEN:
            if disk.is_file(path) or path in removed:
                reads.add(path)
        elif kind == EXEC:
            if disk.exists(path):
                execs.add(path)
        elif kind == WRITE:
            if disk.exists(path) or path in removed:
                writes.add(path)
        elif kind == RENAME and flags != -1:
            new = seen[index + 1][1]
            if not disk.exists(path) or disk.exists(new):
                renames.append((path, new))
                unlinks.add(path)
                writes.add(new)
        elif kind == UNLINK and not disk.exists(path):
            unlinks.add(path)
    return Trace(
        reads=frozenset(reads),
        writes=frozenset(writes),
        execs=frozenset(execs),
        renames=tuple(renames),
        unlinks=frozenset(unlinks),
    )


class _Disk:
    """What is at each path now: listed per directory where many paths share one."""

    def __init__(self, paths: Iterable[str]) -> None:
        counts: dict[str, int] = {}
        for path in paths:
            parent = path.rpartition("/")[0] or "/"  # every path is absolute and normalised
            counts[parent] = counts.get(parent, 0) + 1
        self._crowded = {d for d, n in counts.items() if n >= _LISTED}
        self._listings: dict[str, dict[str, os.DirEntry[str]] | None] = {}
        self._exists: dict[str, bool] = {}
        self._files: dict[str, bool] = {}

    def _entry(self, path: str) -> os.DirEntry[str] | bool | None:
        """The directory entry (listed parents), else True/False for a parent not listed."""
        parent, _, name = path.rpartition("/")
        parent = parent or "/"
        if parent not in self._crowded:
            return posixpath.lexists(path)
        if parent not in self._listings:
            try:
                with os.scandir(parent) as entries:
                    self._listings[parent] = {e.name: e for e in entries}
            except OSError:
                self._listings[parent] = None
        listing = self._listings[parent]
        return None if listing is None else listing.get(name)

    def exists(self, path: str) -> bool:
        """Is anything at path (a link that leads nowhere counts)?"""
        known = self._exists.get(path)
        if known is None:
            entry = self._entry(path)
            known = self._exists[path] = entry is not None and entry is not False
        return known

    def is_file(self, path: str) -> bool:
        """Is something other than a directory at path, through links?"""
        known = self._files.get(path)
        if known is None:
            entry = self._entry(path)
            if isinstance(entry, os.DirEntry) and not entry.is_symlink():
                known = not entry.is_dir(follow_symlinks=False)
            elif entry is None or entry is False:
                known = False
            else:
                try:
                    known = not stat.S_ISDIR(os.stat(path).st_mode)  # noqa: PTH116 - per path
                except OSError:
                    known = False
            self._files[path] = known
        return known
