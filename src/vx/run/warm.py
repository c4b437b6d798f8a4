"""The warm path: replay the last identical all-cached run when nothing it read has changed.

A run whose every task was up to date leaves a snapshot beside the user's vx home, named for
the invocation's shape (its words, flags, directory and the variables vx itself reads). The
snapshot lists every path that run's answer came from with its `lstat` fingerprint (mtime,
ctime, size, inode, mode): configs and manifests, the directories members were listed from,
every input file, every declared output and the directories holding them, and git's index and
HEAD. It also keeps `git status`'s exact bytes, the digests of the variables keys read, each
entry's size and digest, and the rows to print; the logs are read from the index (which holds
them compressed) as they are replayed.

The next run with that shape proves the snapshot still holds (every fingerprint equal, the
same `git status`, the same variables, every entry still in the index as it was) and replays
it; any doubt falls back to the full path. A path changed within `_RACY_NS` of the recording
run's start (git's "racily clean" problem: a second write in the same timestamp tick leaves
the fingerprint as it was) makes the run record no snapshot at all.

This module must stay cheap to import: a replay never loads the config loader, the
validators, the graph builder, the scheduler or `subprocess`.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Protocol

    from vx.cache.index import Entry, Index, Logs
    from vx.events import Event
    from vx.git import GitSnapshot
    from vx.ids import TaskId
    from vx.run.caching import RestoreResult
    from vx.run.keys import KeySet
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan
    from vx.run.prepare import PreparedRun, RunOptions
    from vx.workspace.config_reads import ConfigReads

    class Seen(Protocol):
        """What a planning pass read, as `proof` needs it: a `PreparedRun` or a `PlanWitness`."""

        @property
        def options(self) -> RunOptions: ...
        @property
        def plan(self) -> RunPlan: ...
        @property
        def keys(self) -> KeySet: ...
        @property
        def git(self) -> GitSnapshot: ...
        @property
        def env(self) -> Mapping[str, str]: ...
        @property
        def started_ns(self) -> int: ...
        @property
        def config_modules(self) -> tuple[str, ...]: ...
        @property
        def config_reads(self) -> ConfigReads | None: ...
        @property
        def refs_seen(self) -> tuple[tuple[str, ...], bytes | None] | None: ...


SNAPSHOT_VERSION = 5
"""Bumping it orphans every snapshot (a full run writes a new one)."""

# Variables vx reads itself, outside any key: a change gives another shape.
SHAPE_ENV = (
    "HOME",
    "VX_CACHE_DIR",
    "VX_TASK_TIMEOUT",
    "VX_KILL_GRACE_MS",
    "VX_READY_NOTICE_MS",
    "VX_RUN_WORKSPACE",
    "VX_RUN_TASK",
)
# Root files that decide which projects and configs exist, beside what keys already read.
ROOT_FILES = (
    "package.json",
    "pnpm-workspace.yaml",
    "pyproject.toml",
    "vx.workspace.json",
    "vx.workspace.toml",
    "vx.workspace.py",
)
# Where a project could declare itself: a new spelling beside the old one must be seen.
PROJECT_FILES = (
    "package.json",
    "pyproject.toml",
    "vx.config.json",
    "vx.config.toml",
    "vx.config.py",
)
# With `tasksFrom`, where turbo.json / nx.json / project.json may be, beside those above.
LIVE_ROOT_FILES = ("turbo.json", "turbo.jsonc", "nx.json")
LIVE_PROJECT_FILES = ("turbo.json", "turbo.jsonc", "project.json")
_RACY_NS = 50_000_000
_COARSE_RACY_NS = 2_000_000_000  # file systems that keep whole seconds (FAT keeps two)
_RENEW_AFTER_S = 3600.0
_RETENTION_STAMP = "retention.stamp"  # vx.cache.evict.STAMP_NAME, named here to skip its import

Fingerprint = tuple[int, ...]

# The fields of a snapshot's `finished` row.
_KEY, _BASE, _PATTERNS, _STOPS, _OUTPUTS, _VERIFY = 2, 5, 6, 7, 8, 9


def _fingerprint(path: str) -> Fingerprint:
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def shape_of(options: RunOptions, env: Mapping[str, str]) -> tuple[object, ...]:
    from vx import __version__

    cwd = os.path.realpath(options.cwd if options.cwd is not None else os.getcwd())
    excluded = options.exclude_dependencies
    return (
        SNAPSHOT_VERSION,
        __version__,
        sys.version,
        cwd,
        tuple(options.tasks),
        options.all,
        tuple(options.filters),
        tuple(options.forward),
        excluded if isinstance(excluded, bool) else tuple(sorted(excluded)),
        str(options.concurrency),
        options.continue_mode,
        options.retry,
        options.timeout_ms,
        options.force,
        options.no_cache,
        options.cache,
        options.cache_dir,
        options.summarize,
        tuple(options.tags),
        options.command,
        options.affected,
        tuple(options.ci_bases),
        tuple(_digest(env.get(name)) for name in SHAPE_ENV),
    )


def _digest(value: str | None) -> str | None:
    """A variable as the snapshot keeps it: a digest, so no value (a key, a token) is stored."""
    if value is None:
        return None
    return str(xxhash.xxh3_64_hexdigest(value.encode("utf-8", "surrogateescape")))


def snapshot_path(shape: tuple[object, ...], env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or str(Path.home())
    name = xxhash.xxh3_64_hexdigest(repr(shape).encode("utf-8", "surrogateescape"))
    return Path(home, ".vx", "warm", f"{name}.marshal")


def _env(options: RunOptions) -> Mapping[str, str]:
    return os.environ if options.env is None else options.env


# replaying


def replay(options: RunOptions, emit: Callable[[Event], None]) -> RunOutcome | None:
    """The run, replayed from its snapshot, or None when the snapshot cannot be proven."""
    if options.pick is not None and not options.tasks:
        return None
    env = _env(options)
    shape = shape_of(options, env)
    snap = read_snapshot(snapshot_path(shape, env), shape)
    if snap is None:
        return None
    try:
        return _replay(snap, options, env, emit)
    except (OSError, KeyError, ValueError, TypeError, IndexError):
        return None


def stats_hold(snap: dict[str, object], env: Mapping[str, str]) -> bool:
    """The fingerprints, the variables and the refs as the snapshot recorded them."""
    paths = snap["paths"]
    fingerprints = snap["fingerprints"]
    assert isinstance(paths, list)  # noqa: S101  shapes were checked when it was written
    assert isinstance(fingerprints, list)  # noqa: S101
    for path, recorded in zip(paths, fingerprints, strict=True):
        if _fingerprint(path) != recorded:
            return False
    patterns = snap["env_prefixes"]
    assert isinstance(patterns, list)  # noqa: S101
    for prefix, names in patterns:
        if sorted(name for name in env if name.startswith(prefix)) != names:
            return False  # a variable an `inputs.env` pattern matches came or went
    envs = snap["env"]
    assert isinstance(envs, list)  # noqa: S101
    if envs:
        from vx.cache.key import env_digest

        if any(env_digest(env.get(name)) != digest for name, digest in envs):
            return False
    from vx.git import refs_output

    refs = snap["refs"]
    assert isinstance(refs, list)  # noqa: S101
    return not refs or refs_output(Path(str(snap["root"])), refs, env) == snap["refs_out"]


def _without_staging(raw: bytes | None) -> bytes | None:
    """`git status` bytes less the entries of vx's own restore staging dirs: a restore killed
    mid-way leaves one untracked, and the replay that restores those outputs sweeps it."""
    if raw is None or b".vx-restore-" not in raw:
        return raw
    kept = [e for e in raw.split(b"\0") if b"/.vx-restore-" not in e and e[3:15] != b".vx-restore-"]
    return b"\0".join(kept)


def _replay(
    snap: dict[str, object],
    options: RunOptions,
    env: Mapping[str, str],
    emit: Callable[[Event], None],
) -> RunOutcome | None:
    from vx.cache.runlock import acquire_run_lock
    from vx.events import Notice

    t0 = time.monotonic()
    started_at = time.time()
    root = Path(str(snap["root"]))

    def waiting(pid: int) -> None:
        emit(Notice(f"[vx] waiting for another vx run (pid {pid}) on this workspace to finish…"))

    # Proven under the lock: a run that held it may have changed everything this one reads.
    with acquire_run_lock(root, on_wait=waiting):
        proven = _prove(snap, env)
        if proven is None:
            return None
        index, logs, restored, processes = proven
        try:
            outcome = _emit_all(snap, emit, t0, started_at, restored, logs)
            _record(index, snap, outcome, options, env)
            entries = snap["entries"]
            assert isinstance(entries, list)  # noqa: S101
            with contextlib.suppress(OSError):
                index.touch([key for key, _, _ in entries])
            _retain(snap, Path(str(snap["store"])), index)
        finally:
            index.close()
        if restored:
            with contextlib.suppress(OSError):  # the rows are out: a stale snapshot only
                _refresh(snap, restored, options, env)  # means the next run checks again
    if options.timing:
        lines = [f"  warm replay  {(time.monotonic() - t0) * 1000:9.1f}ms"]
        if restored:
            lines.append(f"  settled      {len(restored):9d} outputs in {processes} process(es)")
        emit(Notice("[vx] timing\n" + "\n".join(lines)))
    from vx.events import RunFinished

    emit(RunFinished(0, outcome.wall_ms))
    return outcome


def _prove(
    snap: dict[str, object], env: Mapping[str, str]
) -> tuple[Index, Logs, dict[int, bool], int] | None:
    """The snapshot proven, then every output it names put in place: the open index, each
    entry's log (proven to read), which tasks were restored and how many processes shared
    that; None when anything differs.

    `git status` starts first and is read last: the fingerprint and index checks, and the
    imports a restore needs, run while git walks the work tree. Outputs are touched only once
    git's answer holds too: a config that only git sees edited may have changed what a task's
    outputs are, and a restore by the old globs would clean files the new ones leave alone, or
    bring back outputs of a task the full run then never reaches.
    """
    from vx.git import status_output

    status = status_output(Path(str(snap["root"])), env)
    index: Index | None = None
    entries: dict[int, Entry | None] = {}
    logs: Logs | None = None
    try:
        try:
            if stats_hold(snap, env):
                index = _checked_index(snap)
                if index is not None:
                    logs = index.entry_logs([str(row[_KEY]) for row in _rows(snap)])
                    entries = _pending_entries(snap, index)
        finally:
            raw = status()  # always: no git is left behind when a check fails first
        if index is None:
            return None
        settled = None
        if logs is not None and _without_staging(raw) == snap["status"]:
            settled = _settle_outputs(snap, entries, index, Path(str(snap["store"])), logs)
    except BaseException:
        if index is not None:
            index.close()
        raise
    if settled is None or logs is None:
        index.close()
        return None
    return index, logs, *settled


def _rows(snap: dict[str, object]) -> list[tuple[object, ...]]:
    rows = snap["finished"]
    assert isinstance(rows, list)  # noqa: S101
    return rows


def _checked_index(snap: dict[str, object]) -> Index | None:
    """The store's index, open, with every entry the snapshot names as it was then (each
    artifact's use renewed as a restore would); None, closed, when the index cannot say so."""
    from vx.cache.index import open_index

    store = Path(str(snap["store"]))
    entries = snap["entries"]
    assert isinstance(entries, list)  # noqa: S101
    try:
        index = open_index(store)
    except OSError:
        return None  # a disk refusing the index: the full path runs without the cache
    try:
        keys = [key for key, _, _ in entries]
        if index.notice is not None or index.entry_digests(keys) != {
            key: (size, digest) for key, size, digest in entries
        }:
            index.close()
            return None
        now = time.time()
        for key in keys:
            artifact = store / f"{key}.tar.zst"
            if now - artifact.stat().st_mtime > _RENEW_AFTER_S:
                with contextlib.suppress(OSError):
                    os.utime(artifact, (now, now))
    except BaseException:
        index.close()
        raise
    return index


