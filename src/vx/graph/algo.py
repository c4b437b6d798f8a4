"""Graph algorithms over task ids: stable topological order, cycle path, closures, subgraphs.

Every function takes `deps` (an id to the ids it depends on; every dependency is itself a
key) and returns ids only, so the same code serves the task graph, a plan and a watch
re-plan. `closure`, `reach` and `invert` take any hashable node, so the package-graph walks
(`--filter`, `vx prune`, a watch set, `vx show --affected`) are this code too; the module
imports nothing above L0, which is why the layer test lets lower packages import it. All
walks are iterative, so a long chain never meets the recursion limit.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import TYPE_CHECKING, TypeVar

from vx.errors import CycleError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from vx.ids import TaskId

N = TypeVar("N", bound=Hashable)


def sort_key(tid: TaskId) -> tuple[str, str]:
    """The order `TaskId` defines, as a plain tuple: sorting by it skips the dataclass methods."""
    return (tid.project, tid.task)


def reverse(deps: Mapping[TaskId, Sequence[TaskId]]) -> dict[TaskId, tuple[TaskId, ...]]:
    """Each id's dependants, sorted."""
    return {tid: tuple(sorted(ds, key=sort_key)) for tid, ds in invert(deps).items()}


def invert(deps: Mapping[N, Iterable[N]]) -> dict[N, list[N]]:
    """Each node's dependants, in the order `deps` lists their owners; a node only named as a
    dependency gets an entry too."""
    out: dict[N, list[N]] = {n: [] for n in deps}
    for n, ds in deps.items():
        for d in ds:
            out.setdefault(d, []).append(n)
    return out


def topo_order(deps: Mapping[TaskId, Sequence[TaskId]]) -> tuple[TaskId, ...]:
    """Dependencies before dependants.

    Among the ids ready at any moment the smallest goes first, so the order depends on the
    graph alone and never on the order it was built in. A cycle raises `CycleError`.
    """
    ids = sorted(deps, key=sort_key)
    rank = {tid: i for i, tid in enumerate(ids)}
    order = dense_order([[rank[d] for d in deps[tid]] for tid in ids])
    if len(order) < len(ids):
        raise CycleError(tuple(str(t) for t in find_cycle(deps)))
    return tuple(ids[i] for i in order)


def dense_order(edges: Sequence[Sequence[int]]) -> list[int]:
    """`topo_order` over ids numbered 0..n-1 in sort order, `edges[i]` being i's dependencies.

    The smallest ready number goes first. A cycle leaves its members (and whatever waits on
    them) out, so a result shorter than `edges` means the graph is cyclic.
    """
    waiting = [len(ds) for ds in edges]
    dependents: list[list[int]] = [[] for _ in edges]
    for i, ds in enumerate(edges):
        for d in ds:
            dependents[d].append(i)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for up in dependents[i]:
            waiting[up] -= 1
            if waiting[up] == 0:
                heapq.heappush(ready, up)
    return order


def find_cycle(deps: Mapping[TaskId, Sequence[TaskId]]) -> tuple[TaskId, ...]:
    """One cycle as the ids on it in edge order, starting at its smallest id; empty if acyclic.

    Ids and edges are visited in sorted order, so the same graph always names the same cycle.
    """
    done: set[TaskId] = set()
    for start in sorted(deps, key=sort_key):
        if start in done:
            continue
        path: list[TaskId] = [start]
        on_path = {start: 0}
        stack = [iter(sorted(deps[start], key=sort_key))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                finished = path.pop()
                del on_path[finished]
                done.add(finished)
                continue
            if nxt in on_path:
                cycle = path[on_path[nxt] :]
                i = cycle.index(min(cycle, key=sort_key))
                return tuple(cycle[i:] + cycle[:i])
            if nxt in done:
                continue
            on_path[nxt] = len(path)
            path.append(nxt)
            stack.append(iter(sorted(deps[nxt], key=sort_key)))
    return ()


def closure(deps: Mapping[N, Iterable[N]], roots: Iterable[N]) -> frozenset[N]:
    """The roots and everything they reach. Pass dependants instead of deps to walk down."""
    kept = frozenset(roots)
    return kept | reach(deps, kept)


def reach(deps: Mapping[N, Iterable[N]], starts: Iterable[N]) -> frozenset[N]:
    """Every node a path of one edge or more from `starts` reaches: a start only when a path
    comes back to it. A node `deps` lacks has no edges."""
    seen: set[N] = set()
    stack = list(starts)
    while stack:
        for d in deps.get(stack.pop(), ()):
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return frozenset(seen)


def subgraph(
    deps: Mapping[TaskId, Sequence[TaskId]], keep: Iterable[TaskId]
) -> dict[TaskId, tuple[TaskId, ...]]:
    """The kept ids with the edges that run between two of them."""
    kept = frozenset(keep)
    return {tid: tuple(d for d in deps[tid] if d in kept) for tid in deps if tid in kept}


def nearest(
    deps: Mapping[TaskId, Sequence[TaskId]],
    start: TaskId,
    through: Callable[[TaskId], bool],
) -> tuple[TaskId, ...]:
    """The dependencies `start` reaches by passing only ids `through` accepts, sorted.

    With `through` = "is a group" this gives the real tasks a task waits for.
    """
    seen: set[TaskId] = set()
    found: set[TaskId] = set()
    stack = list(deps[start])
    while stack:
        tid = stack.pop()
        if tid in seen:
            continue
        seen.add(tid)
        if through(tid):
            stack.extend(deps[tid])
        else:
            found.add(tid)
    return tuple(sorted(found, key=sort_key))
