"""Package edges and cycles: which test-only edges give way, and naming the entries of a cycle.

A package manager links a workspace cycle without complaint when one side of it is a test or
peer entry (`b` needs `a`, and `a`'s `[dependency-groups] test` lists `b`). Such an edge still
selects (`--filter a...` takes `b`), and `^name` follows it only where that leads back to no
task it came from: `a#build` does not wait for `b#build`, `a#test` does (graph/build.py). A
cycle made of runtime entries stays a cycle, and the refusal names the manifest entries.
"""

from __future__ import annotations

from collections.abc import Hashable
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from vx.workspace.manifests import JS_WEAK_FIELDS, PYTHON_DEV_FIELD, PYTHON_GROUP_FIELD

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.workspace.model import Project


N = TypeVar("N", bound=Hashable)  # a node: a package name, or a task's slot


def is_weak_field(field: str) -> bool:
    """A field listing what a package is tested or used beside, not what it builds on."""
    return (
        field in JS_WEAK_FIELDS
        or field == PYTHON_DEV_FIELD
        or field.startswith(PYTHON_GROUP_FIELD + " ")
    )


def edge_fields(owner: Project, keys: Iterable[str]) -> tuple[str, ...]:
    """The fields of `owner`'s manifest that list any of the dependency keys `keys`."""
    out: dict[str, None] = {}
    for key in keys:
        out.update(dict.fromkeys(owner.dependency_fields.get(key, ())))
    return tuple(out)


def selection_only(
    projects: Sequence[Project], links: Mapping[str, Mapping[str, tuple[str, ...]]]
) -> Mapping[str, tuple[str, ...]]:
    """Owner → the targets of its weak edges that would close a cycle, sorted.

    Only an edge inside a strongly connected part of the whole package graph can close one, so
    the rest are never looked at again. Those are taken back in name order by `give_way`.
    """
    by_name = {p.name: p for p in projects}
    weak: set[tuple[str, str]] = set()
    for owner, targets in links.items():
        project = by_name.get(owner)
        if project is None:
            continue
        for target, keys in targets.items():
            fields = edge_fields(project, keys)
            if fields and all(is_weak_field(f) for f in fields):
                weak.add((owner, target))
    if not weak:
        return MappingProxyType({})
    part = components({o: tuple(t) for o, t in links.items()})
    candidates = sorted(e for e in weak if part.get(e[0]) == part.get(e[1]))
    if not candidates:
        return MappingProxyType({})
    held = set(candidates)
    kept: dict[str, set[str]] = {
        o: {t for t in targets if (o, t) not in held} for o, targets in links.items()
    }
    dropped = give_way(kept, candidates)
    return MappingProxyType({o: tuple(sorted(ts)) for o, ts in sorted(dropped.items())})


def give_way(kept: dict[N, set[N]], candidates: Iterable[tuple[N, N]]) -> dict[N, list[N]]:
    """Owner → the candidate targets that would close a cycle; the rest join `kept`.

    Candidates are taken in the order given, each kept unless what is kept so far already
    leads from its target back to its owner, so what is kept never holds a cycle through one.
    """
    dropped: dict[N, list[N]] = {}
    for owner, target in candidates:
        if _reaches(kept, target, owner):
            dropped.setdefault(owner, []).append(target)
        else:
            kept.setdefault(owner, set()).add(target)
    return dropped


def _reaches(edges: Mapping[N, set[N]], start: N, goal: N) -> bool:
    seen = {start}
    todo = [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        for nxt in edges.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def components(edges: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """Each node's strongly connected component number (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    part: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, ())
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part[member] = index[node]
                    if member == node:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return part


def describe_hop(owner: Project, target: str, keys: Iterable[str]) -> str:
    """`packages/b/pyproject.toml lists a in [project] dependencies`."""
    fields = edge_fields(owner, keys)
    where = owner.manifest or owner.rel_dir
    listed = " and ".join(fields) if fields else "its dependencies"
    return f"{where} lists {target} in {listed}"