def _retain(snap: dict[str, object], store: Path, index: Index) -> None:
    """The workspace's `cacheRetention` on a replay, at most hourly: a replay adds no bytes,
    so only the last pass's age makes one due, and a fresh stamp costs one `stat`."""
    spec = snap.get("retention")
    if not isinstance(spec, tuple):
        return
    try:
        if time.time() - (store / _RETENTION_STAMP).stat().st_mtime <= _RENEW_AFTER_S:
            return
    except OSError:
        pass
    import sqlite3

    from vx.cache.evict import Policy, apply_retention

    policy = Policy.of_retention(*spec)
    if policy is not None:
        with contextlib.suppress(OSError, sqlite3.Error):
            apply_retention(store, policy, index)


def _pending_entries(snap: dict[str, object], index: Index) -> dict[int, Entry | None]:
    """The tasks whose outputs cannot be proven by fingerprint (changed, gone, or recorded too
    close to their run to trust), each with its index entry, ready for `_settle_outputs`.

    Nothing here changes an output, so it runs while git does: the restore's modules load,
    and the staging dirs a restore killed mid-way left are swept. Every such leftover lies in
    the base of a task pending here, and only vx makes them; the run lock is held.
    """
    rows = snap["finished"]
    assert isinstance(rows, list)  # noqa: S101
    pending = [
        i
        for i, row in enumerate(rows)
        if row[_VERIFY] or any(_fingerprint(p) != fp for p, fp in row[_OUTPUTS])
    ]
    if not pending:
        return {}
    # What every restore needs, loaded once, here.
    import vx.cache.archive
    import vx.run.localcache  # noqa: F401
    from vx.cache.staging import sweep

    sweep(dict.fromkeys(Path(rows[i][_BASE]) for i in pending))
    found = index.get_entries([rows[i][_KEY] for i in pending])
    return {i: found.get(rows[i][_KEY]) for i in pending}


