"""Every task's cache key for one run, in topological order, from one git snapshot.

Keys come from declared inputs only (never from what a dependency wrote), so the whole plan
is keyed before anything runs: `upstream` folds each dependency's key, which is what carries
a change downstream.
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.cache.inputs import files_dir, task_components, workspace_fingerprint
from vx.cache.key import hash_canonical
from vx.cache.lockfilekeys import lockfile_keys
from vx.cache.outputs import check_own_files, prefixes_overlap
from vx.errors import ErrorCode, UserError
from vx.util.record import Record
from vx.workspace.layout import nested_dirs

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.fileids import FileTable
    from vx.cache.key import KeyComponent
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
) -> KeySet:
    """Key every task of the plan, dependencies first.

    `store` is where the per-project lockfile digests are kept between runs (None: computed
    each time); `write=False` reads them there but keeps nothing new (a plan writes nothing).
    """
    ws = plan.workspace
    graph = plan.graph
    locks = lockfile_keys(ws, files, store=store, write=write)
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
            lockfile=locks.components.get(node.project.name, ()),
        )
        components[tid] = found
        keys[tid] = hash_canonical(found)
    return KeySet(MappingProxyType(keys), MappingProxyType(components), locks.notes)


def check_outputs(plan: RunPlan) -> None:
    """Refuse output globs that would delete a project's own files, or that two cached tasks
    of one project share with no edge to order them (which one's outputs would a hit hold?)."""
    by_project: dict[str, list[PlanNode]] = {}
    for node in plan.nodes.values():
        cache = node.task.cache_spec
        if cache is None or not cache.outputs.files:
            continue
        config = node.project.config
        own = ["package.json", "pyproject.toml", *CONFIG_NAMES]
        check_own_files(config.path if config else "", node.task.name, cache.outputs.files, own)
        by_project.setdefault(node.project.name, []).append(node)
    graph = plan.graph
    for nodes in by_project.values():
        for i, a in enumerate(nodes):
            for b in nodes[i + 1 :]:
                _check_pair(a, b, graph.upstream([a.id]), graph.upstream([b.id]))


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
