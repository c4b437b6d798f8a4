"""The local cache with a remote layer under it: what a run uses when a plugin supplies one.

A lookup asks the local cache first (when local reads are on), then the remote layer (when
remote reads are on). A remote entry is checked whole (`vx.cache.remote.envelope`), then
kept as an ordinary local entry when local writes are on, so the next run is a plain local
hit; with local writes off it is restored from a scratch store and leaves the local cache as
it was. A save keeps the entry locally (when local writes are on) and hands a copy to the
layer's uploads. `--download toplevel|none` leaves a remote hit's outputs off the disk until a
task executing here depends on it. A shard of a `--shard` run awaits the entries of the
dependencies other shards own: it asks the server again until one lands or its wait runs out,
then runs the task itself, naming the shard that never delivered it.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vx.cache.index import IndexOffError, LogChunk, NewEntry
from vx.cache.manifest import CorruptArtifact
from vx.cache.remote.base import Untrusted
from vx.cache.store import SaveFailed, Store
from vx.events import Notice, Stream
from vx.run.caching import RestoreResult
from vx.run.hits import Hit
from vx.run.localcache import LocalCache, restore_outputs

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from vx.cache.index import Entry, Index
    from vx.cache.remote.envelope import Unpacked
    from vx.cache.remote.layered import RemoteLayer
    from vx.events import Event
    from vx.ids import TaskId
    from vx.run.cachespec import CacheAxes
    from vx.run.caching import Produced
    from vx.run.keys import KeySet
    from vx.run.plan import RunPlan


_KEPT_BATCH = 64  # rows of kept remote entries written together; the rest at `close`
_POLL_FIRST_S = 0.2  # an awaited entry is asked for again after this, then less and less often
_POLL_MOST_S = 2.0


class LayeredCache(LocalCache):
    """A `TaskCache` over the local store and a remote layer; safe across worker threads."""

    def __init__(
        self,
        plan: RunPlan,
        keys: KeySet,
        *,
        store: Store,
        index: Index,
        axes: CacheAxes,
        layer: RemoteLayer[Unpacked],
        deferred: frozenset[TaskId] = frozenset(),
        tracked: Collection[str] = frozenset(),
        awaited: Mapping[TaskId, str] | None = None,
        await_s: float = 0.0,
    ) -> None:
        super().__init__(plan, keys, store=store, index=index, axes=axes, tracked=tracked)
        self.layer = layer
        layer.decode = self._decode  # it knows which entries a restore will read anyway
        self.remote_read = layer.read = axes.remote_read and index.off is None
        self.remote_write = layer.write = axes.remote_write and index.off is None
        self.deferred = deferred
        self._held_keys = frozenset(keys.keys[t] for t in deferred)
        self._remote: dict[TaskId, Unpacked] = {}
        self._held: dict[TaskId, Unpacked] = {}
        self._refused: set[TaskId] = set()  # their remote entries are replaced by this run's
        self._scratch: Path | None = None
        self._unindexed: dict[str, NewEntry] = {}  # kept artifacts whose rows are not written
        self._emit: Callable[[Event], None] | None = None
        self._rlock = threading.Lock()
        self.awaited = awaited or {}  # task → the shard that owns it (`2/4`)
        self.await_s = await_s
        self._stopping = threading.Event()

    def _decode(self, blob: bytes, key: str) -> Unpacked:
        """Check a fetched entry (on the layer's threads). The archive itself is read here only
        for an entry `--download` may hold: one restored at once is read member by member by
        its restore, which moves nothing into place unless every member passes."""
        from vx.cache.remote.envelope import unpack

        return unpack(blob, key, archive=key in self._held_keys)

    def start(self) -> None:
        """Start fetching every key the local cache lacks, as soon as the keys are known, so
        the network waits overlap what the run still does before its first task."""
        if self.remote_read:
            self.layer.prefetch(
                self.keys.keys[t]
                for t in self.plan.order
                if self.cached(t) and self.plan.nodes[t].runs and not self.predicted_hit(t)
            )

    def attach(
        self, emit: Callable[[Event], None], *, stopping: threading.Event | None = None
    ) -> None:
        """Send notices to `emit` from now on (a failure already met is told now); a set
        `stopping` ends any wait for another shard's entry."""
        self._emit = emit
        if stopping is not None:
            self._stopping = stopping
        self.layer.tell_to(lambda line: emit(Notice(f"[vx] {line}")))

    def cached(self, tid: TaskId) -> bool:
        if self.plan.nodes[tid].task.cache_spec is None:
            return False
        return self.axes.answers or self.remote_read or self.remote_write

    def lookup(self, tid: TaskId) -> Hit | None:
        hit = self._lookup(tid)
        owner = self.awaited.get(tid)
        if hit is not None or owner is None or not self.remote_read:
            return hit
        return self._await(tid, owner)

    def _await(self, tid: TaskId, owner: str) -> Hit | None:
        """Ask for the entry shard `owner` will upload until it lands or the wait runs out."""
        deadline = time.monotonic() + self.await_s
        pause = _POLL_FIRST_S
        while not self.layer.down and (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(min(pause, left)):
                return None
            hit = self._lookup(tid)
            if hit is not None:
                return hit
            pause = min(pause * 1.5, _POLL_MOST_S)
        if not self.layer.down:
            self._tell(
                f"{tid}: shard {owner} owns it but did not deliver it within"
                f" {self.await_s:g}s; running it here"
            )
        return None

    def _lookup(self, tid: TaskId) -> Hit | None:
        hit = super().lookup(tid)
        if hit is not None or not self.remote_read or not self.cached(tid):
            return hit
        key = self.keys.keys[tid]
        try:
            unpacked = self.layer.fetch(key)
            if unpacked is None:
                return None
        except Untrusted as err:
            self._tell(f"{tid}: the remote entry {key} was refused ({err}); running it")
            with self._rlock:
                self._refused.add(tid)
            return None
        with self._rlock:
            self._remote[tid] = unpacked
        log = tuple((Stream(s), t) for s, t in unpacked.log)
        return Hit(key, log, unpacked.duration_ms, unpacked.cpu_ms, remote=True)

    def restore(self, tid: TaskId, hit: Hit) -> RestoreResult:
        if not hit.remote:
            return super().restore(tid, hit)
        with self._rlock:
            unpacked = self._remote.pop(tid)
        if tid in self.deferred:
            self._clear_stale(tid, unpacked)
            with self._rlock:
                self._held[tid] = unpacked
            return RestoreResult.UP_TO_DATE
        return self._land(tid, unpacked)

    def _clear_stale(self, tid: TaskId, unpacked: Unpacked) -> None:
        """Clean a deferred task's declared outputs unless they already are the entry's: what
        is left on disk is then this key's outputs or nothing, never an older build's."""
        from vx.cache.outputs import clean_outputs, output_paths

        base, patterns, stops = self.output_globs(self.plan.nodes[tid])
        if not patterns:
            return
        present = output_paths(base, patterns, stop_at=stops)
        if not self.store.up_to_date(base, unpacked.info, present):
            spare = self.spare(self.plan.nodes[tid])
            clean_outputs(base, patterns, stop_at=stops, present=present, spare=spare)

    def prepare(self, tid: TaskId) -> None:
        """Bring home the deferred outputs of every task this one depends on, then clean."""
        if self._held:
            for dep in self._upstream(tid):
                with self._rlock:
                    unpacked = self._held.pop(dep, None)
                if unpacked is not None:
                    self._land(dep, unpacked)
        super().prepare(tid)

    def save(self, tid: TaskId, produced: Produced) -> str | None:
        note = super().save(tid, produced)
        if self.remote_write and self.cached(tid):
            key = self.keys.keys[tid]
            log = tuple((str(s), t) for s, t in produced.log)
            self.layer.upload(
                key,
                lambda: self._blob(tid, key, log, produced),
                duration_ms=produced.duration_ms,
                replace=tid in self._refused,
            )
        return note

    def close(self) -> str | None:
        """Drain the uploads, write the kept entries' rows, then close the local cache; the
        scratch store goes."""
        self.layer.drain()
        self._index_kept()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        return super().close()

    def _land(self, tid: TaskId, unpacked: Unpacked) -> RestoreResult:
        """Keep a checked remote entry (locally, or in a scratch store) and restore from it."""
        store, entry = self._keep(tid, unpacked)
        if entry is None:
            return RestoreResult.CORRUPT
        outputs = self.output_globs(self.plan.nodes[tid])
        log = tuple((Stream(s), t) for s, t in unpacked.log)
        with self._lock:  # the local cache's: `mark_used` swaps the list under it
            self.used.append(unpacked.key)
        spare = self.spare(self.plan.nodes[tid])
        result = restore_outputs(store, self.index, entry, outputs, log, spare=spare)
        if result is RestoreResult.UP_TO_DATE and unpacked.key not in self._held_keys:
            result = self._read_through(store, entry)
        if result in (RestoreResult.CORRUPT, RestoreResult.GONE):  # the re-run's upload
            # replaces the server's entry
            with self._rlock:
                self._refused.add(tid)
                self._unindexed.pop(unpacked.key, None)  # its artifact is gone too
        return result

    def _read_through(self, store: Store, entry: Entry) -> RestoreResult:
        """Read an entry whose outputs were already in place through the validator, since
        `_decode` left that to a restore that did not happen: no remote artifact stays in a
        store unread. A bad one is dropped, as a restore drops it."""
        try:
            store.verify(entry.key, entry.artifact)
        except CorruptArtifact as err:
            if not err.blocked:
                with contextlib.suppress(OSError):
                    self.index.drop_entry(entry.key)
                store.discard(entry.key)
            return RestoreResult.CORRUPT
        return RestoreResult.UP_TO_DATE

    def _keep(self, tid: TaskId, unpacked: Unpacked) -> tuple[Store, Entry | None]:
        from vx.cache.index import Entry

        entry = Entry(
            unpacked.key,
            tid.project,
            tid.task,
            unpacked.info,
            0,
            0,
            unpacked.duration_ms,
            unpacked.cpu_ms,
            unpacked.peak_rss_bytes,
        )
        if not self.axes.local_write:
            with self._rlock:
                if self._scratch is None:
                    self._scratch = Path(tempfile.mkdtemp(prefix="vx-remote-"))
            scratch = Store(self._scratch)
            try:
                scratch.put_bytes(unpacked.key, unpacked.artifact, durable=False)
            except SaveFailed as err:
                self._tell(f"{tid}: {err}; running it")
                return scratch, None
            return scratch, entry
        try:
            self.store.put_bytes(unpacked.key, unpacked.artifact, durable=False)
        except (SaveFailed, OSError) as err:
            self._tell(f"{tid}: the remote entry could not be kept locally ({err})")
            return self.store, entry
        row = NewEntry(
            unpacked.key,
            tid.project,
            tid.task,
            unpacked.info,
            self.keys.components[tid],
            [LogChunk(Stream(s), t) for s, t in unpacked.log],
            unpacked.duration_ms,
            unpacked.cpu_ms,
            unpacked.peak_rss_bytes,
        )
        with self._rlock:
            self._unindexed[unpacked.key] = row
            full = len(self._unindexed) >= _KEPT_BATCH
        if full:
            self._index_kept()
        return self.store, entry

    def _index_kept(self) -> None:
        """Write the rows of the entries kept since the last call, in one transaction: one
        each cost a write lock and a commit per hit, the bulk of a remote hit's local work.
        A run killed first leaves artifacts without rows, which a later hit re-indexes and
        prune reaps; never a row without its artifact."""
        with self._rlock:
            rows, self._unindexed = list(self._unindexed.values()), {}
        try:
            self.index.put_entries(rows)
        except (IndexOffError, OSError) as err:
            self._tell(f"{len(rows)} remote entries could not be kept locally ({err})")

    def _blob(
        self, tid: TaskId, key: str, log: tuple[tuple[str, str], ...], produced: Produced
    ) -> bytes | None:
        """The envelope to upload: the local artifact when one was saved, else one built now."""
        from vx.cache.remote.envelope import pack

        entry = self.index.get_entry(key) if self.axes.local_write else None
        if entry is not None:
            try:
                artifact = self.store.artifact(key).read_bytes()
            except OSError:
                return None
            info = entry.artifact
        else:
            from vx.cache.archive import write_archive
            from vx.cache.outputs import output_paths

            base, patterns, stops = self.output_globs(self.plan.nodes[tid])
            out = io.BytesIO()
            info = write_archive(out, base, output_paths(base, patterns, stop_at=stops))
            artifact = out.getvalue()
        return pack(
            key,
            project=tid.project,
            task=tid.task,
            artifact=artifact,
            info=info,
            log=log,
            duration_ms=produced.duration_ms,
            cpu_ms=produced.cpu_ms,
            peak_rss_bytes=produced.peak_rss_bytes,
        )

    def _upstream(self, tid: TaskId) -> list[TaskId]:
        deps = self.plan.graph.deps
        seen: set[TaskId] = set()
        stack = list(deps.get(tid, ()))
        while stack:
            dep = stack.pop()
            if dep not in seen:
                seen.add(dep)
                stack.extend(deps.get(dep, ()))
        return sorted(seen)

    def _tell(self, line: str) -> None:
        if self._emit is not None:
            with contextlib.suppress(Exception):
                self._emit(Notice(f"[vx] {line}"))