def _settle_outputs(
    snap: dict[str, object],
    entries: Mapping[int, Entry | None],
    index: Index,
    store: Path,
    logs: Logs,
) -> tuple[dict[int, bool], int] | None:
    """Each task whose outputs could not be proven by fingerprint, checked or restored the way
    the full path's restore lane does it: task number → whether it was restored, and how many
    processes shared the work (`vx.run.shares`). None when an entry turns out unusable (the
    full path then decides what to run)."""
    if not entries:
        return {}, 1
    rows = snap["finished"]
    assert isinstance(rows, list)  # noqa: S101
    from vx.cache.store import Store
    from vx.run.caching import RestoreResult
    from vx.run.localcache import Outputs, restore_outputs
    from vx.run.shares import settle_shared, share_count

    cache = Store(store)

    def settle(i: int, index: Index | None) -> RestoreResult:
        row, entry = rows[i], entries[i]
        if entry is None:
            return RestoreResult.CORRUPT
        outputs = Outputs(Path(row[_BASE]), tuple(row[_PATTERNS]), tuple(row[_STOPS]))
        return restore_outputs(cache, index, entry, outputs, logs.get(row[_KEY], ()))

    items = list(entries)
    shares = share_count(len(items), int(str(snap["concurrency"])))
    results = settle_shared(
        lambda i: settle(i, index),
        lambda i: settle(i, None),  # a forked child: the index's connection is not its own
        items,
        shares,
    )
    if {RestoreResult.CORRUPT, RestoreResult.GONE} & set(results.values()):
        return None
    return {i: result is RestoreResult.RESTORED for i, result in results.items()}, shares


