"""`--download all|toplevel|none`: which remote hits may leave their outputs off this disk.

A deferred hit replays its log and counts as a hit, but writes no outputs until a task that
executes here depends on it. Deferring must never change a key, so a task stays eager when
another task's declared inputs could read its outputs on disk (a task with no `cache` block
reads its whole project), and nothing is deferred when any task declares a runtime input: a
shell command's reads cannot be bounded.
"""

from __future__ import annotations

import posixpath
from enum import StrEnum
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from vx.ids import TaskId
    from vx.run.plan import PlanNode, RunPlan

_GLOB_CHARS = frozenset("*?[{")


class Download(StrEnum):
    """Where a remote hit's outputs land."""

    ALL = "all"
    TOPLEVEL = "toplevel"
    NONE = "none"


def deferrable(plan: RunPlan, mode: Download) -> frozenset[TaskId]:
    """The tasks whose remote hits may keep their outputs remote under `mode`."""
    return deferral(plan, mode).deferred


class Deferral(Record):
    """What `--download` defers: the tasks, and each candidate kept eager with the reader that
    kept it (`runtime` names the task whose runtime input stopped every deferral)."""

    deferred: frozenset[TaskId]
    eager: tuple[tuple[TaskId, TaskId], ...] = ()
    runtime: TaskId | None = None

    def note(self, mode: Download) -> str | None:
        """The line `--dry` prints about it; None for `--download=all`."""
        if mode is Download.ALL:
            return None
        if self.runtime is not None:
            return (
                f"--download={mode}: nothing keeps its outputs remote — {self.runtime} declares"
                " a runtime input, whose reads vx cannot bound"
            )
        n = len(self.deferred)
        whose = "its" if n == 1 else "their"
        line = f"--download={mode}: {_count(n)} would keep {whose} outputs remote"
        if self.deferred:
            line += f" on a remote hit ({', '.join(str(t) for t in sorted(self.deferred))})"
        if self.eager:
            kept = "; ".join(f"{t}, which {r} could read" for t, r in self.eager)
            line += f"; kept eager: {kept}"
        return line


def deferral(plan: RunPlan, mode: Download) -> Deferral:
    """Which remote hits may keep their outputs remote under `mode`, and which may not, why."""
    if mode is Download.ALL:
        return Deferral(frozenset())
    nodes = [n for n in plan.nodes.values() if n.runs]
    for n in nodes:
        spec = n.task.cache_spec
        if spec and (spec.inputs.runtime or spec.inputs.workspace_runtime):
            return Deferral(frozenset(), runtime=n.id)
    reads = {n.id: _reads(n) for n in nodes}
    out: set[TaskId] = set()
    eager: list[tuple[TaskId, TaskId]] = []
    for node in nodes:
        spec = node.task.cache_spec
        if spec is None or (mode is Download.TOPLEVEL and node.surfaced):
            continue
        writes = _writes(node)
        if not writes:
            continue
        reader = next(
            (
                other
                for other, rs in sorted(reads.items())
                if other != node.id and any(_overlap(w, r) for r in rs for w in writes)
            ),
            None,
        )
        if reader is None:
            out.add(node.id)
        else:
            eager.append((node.id, reader))
    return Deferral(frozenset(out), tuple(sorted(eager)))


def _count(n: int) -> str:
    return "1 task" if n == 1 else f"{n} tasks"


def _prefix(rel_dir: str, pattern: str) -> tuple[str, ...]:
    """A glob's literal leading directories, as root-relative path parts."""
    joined = f"{rel_dir}/{pattern}" if rel_dir not in ("", ".") else pattern
    parts = [p for p in posixpath.normpath(joined).split("/") if p != "."]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS & set(part):
            break
        literal.append(part)
    return tuple(literal)


def _writes(node: PlanNode) -> list[tuple[str, ...]]:
    spec = node.task.cache_spec
    if spec is None:
        return []
    rel = node.project.rel_dir
    own = [_prefix(rel, p) for p in spec.outputs.files if not p.startswith("!")]
    shared = [_prefix("", p) for p in spec.outputs.workspace_files if not p.startswith("!")]
    return own + shared


def _reads(node: PlanNode) -> list[tuple[str, ...]]:
    """Where a task's key could read files: its input globs' literal prefixes."""
    spec = node.task.cache_spec
    rel = node.project.rel_dir
    whole = _prefix(rel, ".") if rel not in ("", ".") else ()
    if spec is None or spec.inputs.files is None:
        found = [whole]
    else:
        found = [_prefix(rel, p) for p in spec.inputs.files if not p.startswith("!")]
    if spec is not None:
        found += [_prefix("", p) for p in spec.inputs.workspace_files if not p.startswith("!")]
    return found


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two globs could match one path: one's literal prefix leads to the other's."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]
