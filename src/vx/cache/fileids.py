"""Content ids for every file a key may read, taken from one git snapshot.

A clean tracked file's id is its index entry, free. A modified or untracked file is read and
hashed the way git hashes a blob, so an edit that is undone gives back the index's id and a
file reads the same whether git tracks it yet or not. An id is `<mode>:<blob>`: the executable
bit and a symlink's target (hashed as the link's text, as git stores it) are part of it.
"""

from __future__ import annotations

import bisect
import os
import stat
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.git import GITLINK_MODE

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from vx.git import GitSnapshot

REGULAR_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"

_CHUNK = 1 << 20


def blob_id(data: bytes) -> str:
    """git's object id for a blob holding `data`."""
    import hashlib  # only dirty files are hashed; a clean tree never loads it

    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def worktree_id(path: Path) -> str | None:
    """The id of what is on disk at `path` now; None for nothing, a directory or a special file."""
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            # Not Path.readlink(): a Path would normalise `./x` or `a//b`, git keeps the text.
            target = os.readlink(os.fsencode(path))  # noqa: PTH115
            return f"{SYMLINK_MODE}:{blob_id(target)}"
        if not stat.S_ISREG(st.st_mode):
            return None
        mode = EXECUTABLE_MODE if st.st_mode & stat.S_IXUSR else REGULAR_MODE
        return f"{mode}:{_hash_file(path)}"
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise UserError(
            ErrorCode.FS,
            f"cannot read {path} to hash it ({exc.strerror}) — make it readable or ignore it in"
            " .gitignore",
        ) from None


def _hash_file(path: Path) -> str:
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        import hashlib

        digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
        seen = 0
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            seen += len(chunk)
    if seen != size:
        # Written to while we read it: hash what one read returns rather than a torn mix.
        return blob_id(path.read_bytes())
    return digest.hexdigest()


class FileTable:
    """Every file vx may hash this run, sorted once, with ids computed on first ask and kept.

    Paths are relative to the workspace root. Deleted files are not in the table; a modified
    file that turns out to be gone (or a directory now) drops out when its id is asked for.
    """

    __slots__ = ("_dirty", "_hashed", "_ids", "_paths", "_root")

    def __init__(self, snap: GitSnapshot, *, exclude: Iterable[str] = ()) -> None:
        """`exclude` names root-relative directories that are never inputs: a cache dir kept
        inside the work tree, which every save would otherwise change."""
        status = snap.status
        self._root = snap.root
        self._ids: dict[str, str | None] = {}
        for path, (mode, blob) in snap.index.items():
            self._ids[path] = f"{mode}:{blob}"
        self._dirty: set[str] = set()
        for path in status.modified | status.untracked:
            found = snap.index.get(path)
            if found is not None and found.mode == GITLINK_MODE:
                # A submodule is keyed by the commit its index entry records; what is checked
                # out inside it is another repository's business and is not read here.
                self._ids[path] = f"{GITLINK_MODE}:{found.blob}:modified"
                continue
            self._ids.pop(path, None)
            self._dirty.add(path)
        for path in status.deleted:
            self._ids.pop(path, None)
            self._dirty.discard(path)
        dropped = tuple(d.rstrip("/") + "/" for d in exclude)
        for path in [p for p in self._dirty if p not in snap.index and _is_vx_own(p, dropped)]:
            self._dirty.discard(path)
        self._paths = sorted(self._ids.keys() | self._dirty)
        self._hashed = 0

    @property
    def paths(self) -> tuple[str, ...]:
        """Every candidate path, sorted; a dirty one may still drop out when read."""
        return tuple(self._paths)

    @property
    def hashed(self) -> int:
        """How many files this table has read from disk so far."""
        return self._hashed

    def id_of(self, path: str) -> str | None:
        """The content id of `path`, or None when the table holds no such file."""
        if path in self._ids:
            return self._ids[path]
        if path not in self._dirty:
            return None
        self._dirty.discard(path)
        self._hashed += 1
        found = worktree_id(self._root / path)
        self._ids[path] = found
        return found

    def paths_with_prefix(self, prefix: str) -> list[str]:
        """Candidate paths that start with the string `prefix` (no directory logic)."""
        lo = bisect.bisect_left(self._paths, prefix)
        hi = lo
        while hi < len(self._paths) and self._paths[hi].startswith(prefix):
            hi += 1
        return self._paths[lo:hi]

    def paths_under(self, rel_dir: str, *, stop_at: Iterable[str] = ()) -> list[str]:
        """Candidate paths inside `rel_dir` (`.` is the root), none inside a `stop_at` dir."""
        base = _dir_prefix(rel_dir)
        lo, hi = self._range(base)
        holes = sorted(
            self._range(p)
            for stop in stop_at
            if (p := _dir_prefix(stop)) != base and p.startswith(base)
        )
        out: list[str] = []
        at = lo
        for start, end in holes:
            if start > at:
                out.extend(self._paths[at : min(start, hi)])
            at = max(at, end)
        if at < hi:
            out.extend(self._paths[at:hi])
        return out

    def files_under(self, rel_dir: str, *, stop_at: Iterable[str] = ()) -> list[tuple[str, str]]:
        """`(path, id)` for every file inside `rel_dir` and outside each `stop_at` dir."""
        out: list[tuple[str, str]] = []
        for path in self.paths_under(rel_dir, stop_at=stop_at):
            found = self.id_of(path)
            if found is not None:
                out.append((path, found))
        return out

    def _range(self, prefix: str) -> tuple[int, int]:
        if not prefix:
            return 0, len(self._paths)
        lo = bisect.bisect_left(self._paths, prefix)
        # Paths under `a/b/` sort before `a/b0`: `0` is the character after `/`.
        hi = bisect.bisect_left(self._paths, prefix[:-1] + "0", lo)
        return lo, hi


def _dir_prefix(rel_dir: str) -> str:
    rel = rel_dir.strip("/")
    return "" if rel in ("", ".") else rel + "/"


def _is_vx_own(path: str, dropped: tuple[str, ...]) -> bool:
    """A file vx itself wrote into the work tree: under an excluded dir, or a restore's staging
    dir left by a crash (`.vx-restore-*`). Tracked files are never dropped."""
    if dropped and path.startswith(dropped):
        return True
    return path.startswith(".vx-restore-") or "/.vx-restore-" in path