def _refresh(
    snap: dict[str, object],
    checked: Mapping[int, bool],
    options: RunOptions,
    env: Mapping[str, str],
) -> None:
    """Take new fingerprints of the outputs just checked or restored, for the next replay."""
    rows = snap["finished"]
    assert isinstance(rows, list)  # noqa: S101
    started_ns = time.time_ns()
    for i in checked:
        row = list(rows[i])
        found = _walk_outputs(row[_BASE], row[_PATTERNS], row[_STOPS])
        fingerprints = [(p, _fingerprint(p)) for p in found]
        row[_OUTPUTS] = fingerprints
        row[_VERIFY] = _racy((fp for _, fp in fingerprints), started_ns)
        rows[i] = tuple(row)
    write_snapshot(snapshot_path(shape_of(options, env), env), snap)


def _emit_all(
    snap: dict[str, object],
    emit: Callable[[Event], None],
    t0: float,
    started_at: float,
    restored: Mapping[int, bool],
    logs: Logs,
) -> RunOutcome:
    from types import MappingProxyType

    from vx.events import Notice, PlannedTask, RunStarted, TaskFinished
    from vx.ids import TaskId
    from vx.run.hits import Hit, emit_hit
    from vx.run.outcome import RunOutcome
    from vx.util.uuid7 import uuid7

    notes = snap["notes"]
    assert isinstance(notes, list)  # noqa: S101
    for note in notes:
        emit(Notice(f"[vx] {note}"))
    run_id = uuid7()
    planned = snap["planned"]
    finished_rows = snap["finished"]
    assert isinstance(planned, list)  # noqa: S101
    assert isinstance(finished_rows, list)  # noqa: S101
    emit(
        RunStarted(
            run_id=run_id,
            tasks=tuple(
                PlannedTask(TaskId(p, t), cmd, req, group=grp, persistent=False, cached=cached)
                for p, t, cmd, req, grp, cached in planned
            ),
            projects_in_run=int(str(snap["projects_in_run"])),
            projects_total=int(str(snap["projects_total"])),
            concurrency=int(str(snap["concurrency"])),
            cache_label=str(snap["label"]),
        )
    )
    finished: list[TaskFinished] = []
    spans: dict[TaskId, tuple[int, int]] = {}
    for i, row in enumerate(finished_rows):
        project, task, key, saved_ms, stored_cpu_ms = row[:5]
        tid = TaskId(project, task)
        started = time.monotonic()
        hit = Hit(key, logs.get(key, ()), saved_ms, stored_cpu_ms)
        done = emit_hit(emit, tid, hit, restored=restored.get(i, False), started=started)
        finished.append(done)
        spans[tid] = (int((started - t0) * 1e9), int((time.monotonic() - t0) * 1e9))
    return RunOutcome(
        run_id=run_id,
        exit_code=0,
        signal=None,
        finished=tuple(finished),
        started_at=started_at,
        ended_at=time.time(),
        wall_ms=(time.monotonic() - t0) * 1000,
        spans=MappingProxyType(spans),
        failure_logs=MappingProxyType({}),
    )


