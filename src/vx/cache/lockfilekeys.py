"""Each project's `lockfile` key components: the digest of what it resolves, once per content.

A root lockfile vx can read is keyed per project (the closure of external packages the
project installs, plus the install-wide sections everyone's install reads) instead of as one
file every task folds. The digests are kept in `<store>/lockfiles/<id>.marshal`, named for the
lockfile's content id and the workspace's layout, so a run with an unchanged lockfile reads one
small file. Each closure's packages are kept beside it (`<id>.details`, found from a closure
digest through `lockfiles/index.txt`), which is what lets `vx why` say which package moved.
A lockfile vx cannot read keeps today's whole-file component, with a note naming it.

The closure of the root package's own external dependencies and devDependencies (the bundler,
the compiler every build runs from the root's `node_modules`; a member the root links is left
out) is the workspace's toolchain. As in
Turborepo's global hash, it joins every task's key as a `toolchain` component, so a bump of a
root devDependency re-runs the builds; the root project's own tasks already hold it as their
`lockfile` component. Each of the root's direct dependencies' own closures is kept too: a task
whose latest audit says which root dependencies it ran keys on those alone (`narrowed`).
"""

from __future__ import annotations

import contextlib
import marshal
from typing import TYPE_CHECKING

from vx.cache.key import KeyComponent, Kind, digest_json
from vx.lockfiles.model import Locked, LockfileError, LockGraph, toolchain_closures
from vx.lockfiles.moved import describe
from vx.lockfiles.read import (
    LOCKFILES,
    NEEDS_MANIFESTS,
    member_manifests,
    project_closures,
    read_lockfile,
)
from vx.util.atomic import write_atomic
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.fileids import FileTable
    from vx.workspace.model import Workspace

READER_VERSION = 4
"""Bump when a reader's answer changes: every cached set of digests is then recomputed."""
ABSENT = "absent"
DIR_NAME = "lockfiles"
ROOT_CLOSURE = "\0root"
"""The digests' entry for the root directory's closure: no project name can hold a NUL."""
ROOT_DEP = "\0dep:"
"""The prefix of the digests' entry for one direct root dependency's closure."""
INDEX_NAME = "index.txt"


class LockfileKeys(Record):
    """`covered`: lockfiles keyed per project (left out of the workspace fingerprint);
    `components`: each project's `lockfile` components, and for every project but the root
    one the `toolchain` components (the root's own closure); `notes`: what to tell the user."""

    covered: frozenset[str]
    components: Mapping[str, tuple[KeyComponent, ...]]
    notes: tuple[str, ...]
    roots: Mapping[str, Mapping[str, str]] = {}
    """Lockfile → each direct root dependency's closure digest."""

    def narrowed(self, uses: frozenset[str]) -> tuple[KeyComponent, ...] | None:
        """The `toolchain` components of a task that runs only the root dependencies `uses`
        (what its audit found): one per dependency and lockfile, named `<lockfile> <dep>`.
        None when a name is no direct root dependency of any lockfile: the whole toolchain."""
        if not all(any(dep in deps for deps in self.roots.values()) for dep in uses):
            return None
        return tuple(
            KeyComponent(Kind.TOOLCHAIN, f"{lock} {dep}", deps[dep])
            for lock, deps in self.roots.items()
            for dep in sorted(uses)
            if dep in deps
        )


def lockfile_keys(
    ws: Workspace, files: FileTable, *, store: Path | None, write: bool = True
) -> LockfileKeys:
    """The per-project components of every readable root lockfile, read back from `store` where
    an earlier run kept them; `write=False` (a plan) keeps nothing new there."""
    covered: set[str] = set()
    per_project: dict[str, list[KeyComponent]] = {p.name: [] for p in ws.projects}
    notes: list[str] = []
    roots: dict[str, dict[str, str]] = {}
    for name in LOCKFILES:
        content = files.id_of(name)
        if content is None:
            continue
        digests = _digests(ws, files, name, content, store, write=write)
        if isinstance(digests, str):
            notes.append(
                f"{digests} — every task keys on the whole {name}, so any change to it re-runs"
                " everything"
            )
            continue
        covered.add(name)
        for project, digest in digests.items():
            if project in per_project:
                per_project[project].append(KeyComponent(Kind.LOCKFILE, name, digest))
        roots[name] = {k[len(ROOT_DEP) :]: v for k, v in digests.items() if k.startswith(ROOT_DEP)}
        toolchain = digests.get(ROOT_CLOSURE, ABSENT)
        if toolchain != ABSENT:
            for member in ws.projects:
                if member.rel_dir not in (".", ""):
                    per_project[member.name].append(KeyComponent(Kind.TOOLCHAIN, name, toolchain))
    return LockfileKeys(
        frozenset(covered), {k: tuple(v) for k, v in per_project.items()}, tuple(notes), roots
    )


