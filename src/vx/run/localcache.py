"""The local cache answering the executor's questions: probe, restore, clean outputs, save."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING

from vx.cache.index import IndexOffError, LogChunk
from vx.cache.manifest import CorruptArtifact
from vx.cache.outputs import clean_outputs, output_paths, undeclared
from vx.cache.store import SaveFailed
from vx.run.cachespec import OFF
from vx.run.caching import RestoreResult
from vx.run.hits import Hit
from vx.util.record import Record
from vx.workspace.layout import nested_dirs

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable
    from pathlib import Path

    from vx.cache.index import Entry, Index
    from vx.cache.store import Store
    from vx.cache.syncer import Syncer
    from vx.events import Stream
    from vx.ids import TaskId
    from vx.run.cachespec import CacheAxes
    from vx.run.caching import Produced
    from vx.run.keys import KeySet
    from vx.run.plan import PlanNode, RunPlan
    from vx.workspace.model import Workspace


class LocalCache:
    """A `TaskCache` over the local store and index; safe across worker threads.

    An index found damaged mid-run answers nothing from then on: probes miss, saves are
    skipped, and the first skipped save says why once.
    """

    def __init__(
        self,
        plan: RunPlan,
        keys: KeySet,
        *,
        store: Store,
        index: Index,
        axes: CacheAxes,
        clock: Callable[[], float] = time.time,
        tracked: Collection[str] = frozenset(),
    ) -> None:
        """`tracked` holds the root-relative paths git's index lists: cleaning spares them."""
        self.plan = plan
        self.tracked = tracked
        self.clock = clock
        self.keys = keys
        self.store = store
        self.index = index
        self.axes = axes if index.off is None else OFF
        self._nested = _relative_nested(plan.workspace)
        self._probed: dict[TaskId, Entry | None] = {}
        self._matched: dict[TaskId, bool] = {}  # whether a save found any output
        self._lock = threading.Lock()
        self.used: list[str] = []
        self._syncer: Syncer | None = None  # made by the first save: a warm run needs none

    def key(self, tid: TaskId) -> str | None:
        return self.keys.keys.get(tid)

    def cached(self, tid: TaskId) -> bool:
        return self.plan.nodes[tid].task.cache_spec is not None and self.axes.answers

    def probe(self, tid: TaskId) -> Entry | None:
        """The index row for the task's key (looked up once per run), if reads are on."""
        if not self.axes.local_read or not self.cached(tid):
            return None
        with self._lock:
            if tid in self._probed:
                return self._probed[tid]
        entry = self.index.get_entry(self.keys.keys[tid])
        with self._lock:
            self._probed[tid] = entry
        return entry

    def predicted_hit(self, tid: TaskId) -> bool:
        return self.probe(tid) is not None

    def lookup(self, tid: TaskId) -> Hit | None:
        entry = self.probe(tid)
        if entry is None:
            return None
        chunks = self.index.entry_log(entry.key)
        if chunks is None:
            with self._lock:
                self._probed[tid] = None
            return None
        return Hit(entry.key, chunks, entry.duration_ms or 0.0, entry.cpu_ms)

    def restore(self, tid: TaskId, hit: Hit) -> RestoreResult:
        node = self.plan.nodes[tid]
        entry = self.probe(tid)
        if entry is None:
            return RestoreResult.CORRUPT
        base, patterns, stops = self._outputs(node)
        with self._lock:
            self.used.append(hit.key)
        result = restore_outputs(
            self.store,
            self.index,
            entry,
            Outputs(base, patterns, stops),
            hit.log,
            spare=self.spare(node),
        )
        if result in (RestoreResult.CORRUPT, RestoreResult.GONE):
            with self._lock:
                self._probed[tid] = None
        return result

    def prepare(self, tid: TaskId) -> None:
        if not self.cached(tid):
            return
        node = self.plan.nodes[tid]
        base, patterns, stops = self._outputs(node)
        if patterns:
            clean_outputs(base, patterns, stop_at=stops, spare=self.spare(node))

    def save(self, tid: TaskId, produced: Produced) -> str | None:
        if not self.axes.local_write or not self.cached(tid):
            return None
        if self.index.off is not None:
            return self._skipped()
        node = self.plan.nodes[tid]
        key = self.keys.keys[tid]
        base, patterns, stops = self._outputs(node)
        paths = output_paths(base, patterns, stop_at=stops)
        with self._lock:
            self._matched[tid] = bool(paths)
            if self._syncer is None:
                from vx.cache.syncer import Syncer

                self._syncer = Syncer()
            syncer = self._syncer
        try:
            info = self.store.put(key, paths, base, replace=not self.axes.local_read, syncer=syncer)
            self.index.put_entry(
                key,
                project=tid.project,
                task=tid.task,
                artifact=info,
                inputs=self.keys.components[tid],
                log=[LogChunk(stream, text) for stream, text in produced.log],
                duration_ms=produced.duration_ms,
                cpu_ms=produced.cpu_ms,
                peak_rss_bytes=produced.peak_rss_bytes,
            )
        except SaveFailed as err:
            return str(err)
        except IndexOffError:
            return self._skipped()
        except OSError as err:
            return f"cache entry not saved: {err.strerror or err}"
        return None

    def output_globs(self, node: PlanNode) -> Outputs:
        """Where the node's outputs live, their globs there and the dirs their walk skips."""
        return Outputs(*self._outputs(node))

    def unmatched_outputs(self, tid: TaskId) -> str | None:
        """The globs, when the task declares outputs and none is on disk (a save that just
        walked them says so; otherwise they are walked now)."""
        base, patterns, stops = self._outputs(self.plan.nodes[tid])
        if not any(not p.startswith("!") for p in patterns):
            return None
        with self._lock:
            matched = self._matched.get(tid)
        if matched is None:
            matched = bool(output_paths(base, patterns, stop_at=stops))
        return None if matched else ", ".join(patterns)

    def spare(self, node: PlanNode) -> Callable[[str], bool] | None:
        """Whether a path relative to the node's outputs base is one git tracks (None: this
        run knows of no tracked file)."""
        if not self.tracked:
            return None
        cache = node.task.cache_spec
        rel = node.project.rel_dir
        if (cache is not None and cache.outputs.workspace_files) or rel in (".", ""):
            return self.tracked.__contains__
        prefix = rel + "/"
        tracked = self.tracked
        return lambda path: prefix + path in tracked

    def _skipped(self) -> str | None:
        why = self.index.announce()
        return f"cache entry not saved: {why}" if why else None

    def _outputs(self, node: PlanNode) -> tuple[Path, tuple[str, ...], tuple[str, ...]]:
        """Where the node's outputs are archived from, their globs there, and dirs to skip.

        Outputs are relative to the project, unless the task also declares
        `outputs.workspaceFiles`: then the whole set is archived from the workspace root, the
        project's own globs prefixed with its directory.
        """
        cache = node.task.cache_spec
        files = cache.outputs.files if cache else ()
        shared = cache.outputs.workspace_files if cache else ()
        nested = self._nested[node.project.name]
        if not shared:
            return node.project.dir, files, nested
        rel = node.project.rel_dir
        if rel in (".", ""):
            return self.plan.workspace.root, (*files, *shared), nested
        prefixed = tuple(f"!{rel}/{p[1:]}" if p.startswith("!") else f"{rel}/{p}" for p in files)
        return (
            self.plan.workspace.root,
            (*prefixed, *shared),
            tuple(f"{rel}/{d}" for d in nested),
        )

    from vx.events import Stream

    def mark_used(self) -> None:
        """Mark the entries this run used so far as used now (what retention's age reads)."""
        with self._lock:
            used, self.used = self.used, []
        with contextlib.suppress(OSError):
            self.index.touch(used)

    def close(self) -> str | None:
        """Mark the entries this run used, then let go of the index, moving aside one found
        damaged; the line to print when that damage was not told before. The artifacts this
        run saved are synced to disk first."""
        if self._syncer is not None:
            self._syncer.close()
        self.mark_used()
        note = self.index.recover()
        self.index.close()
        return note