def _record(
    index: object,
    snap: dict[str, object],
    outcome: RunOutcome,
    options: RunOptions,
    env: Mapping[str, str],
) -> None:
    from vx.cache.index import Index
    from vx.run.record import record_run

    assert isinstance(index, Index)  # noqa: S101
    head = snap["head"]
    branch = snap["branch"]
    with contextlib.suppress(OSError):
        record_run(
            index,
            outcome,
            groups=frozenset(),
            command=options.command,
            git_sha=str(head) if head is not None else None,
            git_branch=str(branch) if branch is not None else None,
            env=env,
            tags=options.tags,
        )


# recording


def remember(prepared: PreparedRun, outcome: RunOutcome) -> None:
    """After a full run: keep a snapshot when every task was up to date, else drop the old one.

    Never fails the run: a snapshot that cannot be written only means the next run is full.
    """
    env = prepared.env
    keep_snapshot(
        snapshot_path(shape_of(prepared.options, env), env), lambda: _snapshot(prepared, outcome)
    )


def keep_snapshot(path: Path, make: Callable[[], dict[str, object] | None]) -> None:
    """Write what `make` builds to `path`, or remove `path` when it builds none or fails: an
    old snapshot never outlives the state that replaced it."""
    try:
        snap = make()
        if snap is None:
            path.unlink(missing_ok=True)
            return
        write_snapshot(path, snap)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def read_snapshot(path: Path, shape: object) -> dict[str, object] | None:
    """The snapshot at `path` when it is whole and made for `shape`, else None."""
    try:
        snap = load_snapshot(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(snap, dict) or snap.get("shape") != shape:
        return None
    return snap


def load_snapshot(data: bytes) -> object:
    """A snapshot's contents, once its leading digest vouches for them: written unsynced, a
    file a power loss tore may hold zeroed pages that `marshal` alone would read."""
    head, body = data[:8], data[8:]
    if len(head) != 8 or xxhash.xxh3_64_digest(body) != head:
        msg = "a snapshot whose digest does not match"
        raise ValueError(msg)
    return marshal.loads(body)  # noqa: S302  our own file, checked above


def write_snapshot(path: Path, snap: dict[str, object]) -> None:
    """Replace the snapshot without fsyncs: it is a shortcut, never the only copy of anything.
    A power loss can at worst leave one torn, which its digest refuses, and the next run is
    full."""
    from vx.util.atomic import write_atomic

    body = marshal.dumps(snap)
    data = xxhash.xxh3_64_digest(body) + body
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data, durable=False)


