"""Declared outputs on disk: find what a task's output globs hold, clean it, check the globs."""

from __future__ import annotations

import functools
import os
import stat
from typing import TYPE_CHECKING

from vx.errors import ConfigError
from vx.util.globs import compile_globs, fixed_prefix

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

    from vx.cache.manifest import Recorded
    from vx.util.globs import Matcher

_SKIP_DIRS = frozenset({".git", "node_modules"})


def output_paths(base: Path, patterns: Sequence[str], *, stop_at: Iterable[str] = ()) -> list[str]:
    """Every file, symlink and empty directory under `base` the globs select (POSIX, relative
    to base), sorted.

    Walks only below each positive pattern's literal prefix, never into `.git`,
    `node_modules`, a nested project (`stop_at`, relative to base) or through a symlinked dir,
    and never from a prefix that resolves outside `base` (a `..`, or a symlinked dir on the
    way): what it returns is what cleaning may delete.
    """
    return sorted(_select(str(base), patterns, frozenset(stop_at), None))


def output_tree(
    base: Path, patterns: Sequence[str], *, stop_at: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """`output_paths`, and every directory its walk entered (relative to base, "" for base).

    One walk for both: the warm path fingerprints the directories as well as the files, so
    that an output added or removed there shows.
    """
    entered: list[str] = []
    found = _select(str(base), patterns, frozenset(stop_at), entered)
    return sorted(found), entered


def _select(
    base: str, patterns: Sequence[str], stops: frozenset[str], entered: list[str] | None
) -> set[str]:
    if not patterns:
        return set()
    matcher = compile_globs(patterns)
    inside = _Inside(base)
    found: set[str] = set()
    for start in _starts(matcher):
        top = os.path.join(base, start) if start else base  # noqa: PTH118  str paths: hot
        if start:
            try:
                mode = os.lstat(top).st_mode
            except OSError:  # absent, a prefix too long to name (ENAMETOOLONG), unreadable
                continue
            if stat.S_ISLNK(mode):
                if inside.holds_entry(start) and matcher.match(start):
                    found.add(start)
                continue
            if not inside.holds_dir(start):
                continue
            if not stat.S_ISDIR(mode):
                if stat.S_ISREG(mode) and matcher.match(start):
                    found.add(start)
                continue
        for dirpath, dirnames, filenames in os.walk(top):
            rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            if entered is not None:
                entered.append(rel_dir)
            if rel_dir and not dirnames and not filenames and matcher.match(rel_dir):
                found.add(rel_dir)  # an empty dir the task made is an output too
            keep = []
            for name in dirnames:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if name in _SKIP_DIRS or rel in stops:
                    continue
                if os.path.islink(os.path.join(dirpath, name)):  # noqa: PTH114, PTH118
                    if matcher.match(rel):
                        found.add(rel)
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in filenames:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if matcher.match(rel):
                    found.add(rel)
    return found


def undeclared(
    recorded: Iterable[Recorded], patterns: Sequence[str], *, stop_at: Iterable[str] = ()
) -> str | None:
    """The first path of an entry that the task's outputs would not hold; None when all are.

    A file or a link must be one `output_paths` could have found: the globs select it, and
    below where the walk starts it lies in no `.git` or `node_modules` dir and no nested
    project (`stop_at`). A directory must hold such a path, or be selected itself. An entry
    is data anyone who can write to the store may have planted (another checkout, a shared
    cache dir): this keeps its restore inside what the task owns.
    """
    matcher = compile_globs(patterns)
    starts = _starts(matcher)
    stops = frozenset(stop_at)
    held: set[str] = set()
    dirs: list[str] = []
    for entry in recorded:
        if not _root_relative(entry.path):
            return entry.path
        if entry.kind == "dir":
            dirs.append(entry.path)
            continue
        if not _selects(matcher, starts, stops, entry.path, leaf_is_dir=False):
            return entry.path
        parent = entry.path.rpartition("/")[0]
        while parent and parent not in held:
            held.add(parent)
            parent = parent.rpartition("/")[0]
    for path in dirs:
        if path not in held and not _selects(matcher, starts, stops, path, leaf_is_dir=True):
            return path
    return None


def _root_relative(path: str) -> bool:
    """Whether `path` is in the one spelling a save records: no `/` at either end, no `.`,
    `..` or empty segment."""
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _selects(
    matcher: Matcher, starts: Sequence[str], stops: frozenset[str], path: str, *, leaf_is_dir: bool
) -> bool:
    """Whether the output walk, finding `path` on disk, would return (or enter) it."""
    if not matcher.match(path):
        return False
    for start in starts:
        if start and path != start and not path.startswith(start + "/"):
            continue
        names = path[len(start) :].lstrip("/").split("/")
        rel = start
        for name in names if leaf_is_dir else names[:-1]:
            rel = f"{rel}/{name}" if rel else name
            if name in _SKIP_DIRS or rel in stops:
                return False
        return True
    return False


def clean_outputs(
    base: Path,
    patterns: Sequence[str],
    *,
    stop_at: Iterable[str] = (),
    present: Sequence[str] | None = None,
    spare: Callable[[str], bool] | None = None,
) -> None:
    """Delete what the globs select, then the directories that emptied and the globs select.

    A path a `!` entry takes back is neither deleted nor has its directory removed. Each path
    is checked again just before it goes: one whose directory resolves outside `base` is
    left alone, and a symlink is removed itself, never followed. `present` is what
    `output_paths` just found, when the caller has it: the walk is then not repeated.
    `spare(rel)` says a path is one git tracks: it is never deleted, nor the tree holding it
    moved away. Loading refuses an output glob that selects a tracked file; this is the last
    guard, for a file committed since, or a caller that skipped that check.
    """
    matcher = compile_globs(patterns)
    stops = frozenset(stop_at)
    inside = _Inside(str(base))
    dropped = False
    for start in _starts(matcher):
        dropped = _drop_whole(base, start, matcher, stops, inside, spare) or dropped
    paths = (
        present
        if present is not None and not dropped
        else output_paths(base, patterns, stop_at=stops)
    )
    dirs: set[str] = set()
    for rel in paths:
        if not inside.holds_entry(rel) or (spare is not None and spare(rel)):
            continue
        target = base / rel
        if target.is_dir() and not target.is_symlink():
            if spare is not None and _holds_spared(base, rel, spare):
                continue
            import shutil  # only for a tree where a file was: a restore need not load it

            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        parent = rel.rpartition("/")[0]
        while parent:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    for rel in sorted(dirs, key=lambda d: -d.count("/")):
        if (matcher.match(rel) or matcher.match(rel + "/")) and inside.holds_entry(rel):
            try:
                (base / rel).rmdir()
            except OSError:
                continue


def _holds_spared(base: Path, rel: str, spare: Callable[[str], bool]) -> bool:
    """Whether the tree `rel` holds a path `spare` keeps."""
    for dirpath, _, filenames in os.walk(base / rel):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        if any(spare(f"{rel_dir}/{name}") for name in filenames):
            return True
    return False


def _drop_whole(
    base: Path,
    start: str,
    matcher: Matcher,
    stops: frozenset[str],
    inside: _Inside,
    spare: Callable[[str], bool] | None,
) -> bool:
    """Remove the directory `start` in one rename when the globs select all of it.

    Deleting an output tree file by file lets a crash (a kill, a power cut) leave part of
    an old build beside nothing: neither the old outputs nor none. A tree whose every entry
    is selected is instead renamed into a `.vx-restore-*` dir in `base` (which the next run
    sweeps if this one dies) and removed from there, so it is whole or gone. A tree holding
    anything the globs leave alone (a `!` entry, a nested project, `node_modules`) is not.
    Whether the tree went.
    """
    top = base / start
    if not start or not (matcher.match(start) or matcher.match(start + "/")):
        return False
    try:
        if not stat.S_ISDIR(os.lstat(top).st_mode) or not inside.holds_dir(start):
            return False
    except OSError:
        return False
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        for name in (*dirnames, *filenames):
            rel = f"{rel_dir}/{name}"
            if name in _SKIP_DIRS or rel in stops or not matcher.match(rel):
                return False
            if spare is not None and spare(rel):
                return False
    import shutil

    from vx.cache.staging import new_private_dir

    try:
        trash = new_private_dir(base)
    except OSError:  # a project dir vx may not write in: the file-by-file clean still can
        return False
    try:
        top.rename(trash / "old")
    except OSError:  # another file system below (EXDEV), or a busy mount point
        trash.rmdir()
        return False
    shutil.rmtree(trash, ignore_errors=True)
    return True


class _Inside:
    """Answers whether a relative path stays inside `base` once symlinks are resolved.

    `base` itself may be a link (a member linked into the workspace): it is the resolved base
    that paths are held against. A directory reached through real directories only (one
    `lstat` each, kept per directory, since a clean asks about every file of an output tree)
    is inside without resolving anything; only a path with a symlink on the way pays for a
    `realpath` of it and of the base.
    """

    __slots__ = ("_base", "_real", "_seen")

    def __init__(self, base: str) -> None:
        self._base = base
        self._real: str | None = None
        self._seen: dict[str, bool] = {"": True}

    def holds_dir(self, rel: str) -> bool:
        """Whether the directory `rel` (following every link on the way) lies inside."""
        known = self._seen.get(rel)
        if known is None:
            if rel.startswith("/") or ".." in rel.split("/"):
                known = False
            elif self.holds_dir(rel.rpartition("/")[0]) and _plain_dir(f"{self._base}/{rel}"):
                known = True
            else:
                if self._real is None:
                    self._real = os.path.realpath(self._base)
                real = os.path.realpath(f"{self._base}/{rel}")
                known = real == self._real or real.startswith(self._real.rstrip(os.sep) + os.sep)
            self._seen[rel] = known
        return known

    def holds_entry(self, rel: str) -> bool:
        """Whether the entry `rel` itself (a file, a dir or a link, unfollowed) lies inside."""
        name = rel.rpartition("/")[2]
        if not rel or name in ("", ".", ".."):
            return False
        return self.holds_dir(rel.rpartition("/")[0])


def _plain_dir(path: str) -> bool:
    """A directory on disk that is not a symlink."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _starts(matcher: Matcher) -> tuple[str, ...]:
    """The literal prefixes to walk, with any prefix that lies under another dropped."""
    return _starts_of(matcher.patterns)


@functools.lru_cache(maxsize=1024)
def _starts_of(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """`_starts` per pattern list: a restore asks for them twice per task, and hundreds of
    tasks share a handful of lists."""
    prefixes = sorted({fixed_prefix(p) for p in patterns if not p.startswith("!")})
    kept: list[str] = []
    for prefix in prefixes:
        if any(prefix == k or prefix.startswith(k + "/") or not k for k in kept):
            continue
        kept.append(prefix)
    return tuple(kept)


def check_own_files(path: str, task: str, patterns: Sequence[str], own: Iterable[str]) -> None:
    """Refuse output globs that cover the project's own manifest or vx config.

    Cleaning outputs before a run would delete them.
    """
    matcher = compile_globs(patterns)
    for name in own:
        if matcher.match(name):
            raise ConfigError(
                path,
                f"covers {name}, which vx would delete when it cleans the outputs"
                " — narrow the glob",
                f"tasks.{task}.cache.outputs.files",
            )


def prefixes_overlap(a: Sequence[str], b: Sequence[str]) -> tuple[str, str] | None:
    """Two glob lists whose walks could meet: a pair of literal prefixes, one holding the other."""
    for pa in compile_globs(a).includes:
        for pb in compile_globs(b).includes:
            x, y = fixed_prefix(pa), fixed_prefix(pb)
            if not x or not y or x == y or x.startswith(y + "/") or y.startswith(x + "/"):
                return pa, pb
    return None
