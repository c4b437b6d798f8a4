"""Every task's cache key for one run, in topological order, from one git snapshot.

Keys come from declared inputs only (never from what a dependency wrote), so the whole plan
is keyed before anything runs: `upstream` folds each dependency's key, which is what carries
a change downstream.
"""

from __future__ import annotations

import functools
import os
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.cache.inputs import files_dir, task_components, workspace_fingerprint
from vx.cache.key import Kind, hash_canonical
from vx.cache.lockfilekeys import lockfile_keys
from vx.cache.outputs import check_own_files, prefixes_overlap
from vx.errors import ConfigError, ErrorCode, UserError
from vx.util.globs import covered, fixed_prefix
from vx.util.record import Record
from vx.workspace.layout import nested_dirs

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Mapping, Sequence
    from pathlib import Path

    from vx.cache.fileids import FileTable
    from vx.cache.key import KeyComponent
    from vx.cache.lockfilekeys import LockfileKeys
    from vx.ids import TaskId
    from vx.run.plan import PlanNode, RunPlan
    from vx.run.runtime import RuntimeProbe

CONFIG_NAMES = ("vx.config.json", "vx.config.toml", "vx.config.py")


class KeySet(Record):
    """Each task's key and the components it was derived from (what `vx why` diffs)."""

    keys: Mapping[TaskId, str]
    components: Mapping[TaskId, tuple[KeyComponent, ...]]
    notes: tuple[str, ...] = ()


def derive_keys(
    plan: RunPlan,
    *,
    files: FileTable,
    env: Mapping[str, str],
    runtime: RuntimeProbe,
    store: Path | None = None,
    write: bool = True,
    audited: Callable[[], Mapping[TaskId, frozenset[str]]] | None = None,
) -> KeySet:
    """Key every task of the plan, dependencies first.

    `store` is where the per-project lockfile digests are kept between runs (None: computed
    each time); `write=False` reads them there but keeps nothing new (a plan writes nothing).
    `audited` gives, for each task whose latest audit traced it, the root dependencies it ran:
    such a task keys on those alone instead of the root's whole toolchain. It is asked only
    when a lockfile gave the root's dependencies and the root is a project (whose manifest
    is what the audit names root dependencies from).
    """
    ws = plan.workspace
    graph = plan.graph
    locks = lockfile_keys(ws, files, store=store, write=write)
    uses: Mapping[TaskId, frozenset[str]] = {}
    if audited is not None and ws.root_project is not None and any(locks.roots.values()):
        uses = audited()
    fingerprint = tuple(c for c in workspace_fingerprint(files) if c.name not in locks.covered)
    nested = nested_dirs(ws)
    bases: dict[str, str] = {}
    real_root = os.path.realpath(ws.root)
    parents: dict[str, str] = {}
    keys: dict[TaskId, str] = {}
    components: dict[TaskId, tuple[KeyComponent, ...]] = {}
    for tid in plan.order:
        node = plan.nodes[tid]
        deps = graph.deps[tid]
        base = bases.get(node.project.name)
        if base is None:
            base = bases[node.project.name] = files_dir(
                ws, node.project, real_root=real_root, parents=parents
            )
        members = {
            str(d): tuple(str(m) for m in graph.real_deps(d)) for d in deps if graph.is_group(d)
        }
        found = task_components(
            ws,
            node.project,
            node.task,
            files=files,
            env=env,
            forward=node.forward,
            upstream=[(str(d), keys[d]) for d in deps],
            runtime=runtime,
            workspace=fingerprint,
            group_members=members,
            nested=nested,
            base_dir=base,
            lockfile=_lockfile(locks, node, uses.get(tid)),
        )
        components[tid] = found
        keys[tid] = hash_canonical(found)
    return KeySet(MappingProxyType(keys), MappingProxyType(components), locks.notes)


def _lockfile(
    locks: LockfileKeys, node: PlanNode, uses: frozenset[str] | None
) -> tuple[KeyComponent, ...]:
    """The node's lockfile components, its toolchain narrowed to what its audit saw it run."""
    found = locks.components.get(node.project.name, ())
    if uses is None or node.project.rel_dir in (".", ""):
        return found
    narrow = locks.narrowed(uses)
    if narrow is None:
        return found
    return (*(c for c in found if c.kind is not Kind.TOOLCHAIN), *narrow)