def _snapshot(prepared: PreparedRun, outcome: RunOutcome) -> dict[str, object] | None:
    """What `replay` needs, or None when this run cannot be replayed safely."""
    from vx.events import CacheOutcome, TaskStatus

    if outcome.exit_code != 0 or outcome.signal is not None:
        return None
    plan = prepared.plan
    ws = plan.workspace
    done = {f.id: f for f in outcome.finished}
    real = plan.real()
    finished: list[tuple[object, ...]] = []
    entries: list[tuple[str, int, str]] = []
    for node in real:
        f = done.get(node.id)
        entry = prepared.cache.probe(node.id)
        if (
            f is None
            or f.status is not TaskStatus.SUCCESS
            or f.cache not in (CacheOutcome.UP_TO_DATE, CacheOutcome.LOCAL)
            or f.key is None
            or entry is None
            or entry.key != f.key
        ):
            return None
        base, patterns, stops = prepared.cache.output_globs(node)
        outputs = [(p, _fingerprint(p)) for p in _walk_outputs(str(base), patterns, stops)]
        finished.append(
            (
                *(node.id.project, node.id.task, f.key, f.saved_ms, f.stored_cpu_ms),
                *(str(base), list(patterns), list(stops), outputs),
                _racy((fp for _, fp in outputs), prepared.started_ns),
            )
        )
        entries.append((f.key, entry.artifact.size, entry.artifact.digest))
    proven = proof(prepared, [node.id for node in real])
    if proven is None:
        return None
    kept = ws.config.cache_retention
    return {
        **proven,
        "shape": shape_of(prepared.options, prepared.env),
        "store": str(prepared.store),
        "head": prepared.head,
        "branch": prepared.branch,
        "notes": list(plan.notes),
        "entries": entries,
        "finished": finished,
        "planned": [
            (
                n.id.project,
                n.id.task,
                n.command,
                n.surfaced,
                n.task.is_group,
                prepared.cache.cached(n.id),
            )
            for n in (plan.nodes[t] for t in plan.order)
            if not n.excluded
        ],
        "projects_in_run": plan.projects_in_run,
        "projects_total": len(ws.projects),
        "concurrency": prepared.exec_options.concurrency,
        "label": prepared.label,
        "retention": (kept.older_than, kept.max_size) if kept is not None else None,
    }


