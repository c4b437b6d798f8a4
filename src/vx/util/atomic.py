"""Crash-safe file writes: a reader sees the old file or the whole new one, never a torn one."""

from __future__ import annotations

import contextlib
import errno
import os
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

TEMP_MARKER = ".tmp-"
"""Between a target's name and the random part of its temp: `<name>.tmp-<random>`."""

_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})


def write_atomic(
    path: Path,
    data: bytes | str | Callable[[IO[bytes]], None],
    *,
    mode: int = 0o644,
    exclusive: bool = False,
    durable: bool = True,
) -> bool:
    """Write `data` (or let a writer fill the file) to `path` through a temp beside it.

    The temp is fsynced, renamed over `path`, and the directory fsynced, so a crash leaves the
    old file or the new one. With `exclusive`, an existing `path` wins and the new bytes are
    dropped (returns False): two writers of one cache key keep the first. The temp is removed
    on every failure, an interrupt included.

    `durable=False` skips both fsyncs, for a copy of bytes kept elsewhere whose reader checks
    them anyway: the rename still means no reader ever sees a torn file while the system runs,
    and only a power loss could leave one, which that reader then refuses.
    """
    temp = write_temp(path, data, mode=mode, durable=durable)
    try:
        placed = _place(temp, path) if exclusive else _replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    if exclusive:  # a link leaves the temp's name behind; a rename took it
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    if durable:
        fsync_dir(path.parent)
    return placed


def write_temp(
    path: Path,
    data: bytes | str | Callable[[IO[bytes]], None],
    *,
    mode: int = 0o644,
    durable: bool = True,
) -> Path:
    """A synced temp beside `path` holding `data`, for a caller that renames it in later.

    Writing every file of a change first lets a caller give up before touching any target;
    the temp is removed on every failure, an interrupt included.
    """
    fd, temp = _new_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            if durable:
                os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return temp


def _new_temp(path: Path) -> tuple[int, Path]:
    """A new private file `<name>.tmp-<8 hex>` beside `path`, opened for writing, as
    `mkstemp` would make it; `tempfile` is not used, since it imports `random` and a warm
    run's one write (its snapshot) would pay for that."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        temp = path.parent / f"{path.name}{TEMP_MARKER}{os.urandom(4).hex()}"
        try:
            return os.open(temp, flags, 0o600), temp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp name", str(path.parent))


def _replace(temp: Path, path: Path) -> bool:
    temp.replace(path)
    return True


def _place(temp: Path, path: Path) -> bool:
    """Link the temp in under its final name, which fails instead of replacing a winner."""
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    except OSError as err:
        if err.errno not in _NO_HARD_LINKS:
            raise
        if path.exists():
            return False
        return _replace(temp, path)
    return True


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable; file systems that cannot sync a directory pass."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)
