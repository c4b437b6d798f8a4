"""Artifacts on disk: `<key>.tar.zst` in the store dir, saved atomically and restored safely."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from typing import TYPE_CHECKING

import xxhash

from vx.cache.manifest import ArtifactInfo, CorruptArtifact, Recorded, Unarchivable, normalize
from vx.util.atomic import write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from typing import IO

    from vx.cache.archive import Described
    from vx.cache.syncer import Syncer

__all__ = ["ARTIFACT_SUFFIX", "ArtifactInfo", "CorruptArtifact", "SaveFailed", "Store"]

ARTIFACT_SUFFIX = ".tar.zst"
"""Artifacts are `<16 hex key>.tar.zst`; their save temps add `.tmp-<random>`."""

_KEY = re.compile(r"[0-9a-f]{16}")
_RENEW_AFTER_S = 3600.0
_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


class SaveFailed(Exception):  # noqa: N818  it reads as what happened to the save
    """A save the disk refused (full, over quota, not writable, file too large).

    Never fatal: the task's verdict stands, the entry is simply not kept.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cache entry not saved: {reason} writing {path}")
        self.path = path
        self.reason = reason


class Store:
    """The artifact half of the cache; `cache.index` holds the rows that point here.

    A `__slots__` class set once in `__init__`, not a frozen dataclass: a restore imports this
    module, and `dataclasses` (with `inspect` and `ast` behind it) would cost it more than
    the restore of a small task.
    """

    __slots__ = ("clock", "directory")

    def __init__(self, directory: Path, clock: Callable[[], float] = time.time) -> None:
        self.directory = directory
        self.clock = clock

    def artifact(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            msg = f"not a cache key: {key!r}"
            raise ValueError(msg)
        return self.directory / f"{key}{ARTIFACT_SUFFIX}"

    def exists(self, key: str) -> bool:
        return self.artifact(key).is_file()

    def put(
        self,
        key: str,
        paths: Iterable[str],
        project_dir: Path,
        *,
        meta: str = "",
        replace: bool = False,
        syncer: Syncer | None = None,
    ) -> ArtifactInfo:
        """Archive `paths` (relative to `project_dir`) as `key`'s artifact; SaveFailed if refused.

        A second writer of one key keeps the first artifact and returns what that one holds,
        so the row it then writes matches the bytes on disk. With `replace` (a run that did not
        read the cache, such as `--force`) the new artifact takes the key's place instead:
        refreshing an entry nobody trusts is the point of such a run. Given a `syncer`, the
        new artifact's fsyncs are left to it rather than waited for (see `cache.syncer`).
        """
        from vx.cache.archive import write_archive  # tar and zstd load only when saving

        path = self.artifact(key)
        names = list(paths)
        made: list[ArtifactInfo] = []

        def archive(out: IO[bytes]) -> None:
            made.append(write_archive(out, project_dir, names, meta=meta))

        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if write_atomic(path, archive, exclusive=not replace, durable=syncer is None):
                if syncer is not None:
                    syncer.add(path)
                return made[-1]
            try:
                return self.describe(key).info
            except CorruptArtifact:
                write_atomic(path, archive)
                return made[-1]
        except Unarchivable as err:
            raise SaveFailed(str(project_dir / err.path), err.reason) from err
        except OSError as err:
            where = str(err.filename or path)
            if where.startswith(str(self.directory)):
                where = str(path)
            raise SaveFailed(where, _reason(err)) from err

    def put_bytes(self, key: str, data: bytes, *, durable: bool = True) -> None:
        """Keep an artifact that arrived whole and already checked (a remote hit) as `key`'s.

        It replaces whatever lies there: a row-less leftover must not shadow bytes whose row
        is written next. `durable=False` skips the fsyncs (see `write_atomic`): a restore
        checks an artifact's size and digest before it writes a byte, so one a power loss tore
        is a miss, never a wrong output.
        """
        try:
            try:
                write_atomic(self.artifact(key), data, durable=durable)
            except FileNotFoundError:  # the store's first artifact: its directory is made once
                self.directory.mkdir(parents=True, exist_ok=True)
                write_atomic(self.artifact(key), data, durable=durable)
        except OSError as err:
            raise SaveFailed(str(self.artifact(key)), _reason(err)) from err

    def restore(self, key: str, project_dir: Path, expected: ArtifactInfo) -> None:
        """Place `key`'s outputs under `project_dir` (its outputs already cleaned).

        Raises CorruptArtifact, leaving `project_dir` as it was, when the artifact is
        missing, unreadable, differs from `expected` or holds anything unsafe.
        """
        from vx.cache.archive import extract_archive

        path = self.artifact(key)
        with self._open(path) as fh:
            extract_archive(fh, str(path), project_dir, expected)
        self.renew(key)

    def verify(self, key: str, expected: ArtifactInfo) -> None:
        """Read `key`'s artifact through and raise CorruptArtifact unless it is `expected`.

        For an entry whose outputs are up to date without a byte read: an empty manifest
        proves nothing on its own, since emptying a row's manifest would make any entry look
        so.
        """
        from vx.cache.archive import check_recorded

        check_recorded(self.describe(key).info, expected, str(self.artifact(key)))
        self.renew(key)

    def describe(self, key: str) -> Described:
        """Read an artifact whole (its size, digest, paths and meta) to index it again."""
        from vx.cache.archive import inspect_archive

        path = self.artifact(key)
        with self._open(path) as fh:
            return inspect_archive(fh, str(path))

    def renew(self, key: str) -> None:
        """Mark an artifact used, so prune judges a row-less one by its last use.

        Only a file time over an hour old is bumped: a warm run stays free of writes.
        """
        path = self.artifact(key)
        with contextlib.suppress(OSError):
            now = self.clock()
            if now - path.stat().st_mtime > _RENEW_AFTER_S:
                os.utime(path, (now, now))

    def discard(self, key: str) -> None:
        """Remove an artifact that failed to restore, so the next save of its key lands.

        An empty directory in an artifact's place goes too; anything holding files stays.
        """
        path = self.artifact(key)
        try:
            path.unlink(missing_ok=True)
        except IsADirectoryError:
            with contextlib.suppress(OSError):
                path.rmdir()
        except OSError:
            return

    def up_to_date(
        self, project_dir: Path, info: ArtifactInfo, present: Iterable[str] | None = None
    ) -> bool:
        """Whether the outputs on disk already are the entry's, byte for byte and mode for mode.

        `present`, when given, is every output path now on disk (the caller's globs): an
        extra or a missing one makes the outputs differ.
        """
        if present is not None and {normalize(p) for p in present} != {
            r.path for r in info.manifest
        }:
            return False
        return all(_matches(project_dir / r.path, r) for r in info.manifest)

    @staticmethod
    def _open(path: Path) -> IO[bytes]:
        """Open an artifact for reading, or raise CorruptArtifact; never block, never follow.

        Something else in an artifact's place (a fifo, whose open would wait for a writer
        forever while this run holds the workspace lock; a directory; a symlink, perhaps to
        `/dev/zero`) is a miss: vx only ever puts regular files there.
        """
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except FileNotFoundError as err:
            raise CorruptArtifact(str(path), "missing", missing=True) from err
        except OSError as err:
            raise CorruptArtifact(str(path), f"unreadable ({_reason(err)})") from err
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                # Unbuffered: zstd reads in large chunks itself, and a buffer's set-up would
                # cost more calls than the read of a small artifact. Blocking again, for a
                # file system (FUSE) that would honour O_NONBLOCK on a regular file.
                os.set_blocking(fd, True)
                return os.fdopen(fd, "rb", buffering=0)
        except OSError as err:
            os.close(fd)
            raise CorruptArtifact(str(path), f"unreadable ({_reason(err)})") from err
        os.close(fd)
        raise CorruptArtifact(str(path), "not a regular file")


def _reason(err: OSError) -> str:
    if err.errno is None:
        return str(err)
    return errno.errorcode.get(err.errno, str(err.errno))


def _matches(path: Path, recorded: Recorded) -> bool:
    try:
        st = path.lstat()
        if recorded.kind == "link":
            return stat.S_ISLNK(st.st_mode) and str(path.readlink()) == recorded.target
        mode = stat.S_IMODE(st.st_mode) & 0o777
        if recorded.kind == "dir":
            return stat.S_ISDIR(st.st_mode) and mode == recorded.mode
        if not stat.S_ISREG(st.st_mode) or (mode, st.st_size) != (recorded.mode, recorded.size):
            return False
        hasher = xxhash.xxh3_64()
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                hasher.update(chunk)
        return bool(hasher.hexdigest() == recorded.digest)
    except OSError:
        return False