def proof(seen: Seen, ids: Sequence[TaskId]) -> dict[str, object] | None:
    """The part of a snapshot that proves the workspace still reads as `seen` read it for the
    tasks `ids`: the paths and their fingerprints, `git status`, the variables keys read, and
    the refs a selection read; None when no such proof can be kept (a runtime input, a path
    changed too close to the start, a ref that moved). The warm path and the stored plan
    (`vx.run.warmplan`) both keep it, and both check it with `stats_hold` and `git status`."""
    from vx.cache.key import Kind

    plan = seen.plan
    ws = plan.workspace
    root = str(ws.root)
    paths: dict[str, None] = {}
    envs: dict[str, str] = {}
    prefixes: dict[str, None] = {}
    named = (Kind.FILE, Kind.PACKAGE, Kind.WORKSPACE, Kind.LOCKFILE)
    head = os.path.join(root, "")  # names are relative to the root: appended, not joined
    for tid in ids:
        spec = plan.nodes[tid].task.cache_spec
        if spec is not None:
            prefixes.update((p[:-1], None) for p in spec.inputs.env if p.endswith("*"))
        for comp in seen.keys.components[tid]:
            if comp.kind in named:
                paths[head + comp.name] = None
            elif comp.kind is Kind.TOOLCHAIN:  # `<lockfile>` or `<lockfile> <dependency>`
                paths[head + comp.name.partition(" ")[0]] = None
            elif comp.kind is Kind.ENV:
                envs[comp.name] = comp.digest
            elif comp.kind in (Kind.RUNTIME, Kind.WS_RUNTIME):
                return None  # a command's output has no fingerprint
    paths.update(dict.fromkeys(_workspace_paths(seen)))
    paths.update(dict.fromkeys(_git_paths(seen)))
    reads = seen.config_reads
    if reads is not None:
        _config_reads(reads, paths, envs, prefixes)
    refs = selection_refs(seen.options, ws.config.affected_base)
    if refs is None:
        return None
    refs_out = None
    if refs:
        from vx.git import refs_output

        refs_out = refs_output(ws.root, refs, seen.env)
        if seen.refs_seen is None or seen.refs_seen != (tuple(refs), refs_out) or refs_out is None:
            return None  # a ref moved while the selection read it
        paths.update(dict.fromkeys(_changed_paths(seen)))
    ordered = _unwatched_by_git(list(paths), root, seen.git)
    fingerprints = [_fingerprint(p) for p in ordered]
    if _racy(fingerprints, seen.started_ns):
        return None
    return {
        "root": root,
        "status": _without_staging(seen.git.status.raw),
        "paths": ordered,
        "fingerprints": fingerprints,
        "env": sorted(envs.items()),
        "env_prefixes": [
            (p, sorted(name for name in seen.env if name.startswith(p))) for p in prefixes
        ],
        "refs": refs,
        "refs_out": refs_out,
    }


def _config_reads(
    reads: ConfigReads,
    paths: dict[str, None],
    envs: dict[str, str],
    prefixes: dict[str, None],
) -> None:
    """Add what `.py` configs read while they ran to the proof: each variable's digest as the
    config saw it (a config that walked the whole environment adds the list of names too, as
    the empty prefix), and each path it opened or listed, fingerprinted like any other."""
    from vx.cache.key import env_digest

    for name, value in reads.env.items():
        envs.setdefault(name, env_digest(value))
    if reads.whole_env:
        prefixes[""] = None
    paths.update(reads.files)


def selection_refs(options: RunOptions, configured_base: str | None) -> list[str] | None:
    """The refs a run's selection reads, HEAD first; [] when it reads none, None when one
    cannot be named safely (the run then keeps no snapshot).

    A bare `--affected` lists every base it could have chosen, in the order it tries them: a
    ref that appears later (a fetched `origin/HEAD`) changes the choice, and shows up here as a
    line that is no longer `missing`.
    """
    if options.affected is None and not any("[" in text for text in options.filters):
        return []  # no ref to read: nothing to import either
    from vx.errors import UserError
    from vx.selection.changes import check_ref
    from vx.selection.filter import parse_filter

    texts: list[str] = []
    try:
        for text in options.filters:
            ref = parse_filter(text).ref
            if ref is not None:
                texts.append(check_ref(ref, what="--filter").ref)
        if options.affected is not None:
            if options.affected.strip():
                texts.append(check_ref(options.affected, what="--affected").ref)
            else:
                from vx.selection.affected import default_bases

                texts.extend(default_bases(configured_base, options.ci_bases))
    except UserError:
        return None
    return ["HEAD", *dict.fromkeys(texts)] if texts else []


def _changed_paths(prepared: Seen) -> list[str]:
    """Every path `git status` names: a selection read from a diff moves when one of them is
    edited back to the base's content, though the status line stays the same."""
    status = prepared.git.status
    root = str(prepared.plan.workspace.root)
    changed = status.modified | status.deleted | status.untracked
    shallow = os.path.join(str(prepared.git.common_dir), "shallow")
    return [shallow, *(os.path.join(root, rel) for rel in sorted(changed))]


