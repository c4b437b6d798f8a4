"""Which heard paths are edits: the path rules, then the settled state, then the self-write notice.

A cycle's own writes must never start the next cycle, or the loop feeds itself. Three layers
keep it from doing so. By path: what vx owns (`.vx`, the cache directory), what tools churn
(`node_modules`, `.git`, editor swap files, `.tsbuildinfo`), and the outputs tasks declare
that no task of the run reads. By settled state: a file judged by its bytes and mode, a
directory by its entries, a symlink by its target, so a task rewriting what it already left
(`rm -rf dist && tsc`, undeclared) costs one cycle, not a loop. And for a file rewritten with
different bytes on every run, a notice naming it and the remedy.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import xxhash

from vx.util.globs import compile_globs, fixed_prefix, has_magic, normalize
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vx.util.globs import Matcher

ALWAYS_IGNORED = frozenset({"node_modules", ".git", ".vx"})
IGNORED_SUFFIXES = ("~", ".tsbuildinfo")
SELF_WRITE_STREAK = 3


def always_ignored(rel: str) -> bool:
    """A path (root-relative, POSIX) no cycle can come from, whatever the tasks declare."""
    parts = rel.split("/")
    return any(p in ALWAYS_IGNORED for p in parts) or rel.endswith(IGNORED_SUFFIXES)


class TaskFiles(Record):
    """One task's declared outputs and inputs, root-relative globs (`!` kept)."""

    outputs: tuple[str, ...]
    inputs: tuple[str, ...]


def _as_trees(globs: Iterable[str]) -> list[str]:
    """A literal entry means the file or its whole tree, as the output schema says."""
    out: list[str] = []
    for glob in globs:
        out.append(glob)
        body = glob.removeprefix("!")
        if not has_magic(body):
            out.append(("!" if glob.startswith("!") else "") + body.rstrip("/") + "/**")
    return out


def _containers(globs: Iterable[str], bases: Iterable[str]) -> set[str]:
    """The directories holding each output tree and their ancestors, short of a project dir.

    The clean before a miss removes `dist` and the task makes it again: `dist` coming and
    going is the task's own doing, though `dist/**` does not match `dist/../` parents.
    """
    stops = set(bases)
    found: set[str] = set()
    for glob in globs:
        if glob.startswith("!"):
            continue
        prefix = fixed_prefix(glob)
        while prefix and prefix not in stops:
            found.add(prefix)
            prefix = prefix.rpartition("/")[0]
    return found


class PathRules:
    """The path half of the judgement: what is dropped before any state is read.

    `cache_dirs` are absolute paths of what vx itself writes (cache directories, and a file
    its own stdout or stderr goes to), each dropped with everything under it; `tasks` are
    the run's tasks' declared files; `project_dirs` the root-relative project directories
    (an output container never climbs past one).
    """

    def __init__(
        self,
        root: str,
        *,
        cache_dirs: Iterable[str] = (),
        tasks: Iterable[TaskFiles] = (),
        project_dirs: Iterable[str] = (),
    ) -> None:
        self.root = root
        self._cache_dirs = tuple(os.path.normpath(d) for d in cache_dirs)
        self._writers: list[Matcher] = []
        self._readers: list[Matcher | None] = []
        containers: set[str] = set()
        bases = {d for d in project_dirs if d and d != "."}
        for task in tasks:
            if not task.outputs:
                continue
            self._writers.append(compile_globs(_as_trees(task.outputs)))
            containers |= _containers(task.outputs, bases)
        self._tasks = [
            (compile_globs(_as_trees(t.outputs)) if t.outputs else None, compile_globs(t.inputs))
            for t in tasks
            if t.inputs or t.outputs
        ]
        self._containers = frozenset(containers)

    def relative(self, path: str) -> str | None:
        """`path` relative to the root, POSIX; None outside it."""
        rel = os.path.relpath(path, self.root)
        if rel == ".":
            return ""
        if rel.startswith(".."):
            return None
        return rel.replace(os.sep, "/")

    def ignored(self, path: str) -> bool:
        """True for a path no cycle may start from; `path` is absolute."""
        if any(path == d or path.startswith(d + os.sep) for d in self._cache_dirs):
            return True
        rel = self.relative(path)
        if rel is None:
            return True
        if always_ignored(rel):
            return True
        return self._output(rel)

    def skip_dir(self, path: str) -> bool:
        """A directory a poller never walks: one whose whole tree `ignored` drops."""
        return self.ignored(path)

    def _output(self, rel: str) -> bool:
        """Declared by some task as an output, and read by no task that does not write it."""
        if rel in self._containers:
            return True
        writers = [i for i, (outs, _) in enumerate(self._tasks) if outs and outs.match(rel)]
        if not writers:
            return False
        return not any(
            i not in writers and ins.match(rel) for i, (_, ins) in enumerate(self._tasks)
        )


