"""The per-workspace run lock: two runs on one workspace take turns, and a crash frees it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Self

import xxhash

from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import TracebackType

NOTICE_AFTER_S = 1.0
_POLL_S = 0.05


class NestedRunError(UserError):
    """A task of a run asked for that run's own lock: waiting would never end."""

    def __init__(self, pid: int) -> None:
        super().__init__(
            ErrorCode.REFUSED,
            f"vx (pid {pid}) holds this workspace's run lock and started this process: "
            "a task cannot run vx on its own workspace",
        )
        self.pid = pid


class RunLock:
    """A held lock. `flock` belongs to the open file, so the kernel frees it when we exit."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def temp_base(env: Mapping[str, str] = os.environ) -> Path:
    """The directory `tempfile.gettempdir()` would choose, without importing `tempfile`.

    That import (with `shutil` and `random` behind it) and its probe file cost a warm run more
    than the lock itself: the first of TMPDIR, TEMP, TMP, /tmp, /var/tmp, /usr/tmp that is a
    writable directory, else the working directory.
    """
    named = [env.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    for candidate in (*(n for n in named if n), "/tmp", "/var/tmp", "/usr/tmp"):  # noqa: S108
        path = Path(candidate)
        if path.is_dir() and os.access(path, os.W_OK | os.X_OK):
            return path.absolute()
    return Path.cwd()


def lock_path(root: Path, *, temp_dir: Path | None = None, uid: int | None = None) -> Path:
    """`<tmp>/vx-<uid>/<16 hex of the root's real path>.lock`: one user's, one workspace's."""
    base = temp_base() if temp_dir is None else temp_dir
    owner = os.getuid() if uid is None else uid
    name = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
    return base / f"vx-{owner}" / f"{name}.lock"


def acquire_run_lock(
    root: Path,
    *,
    on_wait: Callable[[int], None] | None = None,
    temp_dir: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RunLock:
    """Take `root`'s run lock, waiting for another run to finish.

    After NOTICE_AFTER_S of waiting, `on_wait` gets the holder's pid once, for the caller's
    "waiting for another vx run" line. A holder that is this process's ancestor is refused.
    """
    path = lock_path(root, temp_dir=temp_dir)
    _own_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        if not _try_lock(fd):
            _refuse_nested(fd)
            _wait(fd, on_wait, clock, sleep)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return RunLock(path, fd)


def _refuse_nested(fd: int) -> None:
    holder = _holder(fd)
    if holder == os.getpid():
        msg = "this process already holds the run lock; taking it again would wait forever"
        raise RuntimeError(msg)
    if holder is not None and holder in _ancestors():
        raise NestedRunError(holder)


def _wait(
    fd: int,
    on_wait: Callable[[int], None] | None,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> None:
    start = clock()
    told = on_wait is None
    while True:
        sleep(_POLL_S)
        if _try_lock(fd):
            return
        if not told and clock() - start >= NOTICE_AFTER_S:
            holder = _holder(fd)
            if holder is not None and on_wait is not None:
                on_wait(holder)
                told = True


def _own_dir(directory: Path) -> None:
    """The lock's directory must be this user's, or another user could hold our runs."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=True)
    st = directory.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise UserError(
            ErrorCode.FS,
            f"{directory} is not a directory this user owns; remove it or point TMPDIR elsewhere",
        )
    if stat.S_IMODE(st.st_mode) != 0o700:
        directory.chmod(0o700)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> int | None:
    """The pid the holder wrote; None in the instant between its lock and its write."""
    try:
        return int(os.pread(fd, 32, 0).strip())
    except ValueError:
        return None


def _ancestors() -> set[int]:
    """This process's ancestors, read from /proc; just the parent where there is none."""
    found: set[int] = set()
    pid = os.getppid()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            break
        pid = int(text.rpartition(")")[2].split()[1])
    return found