def _unwatched_by_git(paths: list[str], root: str, git: GitSnapshot) -> list[str]:
    """The paths whose change `git status` would not report, so the replay must `lstat` them.

    A file tracked and clean when the snapshot is taken cannot change without showing up in
    the status the replay compares byte for byte (git checks its stat data, and re-reads a
    racily clean entry), so fingerprinting it again costs a stat per input for nothing. What
    git would not report stays: untracked and modified files (a further edit keeps their
    status line), paths absent or ignored, directories, and anything outside the work tree.
    """
    status = git.status
    dirty = status.modified | status.deleted | status.untracked
    index = git.index
    head = root + os.sep
    kept = []
    for path in paths:
        rel = path[len(head) :] if path.startswith(head) else None
        if rel is None or rel not in index or rel in dirty:
            kept.append(path)
    return kept


def _racy(fingerprints: Iterable[Fingerprint], started_ns: int) -> bool:
    """A path changed so close to the run's start that a later change could leave it looking
    the same; on a file system that keeps whole seconds, "close" is two seconds."""
    present = [fp for fp in fingerprints if fp]
    coarse = all(fp[1] % 1_000_000_000 == 0 for fp in present)
    margin = _COARSE_RACY_NS if coarse else _RACY_NS
    return any(fp[1] >= started_ns - margin or fp[0] >= started_ns - margin for fp in present)


def _walk_outputs(base: str, patterns: Sequence[str], stops: Sequence[str]) -> list[str]:
    """Each declared output on disk, the top of every pattern's walk (there or not) and every
    directory the output walk entered."""
    from vx.cache.outputs import output_tree
    from vx.util.globs import compile_globs, fixed_prefix

    if not patterns:
        return []
    files, entered = output_tree(Path(base), patterns, stop_at=stops)
    found = [os.path.join(base, rel) for rel in files]
    found.extend(
        os.path.join(base, prefix) if prefix else base
        for prefix in {fixed_prefix(p) for p in compile_globs(patterns).includes}
    )
    found.extend(os.path.join(base, rel) if rel else base for rel in entered)
    return list(dict.fromkeys(found))  # the top of a walk is also the first dir it entered


def _workspace_paths(prepared: Seen) -> list[str]:
    """What decides the workspace's shape: the root's files, each project's manifest and every
    spelling its config could take, the directories members are listed from, and what `.py`
    configs imported. A project's own directory is left out: restoring `dist/` changes it."""
    ws = prepared.plan.workspace
    root = str(ws.root)
    live = ws.config.tasks_from is not None
    out = [os.path.join(root, name) for name in ROOT_FILES]
    if live:
        out.extend(os.path.join(root, name) for name in LIVE_ROOT_FILES)
    names = PROJECT_FILES + LIVE_PROJECT_FILES if live else PROJECT_FILES
    listed: set[str] = set()  # a parent listed once has had all of its own listed too
    for project in ws.projects:
        rel = project.rel_dir
        here = os.path.join(root, rel, "")  # ends in a separator: each name is appended
        out.extend([here + name for name in names])
        parent = os.path.dirname(rel)
        while parent and parent not in listed:
            listed.add(parent)
            out.append(os.path.join(root, parent))
            parent = os.path.dirname(parent)
        if project.manifest:
            out.append(os.path.join(root, project.manifest))
        if project.config is not None:
            out.append(os.path.join(root, project.config.path))
    if ws.config.path:
        out.append(os.path.join(root, ws.config.path))
    out.extend(prepared.config_modules)
    return out


def _git_paths(prepared: Seen) -> list[str]:
    """git's index and HEAD, and the ref HEAD names: the same status can hide a new commit."""
    snap = prepared.git
    git_dir = str(snap.git_dir)
    common = str(snap.common_dir)
    out = [os.path.join(git_dir, "index"), os.path.join(git_dir, "HEAD")]
    out.append(os.path.join(common, "packed-refs"))
    try:
        head = Path(git_dir, "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return out
    if head.startswith("ref: "):
        out.append(os.path.join(common, head.removeprefix("ref: ")))
    return out