def rebase(rel_dir: str, globs: Iterable[str]) -> tuple[str, ...]:
    """Project-relative globs as root-relative ones (`!` kept in front)."""
    prefix = "" if rel_dir in ("", ".") else f"{rel_dir}/"
    out = []
    for glob in globs:
        neg = glob.startswith("!")
        body = normalize(glob.removeprefix("!"))
        out.append(("!" if neg else "") + prefix + body)
    return tuple(out)


ABSENT: tuple[str, ...] = ("absent",)


def settled_state(path: str) -> tuple[object, ...]:
    """What a key can see of `path` now: bytes and mode, entries, a link's target, or absence."""
    try:
        st = os.lstat(path)
    except OSError:
        return ABSENT
    if stat.S_ISLNK(st.st_mode):
        try:
            return ("link", os.readlink(path))
        except OSError:
            return ABSENT
    if stat.S_ISDIR(st.st_mode):
        try:
            entries = sorted(
                (e.name, -1 if e.is_dir(follow_symlinks=False) else _size(e))
                for e in os.scandir(path)
            )
        except OSError:
            return ABSENT
        return ("dir", tuple(entries))
    digest = xxhash.xxh3_64()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return ABSENT
    return ("file", st.st_mode & 0o777, digest.hexdigest())


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return -2


def changed_since(path: str, armed_at: float) -> bool:
    """A path never judged before counts if it moved after the arm: the later of mtime and
    ctime (a `mv` or `cp -p` keeps an old mtime but not its ctime); a symlink's own times."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return max(st.st_mtime, st.st_ctime) >= armed_at


class StateJudge:
    """Remembers each path's last judged state; `edited` says whether it differs now.

    `tracked(rel)` says whether git listed the path at the arm: a path it did not, first
    seen already gone (an editor's write probe, a lock file), is no edit.
    """

    def __init__(
        self, rules: PathRules, *, armed_at: float, tracked: Callable[[str], bool]
    ) -> None:
        self.rules = rules
        self.armed_at = armed_at
        self._tracked = tracked
        self._last: dict[str, tuple[object, ...]] = {}

    def edited(self, path: str) -> bool:
        """Judge one settled path, and remember what it was judged as."""
        now = settled_state(path)
        before = self._last.get(path)
        self._last[path] = now
        if before is not None:
            return before != now
        if now == ABSENT:
            rel = self.rules.relative(path)
            return rel is not None and self._tracked(rel)
        return changed_since(path, self.armed_at)


class SelfWrites:
    """Counts cycles in a row started by one path heard during the cycle before; says it once."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._streak = 0
        self._said: set[str] = set()

    def cycle(self, path: str, *, after_run: bool) -> int:
        """Note the path that started a cycle; return its streak (0 when it is not one)."""
        if not after_run or path != self._path:
            self._path = path if after_run else None
            self._streak = 1 if after_run else 0
            return self._streak
        self._streak += 1
        return self._streak

    def notice(self, path: str, rel: str, *, server: bool) -> str | None:
        """The one line for a path at its third cycle in a row; None before, or once said."""
        if self._path != path or self._streak < SELF_WRITE_STREAK or path in self._said:
            return None
        self._said.add(path)
        if server:
            remedy = "git-ignore it (.gitignore): a persistent task declares no outputs"
        else:
            remedy = "declare it an output (cache.outputs.files) or git-ignore it"
        return (
            f"vx watch: {rel} changed during each of the last {SELF_WRITE_STREAK} cycles:"
            f" a task rewrites it on every run — {remedy}"
        )