def _digests(
    ws: Workspace,
    files: FileTable,
    name: str,
    content: str,
    store: Path | None,
    *,
    write: bool,
) -> dict[str, str] | str:
    """Project name → closure digest, or the reason the lockfile cannot be read."""
    layout = [
        (p.name, p.rel_dir, files.id_of(p.manifest or "") if name in NEEDS_MANIFESTS else "")
        for p in ws.projects
    ]
    if name in NEEDS_MANIFESTS:
        layout.append(("", ".", files.id_of("package.json")))  # the root's, a project or not
    cached = None
    if store is not None:
        stem = digest_json([READER_VERSION, name, content, layout])
        cached = store / DIR_NAME / f"{stem}.marshal"
        with contextlib.suppress(OSError, EOFError, ValueError, TypeError):
            found = marshal.loads(cached.read_bytes())  # noqa: S302 - our own file
            if isinstance(found, (dict, str)):
                return found
    try:
        data = (ws.root / name).read_bytes()
        manifests = member_manifests(ws) if name in NEEDS_MANIFESTS else {}
        graph = read_lockfile(name, data, manifests)
    except OSError as exc:
        return f"{name}: unreadable ({exc.strerror or exc})"
    except LockfileError as exc:
        answer: dict[str, str] | str = str(exc)
    else:
        install = dict(sorted(graph.install.items()))
        answer = {}
        kept: dict[str, tuple[Locked, ...]] = {}
        for project, found_closure in project_closures(ws, graph).items():
            if found_closure is None:
                answer[project] = ABSENT
                continue
            digest = closure_digest(install, found_closure)
            answer[project] = digest
            kept[digest] = found_closure
        answer.update(_toolchain(graph, install, kept))
        if cached is not None and write:
            _keep_details(cached.with_suffix(".details"), install, kept)
    if cached is not None and write:
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(cached, marshal.dumps(answer))
    return answer


def _toolchain(
    graph: LockGraph, install: Mapping[str, str], kept: dict[str, tuple[Locked, ...]]
) -> dict[str, str]:
    """`ROOT_CLOSURE` → the digest of the root's whole toolchain, `ROOT_DEP + name` → that of
    each of its packages alone; each closure kept for `vx why`."""
    out: dict[str, str] = {ROOT_CLOSURE: ABSENT}
    for name, found in toolchain_closures(graph).items():
        digest = closure_digest(install, found)
        out[ROOT_DEP + name if name else ROOT_CLOSURE] = digest
        kept[digest] = found
    return out


def closure_digest(install: Mapping[str, str], packages: tuple[Locked, ...]) -> str:
    """What a project's `lockfile` component holds: its packages and the install-wide parts.

    Each package's `via` is folded too: it is part of the dependency tree, and it makes each
    project's kept details (what `vx why` reads) its own.
    """
    return digest_json([install, [list(p) for p in packages]])


def _keep_details(
    path: Path, install: Mapping[str, str], closures: Mapping[str, tuple[Locked, ...]]
) -> None:
    """Keep what `vx why` needs to name moved packages: one file per lockfile content holding
    each closure (packages by index into one table), and one line per closure digest in
    `index.txt` saying which file holds it."""
    table: dict[tuple[str, str, str], int] = {}
    kept: dict[str, list[tuple[int, str]]] = {}
    for digest, packages in closures.items():
        kept[digest] = [
            (table.setdefault((p.name, p.version, p.integrity), len(table)), p.via)
            for p in packages
        ]
    doc = {
        "install": {k: digest_json(v) for k, v in install.items()},
        "packages": list(table),
        "closures": kept,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, marshal.dumps(doc))
        lines = "".join(f"{digest} {path.name}\n" for digest in kept)
        with (path.parent / INDEX_NAME).open("a", encoding="ascii") as index:
            index.write(lines)


def describe_move(store: Path, old: str, new: str) -> tuple[str, ...]:
    """What moved between two closures, one line a package (`ms 2.1.2 → 2.1.3 (via app)`);
    empty when either side's details were never kept here."""
    before, after = _details(store, old), _details(store, new)
    if before is None or after is None:
        return ()
    changed = sorted(k for k in {*before[0], *after[0]} if before[0].get(k) != after[0].get(k))
    lines = [f"{k} (install-wide) changed" for k in changed]
    lines.extend(describe(before[1], after[1]))
    return tuple(lines)


def _details(store: Path, digest: str) -> tuple[dict[str, str], list[Locked]] | None:
    """The install-wide parts' digests and the packages of a closure this store kept."""
    if digest == ABSENT:
        return {}, []
    try:
        where = store / DIR_NAME
        holder = None
        for line in (where / INDEX_NAME).read_text("ascii").splitlines():
            found, _, name = line.partition(" ")
            if found == digest:
                holder = name
        if holder is None:
            return None
        doc = marshal.loads((where / holder).read_bytes())  # noqa: S302 - our own file
        table = doc["packages"]
        packages = []
        for i, via in doc["closures"][digest]:
            name, version, integrity = table[i]
            packages.append(Locked(name, version, integrity, via))
        return dict(doc["install"]), packages
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError):
        return None
