"""A restore's staging dir: members land here, then move into place all at once or not at all."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_PREFIX = ".vx-restore-"
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_LEFTOVER = re.compile(r"\.vx-restore-[a-z0-9_]{8}")
"""A staging dir's name as `_new_dir` makes it (and `tempfile.mkdtemp` did), and nothing else."""

Parts = tuple[str, ...]


class Blocked(Exception):  # noqa: N818  the disk, not the artifact, said no
    """The disk refused a restore: a symlink or directory in the way, no room, no permission."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _errname(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, "error")


def _walk(base: int, parts: Parts, *, create: bool) -> int:
    """Open the directory `parts` below `base` without following any symlink on the way."""
    fd = os.open(".", _DIR_FLAGS, dir_fd=base)
    try:
        for part in parts:
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _new_dir(root: Path, mode: int) -> Path:
    """A new `.vx-restore-*` dir in `root`. One that will become an output directory gets the
    mode a plain `mkdir` gives (umask applied); the others are private (0700), as `mkdtemp`
    makes them. `tempfile` is not used: it imports `random`, which a warm restore can skip."""
    for _ in range(100):
        path = root / (_PREFIX + os.urandom(4).hex())
        try:
            path.mkdir(mode)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free staging dir name", str(root))


def new_private_dir(root: Path) -> Path:
    """A new private `.vx-restore-*` dir in `root`, which `sweep` removes if the run dies."""
    return _new_dir(root, 0o700)


def _set_modes(root_fd: int, dir_modes: Iterable[tuple[str, int]]) -> None:
    """Give each restored directory its recorded mode, deepest first (a parent's mode may
    take away the right to enter it)."""
    for path, mode in sorted(dir_modes, reverse=True):
        fd = _walk(root_fd, tuple(path.split("/")), create=False)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def sweep(dirs: Iterable[Path]) -> None:
    """Remove the staging dirs a restore killed mid-way left in `dirs`.

    Call only under the workspace's run lock: every restore into these dirs runs under it,
    so any staging dir found then is a leftover. Only a real directory with the exact name
    `mkdtemp` gives goes; a symlink of that name is left alone, and removal never follows
    one inside. Staging dirs are made only in a project dir or the workspace root (where a
    restore unpacks), so one listing per dir finds them all.
    """
    for where in dirs:
        try:
            with os.scandir(where) as found:
                stale = [
                    entry.path
                    for entry in found
                    if _LEFTOVER.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)
                ]
        except OSError:
            continue
        for path in stale:
            import shutil  # only for a leftover: a clean sweep never needs it

            shutil.rmtree(path, ignore_errors=True)


class StagedFile:
    """A member's bytes on their way into the staging tree; the mode is set once all are in.

    Written straight to the descriptor: the chunks come a megabyte at a time, so a buffer
    would only add its own set-up calls to every small file.
    """

    __slots__ = ("_fd", "_mode", "_where")

    def __init__(self, fd: int, mode: int, where: str) -> None:
        self._fd = fd
        self._mode = mode
        self._where = where

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        try:
            os.fchmod(self._fd, self._mode)
        except OSError as err:
            raise Blocked(f"{_errname(err)} writing {self._where}") from err
        finally:
            os.close(self._fd)

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        try:
            while view:
                wrote = os.write(self._fd, view)
                if not wrote:  # no error and no progress: a full disk some file systems report so
                    raise Blocked(f"ENOSPC writing {self._where}")
                view = view[wrote:]
        except OSError as err:
            raise Blocked(f"{_errname(err)} writing {self._where}") from err
        return len(data)


class Staging:
    """`<root>/.vx-restore-*/` mirrors the archive; a second such dir keeps what it replaced.

    Nothing here ever follows a symlink: every directory is opened with O_NOFOLLOW from a
    descriptor of its parent, so a link on disk cannot redirect a write out of the root.
    A restore into absent outputs, the common case, is cheap: when every member lies in one
    top-level directory (`whole`, `dist`) that is not on disk, the staging dir *is* that
    directory and the commit is one rename. Otherwise the staged tree is merged into place;
    the dir for replaced entries is made only when an entry is replaced, and a staging dir
    emptied by the commit is removed with one `rmdir` rather than walked.
    """

    def __init__(self, root: Path, *, whole: str | None = None) -> None:
        self._root = root
        self._whole = whole
        self._moved = False
        self._fds: list[int] = []
        self._parent: tuple[Parts, int] | None = None
        self._aside: tuple[Path, int] | None = None
        try:
            self._dir = _new_dir(root, 0o700 if whole is None else 0o777)
            self._root_fd = self._open(root)
            self._tree_fd = self._open(self._dir)
        except OSError as err:
            self.close()
            raise Blocked(f"{_errname(err)} writing in {root}") from err

    def _inner(self, parts: Parts) -> Parts:
        """Where a member lies in the staging dir: below `whole`, when the dir stands for it."""
        if self._whole is None:
            return parts
        if parts[:1] != (self._whole,):
            raise Blocked(f"{'/'.join(parts)} lies outside {self._whole}, as no member may")
        return parts[1:]

    def _open(self, path: Path) -> int:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._fds.append(fd)
        return fd

    def _aside_fd(self) -> int:
        """The dir that keeps what the commit replaced, made on first use."""
        if self._aside is None:
            path = _new_dir(self._root, 0o700)
            self._aside = (path, self._open(path))
        return self._aside[1]

    def close(self) -> None:
        if self._parent is not None:
            os.close(self._parent[1])
            self._parent = None
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        made = [self._aside[0]] if self._aside is not None else []
        if hasattr(self, "_dir") and not self._moved:
            made.append(self._dir)
        for path in made:
            try:
                path.rmdir()
            except OSError:
                import shutil

                shutil.rmtree(path, ignore_errors=True)

    def _parent_of(self, parts: Parts) -> int:
        """The staged parent dir of a member; archives are sorted, so the last one is reused."""
        want = self._inner(parts)[:-1]
        if not want:
            return self._tree_fd
        if self._parent is not None and self._parent[0] == want:
            return self._parent[1]
        if self._parent is not None:
            os.close(self._parent[1])
            self._parent = None
        fd = _walk(self._tree_fd, want, create=True)
        self._parent = (want, fd)
        return fd

    def _refused(self, err: OSError, parts: Parts) -> Blocked:
        return Blocked(f"{_errname(err)} staging {'/'.join(parts)} in {self._root}")

    def add_dir(self, parts: Parts) -> None:
        try:
            os.close(_walk(self._tree_fd, self._inner(parts), create=True))
        except OSError as err:
            raise self._refused(err, parts) from err

    def add_link(self, parts: Parts, target: str) -> None:
        try:
            os.symlink(target, parts[-1], dir_fd=self._parent_of(parts))
        except OSError as err:
            raise self._refused(err, parts) from err

    def file(self, parts: Parts, mode: int) -> StagedFile:
        try:
            fd = os.open(parts[-1], _NEW_FILE, 0o600, dir_fd=self._parent_of(parts))
        except OSError as err:
            raise self._refused(err, parts) from err
        return StagedFile(fd, mode, "/".join(parts))

    def commit(self, dir_modes: Iterable[tuple[str, int]]) -> None:
        """Move the staged tree into the root, then set directory modes; undo all on failure."""
        if self._whole is not None:
            self._commit_whole(dir_modes)
            return
        log: list[tuple[Parts, str]] = []
        try:
            self._merge((), log)
            _set_modes(self._root_fd, dir_modes)
        except OSError as err:
            self._undo(log)
            raise Blocked(f"{_errname(err)} restoring into {self._root}") from err
        except Blocked:
            self._undo(log)
            raise

    def _commit_whole(self, dir_modes: Iterable[tuple[str, int]]) -> None:
        """Rename the staging dir to the absent top-level directory it stands for."""
        assert self._whole is not None  # noqa: S101  only called in that mode
        name, staged = self._dir.name, self._whole
        try:
            os.rename(name, staged, src_dir_fd=self._root_fd, dst_dir_fd=self._root_fd)
        except OSError as err:
            raise Blocked(f"{_errname(err)} restoring {staged} into {self._root}") from err
        self._moved = True
        try:
            _set_modes(self._root_fd, dir_modes)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.rename(staged, name, src_dir_fd=self._root_fd, dst_dir_fd=self._root_fd)
                self._moved = False
            raise Blocked(f"{_errname(err)} restoring into {self._root}") from err

    def _merge(self, rel: Parts, log: list[tuple[Parts, str]]) -> None:
        src = _walk(self._tree_fd, rel, create=False)
        try:
            dst = _walk(self._root_fd, rel, create=False)
        except OSError:
            os.close(src)
            raise
        try:
            for name in sorted(os.listdir(src)):  # noqa: PTH208  a descriptor, not a path
                self._merge_one(src, dst, (*rel, name), log)
        finally:
            os.close(src)
            os.close(dst)

    def _merge_one(self, src: int, dst: int, here: Parts, log: list[tuple[Parts, str]]) -> None:
        name = here[-1]
        src_dir = stat.S_ISDIR(os.stat(name, dir_fd=src, follow_symlinks=False).st_mode)
        try:
            dst_mode = os.stat(name, dir_fd=dst, follow_symlinks=False).st_mode
        except FileNotFoundError:
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
            log.append((here, ""))
            return
        if src_dir and stat.S_ISDIR(dst_mode):
            self._merge(here, log)
            return
        if src_dir or stat.S_ISDIR(dst_mode):
            what = "file"
            if stat.S_ISLNK(dst_mode):
                what = "symlink"
            elif stat.S_ISDIR(dst_mode):
                what = "directory"
            raise Blocked(f"{'/'.join(here)} is a {what} on disk where the artifact has another")
        aside = str(len(log))
        os.rename(name, aside, src_dir_fd=dst, dst_dir_fd=self._aside_fd())
        log.append((here, aside))
        os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        log.append((here, ""))

    def _undo(self, log: list[tuple[Parts, str]]) -> None:
        """Put the root back as it was: staged entries leave, replaced ones return."""
        for here, aside in reversed(log):
            with contextlib.suppress(OSError):
                dst = _walk(self._root_fd, here[:-1], create=False)
                try:
                    if aside:
                        os.rename(aside, here[-1], src_dir_fd=self._aside_fd(), dst_dir_fd=dst)
                    else:
                        src = _walk(self._tree_fd, here[:-1], create=True)
                        try:
                            os.rename(here[-1], here[-1], src_dir_fd=dst, dst_dir_fd=src)
                        finally:
                            os.close(src)
                finally:
                    os.close(dst)