def _relative_nested(ws: Workspace) -> dict[str, tuple[str, ...]]:
    """Each project's nested projects relative to it: its outputs stop where theirs begin."""
    nested = nested_dirs(ws)
    out: dict[str, tuple[str, ...]] = {}
    for project in ws.projects:
        cut = 0 if project.rel_dir in (".", "") else len(project.rel_dir) + 1
        out[project.name] = tuple(d[cut:] for d in nested[project.name])
    return out


class Outputs(Record):
    """Where a task's outputs live, their globs there, and the directories their walk skips."""

    base: Path
    patterns: tuple[str, ...]
    stops: tuple[str, ...]


def restore_outputs(
    store: Store,
    index: Index | None,
    entry: Entry,
    outputs: Outputs,
    log: Iterable[tuple[Stream, str]],
    *,
    spare: Callable[[str], bool] | None = None,
) -> RestoreResult:
    """Find an entry's outputs already in place or put them there; CORRUPT having written nothing.

    The one place a hit touches outputs, shared by the scheduler's restore lane and the warm
    path. An entry holding a path the task's outputs would not match is corrupt before
    anything is cleaned. An entry that recorded no outputs for a task that declares some is up
    to date only once its artifact is read and found empty. A bad entry is dropped; one the
    disk refused (`blocked`) is kept for a later run. With no `index` (a forked worker, which
    must not use its parent's connection) a bad entry is only reported, and the caller acts.
    """
    del log  # what a signed entry vouches for besides its artifact
    base, patterns, stops = outputs
    if undeclared(entry.artifact.manifest, patterns, stop_at=stops) is not None:
        _drop(store, index, entry.key)
        return RestoreResult.CORRUPT
    present = output_paths(base, patterns, stop_at=stops)
    try:
        if store.up_to_date(base, entry.artifact, present):
            if patterns and not entry.artifact.manifest:
                store.verify(entry.key, entry.artifact)
            return RestoreResult.UP_TO_DATE
        clean_outputs(base, patterns, stop_at=stops, present=present, spare=spare)
        store.restore(entry.key, base, entry.artifact)
    except CorruptArtifact as err:
        if not err.blocked:
            _drop(store, index, entry.key)
        return RestoreResult.GONE if err.missing else RestoreResult.CORRUPT
    return RestoreResult.RESTORED


def _drop(store: Store, index: Index | None, key: str) -> None:
    """Forget a bad entry, row and artifact, so the next save of its key lands; without an
    index, nothing (the caller reports the entry and whoever holds the index acts).

    A row that cannot be dropped now (a full disk) still gave a miss; the next run that finds
    it drops it.
    """
    if index is None:
        return
    with contextlib.suppress(OSError):
        index.drop_entry(key)
    store.discard(key)