def toolchain_uses(store: Path) -> dict[TaskId, frozenset[str]]:
    """Each task whose latest audit traced it, with the root dependencies its `toolchain`
    findings name (none: it ran nothing of the root's), from the index in `store`, read only."""
    import sqlite3  # the full path's index loads it anyway

    from vx.audit.report import report_from_json
    from vx.cache.index import read_index
    from vx.ids import TaskId

    index = read_index(store)
    if index is None:
        return {}
    try:
        rows = index.latest_audits()
    except sqlite3.Error:
        return {}
    finally:
        index.close()
    out: dict[TaskId, frozenset[str]] = {}
    for row in rows:
        report = report_from_json(row.report)
        if report is None or not report.traced:
            continue
        names = (f.value for f in report.findings if f.kind == "toolchain" and f.value)
        out[TaskId(row.project, row.task)] = frozenset(names)
    return out


def check_outputs(plan: RunPlan, *, files: FileTable, tracked: Container[str]) -> None:
    """Refuse output globs that would delete a project's own files or a file git tracks, or
    that two cached tasks of one project share with no edge to order them (which one's
    outputs would a hit hold?).

    `files` and `tracked` are the run's git snapshot (its file table, and the paths in git's
    index): the full path has them anyway, and the warm path, which never gets here, replays
    only while `git status` reads as it did when this check last passed.
    """
    by_project: dict[str, list[PlanNode]] = {}
    nested = nested_dirs(plan.workspace)
    for node in plan.nodes.values():
        cache = node.task.cache_spec
        if cache is None:
            continue
        config = node.project.config
        own = ["package.json", "pyproject.toml", *CONFIG_NAMES]
        check_own_files(config.path if config else "", node.task.name, cache.outputs.files, own)
        path = config.path if config else str(node.id)  # a task no vx.config declares
        stops = nested[node.project.name]
        for field, globs, rel in (
            ("files", cache.outputs.files, node.project.rel_dir),
            ("workspaceFiles", cache.outputs.workspace_files, "."),
        ):
            if not globs:
                continue
            hit = tracked_outputs(globs, rel, files=files, tracked=tracked, stop_at=stops)
            if hit is not None:
                raise ConfigError(
                    path,
                    f"{hit[0]!r} matches {hit[1]}, which git tracks — vx cleans outputs before"
                    f" each run and would delete it; narrow the glob or add '!{hit[1]}'",
                    f"tasks.{node.task.name}.cache.outputs.{field}",
                )
        if cache.outputs.files:
            by_project.setdefault(node.project.name, []).append(node)
    graph = plan.graph
    for nodes in by_project.values():
        for i, a in enumerate(nodes):
            for b in nodes[i + 1 :]:
                _check_pair(a, b, graph.upstream([a.id]), graph.upstream([b.id]))


def tracked_outputs(
    globs: Sequence[str],
    rel_dir: str,
    *,
    files: FileTable,
    tracked: Container[str],
    stop_at: Sequence[str] = (),
) -> tuple[str, str] | None:
    """The first `(glob, path)` where an output glob relative to `rel_dir` selects a file git
    tracks (path relative to `rel_dir`), outside the nested projects `stop_at`; None if none.

    Only the files below each glob's literal prefix are looked at, so `dist/**` costs one
    bisect of the sorted file table however large the project is.
    """
    base = "" if rel_dir in (".", "") else rel_dir + "/"
    holes = tuple(d + "/" for d in stop_at)
    candidates: dict[str, None] = {}
    for prefix in _prefixes(tuple(globs)):
        for path in files.paths_with_prefix(base + prefix):
            if path in tracked and not path.startswith(holes):
                candidates[path[len(base) :]] = None
    if not candidates:
        return None
    found = covered(globs, sorted(candidates))
    if not found:
        return None
    first = found[0]
    glob = next(g for g in reversed(globs) if covered([g], [first]))
    return glob, first


@functools.lru_cache(maxsize=256)
def _prefixes(globs: tuple[str, ...]) -> frozenset[str]:
    """The literal prefixes of the positive globs: a hundred tasks share a handful of lists."""
    return frozenset(fixed_prefix(g) for g in globs if not g.startswith("!"))


def _check_pair(
    a: PlanNode, b: PlanNode, above_a: frozenset[TaskId], above_b: frozenset[TaskId]
) -> None:
    if a.id in above_b or b.id in above_a:
        return
    assert a.task.cache_spec is not None  # noqa: S101 - filtered by the caller
    assert b.task.cache_spec is not None  # noqa: S101
    pair = prefixes_overlap(a.task.cache_spec.outputs.files, b.task.cache_spec.outputs.files)
    if pair is None:
        return
    raise UserError(
        ErrorCode.CONFIG,
        f"{a.id} and {b.id} declare overlapping outputs ({pair[0]!r} and {pair[1]!r}) with no"
        f" dependsOn edge between them — give each its own output dir, or order them",
    )
