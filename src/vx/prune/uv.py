"""`vx prune` for a uv workspace: the members kept, and the root pyproject.toml and uv.lock cut.

uv checks a `--locked` sync against the pyproject files: the lock's member list, its
`requires-python` (the intersection of the members') and each member's requirements must
match them. So the root's `[tool.uv.workspace] members` becomes the kept directories, the
lock is pruned to them (lockfiles/uv_prune.py) with `requires-python` recomputed, and under
`production` the kept pyproject files lose their dependency groups, as the lock does. The
local packages the kept lock installs besides the members (path and editable sources) are
named for copying, since uv reads them too.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from typing import TYPE_CHECKING, Any

from vx.errors import ErrorCode, UserError
from vx.graph.algo import closure
from vx.lockfiles import tomltext, uv, uv_prune
from vx.lockfiles.model import LockfileError, link_to
from vx.util.record import Record
from vx.workspace.cycles import is_weak_field
from vx.workspace.manifests import PYPROJECT, normalize_python_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from vx.lockfiles.model import LockGraph
    from vx.workspace.model import Project, Workspace

_CLAUSE = re.compile(r"\s*(>=|<=|>|<|~=)\s*([0-9]+(?:\.[0-9]+)*)\s*$")
# uv.lock sources that name a path on disk (a directory, or an archive for `path`).
_LOCAL_SOURCES = ("editable", "directory", "path")


class UvPlan(Record):
    """What a uv prune keeps, the files it writes into every layer (root-relative path →
    bytes: what it rewrote, the files a member's dynamic metadata reads, a local archive the
    lock installs), the lockfiles, notes for the user, and the root-relative directories of
    the local packages the lock installs besides the members (copied like a member)."""

    kept: set[str]
    rendered: dict[str, bytes]
    lockfiles: tuple[str, ...]
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


def plan(ws: Workspace, chosen: Sequence[Project], *, production: bool) -> UvPlan:
    """The kept members (the named ones, what they depend on, and the root when uv counts it a
    member) and the rewritten files."""
    lock_path = ws.root / uv.NAME
    lock_text: str | None = None
    graph: LockGraph | None = None
    if lock_path.is_file():
        try:
            lock_text = lock_path.read_text("utf-8")
            graph = uv.read(lock_text)
        except UnicodeDecodeError:
            raise UserError(ErrorCode.CONFIG, f"vx prune: {uv.NAME}: not UTF-8 text") from None
        except LockfileError as exc:
            raise UserError(ErrorCode.CONFIG, f"vx prune: {exc}") from None
    root = ws.root_project
    root_text = (ws.root / PYPROJECT).read_text("utf-8")
    root_is_member = isinstance(_toml(root_text, PYPROJECT).get("project"), dict)
    seeds = [*chosen, *([root] if root is not None and root_is_member else [])]
    kept = _subset(ws, seeds, graph, production=production)
    projects = [p for p in ws.projects if p.name in kept and not p.is_root]
    dirs = sorted(p.rel_dir for p in projects)
    rendered: dict[str, bytes] = {}
    texts = {".": root_text}
    for project in projects:
        texts[project.rel_dir] = (ws.root / project.rel_dir / PYPROJECT).read_text("utf-8")
    if production:
        for rel_dir, text in texts.items():
            cut = _without_groups(text, _shown(rel_dir))
            if cut != text:
                texts[rel_dir] = cut
                rendered[_shown(rel_dir)] = cut.encode()
    rendered[PYPROJECT] = _cut_members(texts["."], dirs).encode()
    for rel_dir, text in texts.items():
        for rel in _dynamic_files(text, rel_dir):
            if (ws.root / rel).is_file():
                rendered.setdefault(rel, (ws.root / rel).read_bytes())
    if lock_text is None:
        return UvPlan(kept, rendered, ())
    declared = {
        rel: _requires_python(t, rel) for rel, t in texts.items() if rel != "." or root_is_member
    }
    bounds = list(declared.values())
    was = _toml(lock_text, uv.NAME).get("requires-python")
    bound = intersect(bounds)
    unread = sorted(_shown(r) for r, spec in declared.items() if spec and _range([spec]) is None)
    if bound is not None and isinstance(was, str) and same_range(was, bound):
        bound = None  # the same bound: uv's own spelling of it stays
    try:
        pruned = uv_prune.prune_text(
            lock_text, {".", *dirs}, production=production, requires_python=bound
        )
    except LockfileError as exc:
        raise UserError(ErrorCode.CONFIG, f"vx prune: {exc}") from None
    rendered[uv.NAME] = pruned.encode()
    sources: list[str] = []
    for rel in _local_sources(pruned, {".", *dirs}):
        path = ws.root / rel
        if path.is_file():
            rendered.setdefault(rel, path.read_bytes())
        elif (path / PYPROJECT).is_file():
            sources.append(rel)
            text = (path / PYPROJECT).read_text("utf-8")
            for dynamic in _dynamic_files(text, rel):
                if (ws.root / dynamic).is_file():
                    rendered.setdefault(dynamic, (ws.root / dynamic).read_bytes())
        elif path.is_dir():
            sources.append(rel)
    notes: tuple[str, ...] = ()
    if bound is not None and isinstance(was, str):
        # uv checks the bound against the members, so it must move; the versions do not.
        note = (
            f"{uv.NAME}: requires-python is now {bound} (was {was}, held by a member left out);"
            f" uv resolved the locked versions for {was}, so build on a Python it allows"
        )
        notes = (note,)
    elif (
        unread and isinstance(was, str) and len(projects) < sum(not p.is_root for p in ws.projects)
    ):
        # `!=`, `==3.11.*`: no intersection here, so a bound a left-out member held may stay.
        note = (
            f"{uv.NAME}: requires-python kept as {was} — vx cannot combine the form"
            f" {unread[0]} uses; if uv sync --locked then refuses, run uv lock in the output"
        )
        notes = (note,)
    return UvPlan(kept, rendered, (uv.NAME,), notes, tuple(sources))


def _local_sources(lock_text: str, members: set[str]) -> list[str]:
    """The root-relative paths of the local packages (path, directory and editable sources)
    the pruned lock installs besides the members `members`: `uv sync --locked` reads them, so
    they go into the output. One outside the workspace root is refused: the output could not
    hold it where the lock says."""
    packages = _toml(lock_text, uv.NAME).get("package")
    out: list[str] = []
    for pkg in packages if isinstance(packages, list) else ():
        source = pkg.get("source") if isinstance(pkg, dict) else None
        if not isinstance(source, dict):
            continue
        where = next((source[k] for k in _LOCAL_SOURCES if isinstance(source.get(k), str)), None)
        if where is None:
            continue
        rel = posixpath.normpath(where)
        if rel in members:
            continue
        if posixpath.isabs(rel) or rel == ".." or rel.startswith("../"):
            raise UserError(
                ErrorCode.CONFIG,
                f"vx prune: {uv.NAME}: {pkg.get('name')} comes from {where}, outside the"
                " workspace root, which the pruned output cannot hold — move it under the root",
            )
        out.append(rel)
    return sorted(set(out))


def _shown(rel_dir: str) -> str:
    return PYPROJECT if rel_dir == "." else f"{rel_dir}/{PYPROJECT}"


def _toml(text: str, shown: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(ErrorCode.CONFIG, f"{shown}: not valid TOML: {exc}") from None


def _subset(
    ws: Workspace, seeds: Sequence[Project], graph: LockGraph | None, *, production: bool
) -> set[str]:
    """The seeds and the members they reach through pyproject and uv.lock edges; with
    `production`, only through edges something other than a dependency group makes."""
    by_name = {p.name: p for p in ws.projects}
    edges = {
        owner.name: [
            d
            for d in ws.package_deps.get(owner.name, ())
            if d in by_name and (not production or _runtime_edge(owner, by_name[d], graph))
        ]
        for owner in ws.projects
    }
    return set(closure(edges, (p.name for p in seeds)))


def _runtime_edge(owner: Project, dep: Project, graph: LockGraph | None) -> bool:
    fields = owner.dependency_fields.get(normalize_python_name(dep.name), ())
    if any(not is_weak_field(f) for f in fields):
        return True
    locked = graph.importers.get(owner.rel_dir, {}) if graph is not None else {}
    return any(d.target == link_to(dep.rel_dir) and not d.dev for d in locked.values())


def _cut_members(text: str, dirs: list[str]) -> str:
    """The root pyproject.toml with `[tool.uv.workspace] members` listing `dirs` only."""
    cut = tomltext.replace_array(text, "tool.uv.workspace", "members", dirs)
    found: Any = None
    if cut is not None:
        found = _toml(cut, PYPROJECT).get("tool", {}).get("uv", {}).get("workspace", {})
    if not isinstance(found, dict) or found.get("members") != dirs or cut is None:
        raise UserError(
            ErrorCode.CONFIG,
            f"vx prune: {PYPROJECT} lists its members in a form vx cannot rewrite — write"
            " them as members = [...] under a [tool.uv.workspace] table",
        )
    return cut


def _without_groups(text: str, shown: str) -> str:
    """`text` without its dependency groups (and uv's older dev-dependencies, default groups
    and per-group settings, which uv refuses once the groups they name are gone): what only
    they install is what `--production` leaves out."""
    cut = tomltext.drop_tables(text, _group_table)
    for key in ("dev-dependencies", "default-groups", "dependency-groups"):
        cut = tomltext.drop_key(cut, "tool.uv", key)
    doc = _toml(cut, shown)
    tool_uv = doc.get("tool", {}).get("uv", {})
    if "dependency-groups" in doc or {"dev-dependencies", "dependency-groups"} & set(tool_uv):
        raise UserError(
            ErrorCode.CONFIG,
            f"vx prune --production: {shown} lists dependency groups in a form vx cannot cut"
            " — write them as a [dependency-groups] table",
        )
    return cut


def _group_table(name: str) -> bool:
    """Whether a table only dependency groups need: `[dependency-groups]` and uv's
    `[tool.uv.dependency-groups]` settings, with their sub-tables."""
    return (name + ".").startswith(("dependency-groups.", "tool.uv.dependency-groups."))


def _dynamic_files(text: str, rel_dir: str) -> list[str]:
    """The root-relative files `[tool.setuptools.dynamic]` reads dependencies from: uv builds
    such a member's metadata to check a `--locked` sync, so the install layer needs them."""
    doc = _toml(text, _shown(rel_dir))
    table = doc.get("tool", {}).get("setuptools", {}).get("dynamic", {})
    if not isinstance(table, dict):
        return []
    extras = table.get("optional-dependencies")
    specs = [table.get("dependencies"), *(extras.values() if isinstance(extras, dict) else ())]
    out: list[str] = []
    for spec in specs:
        named = spec.get("file") if isinstance(spec, dict) else None
        listed = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        # Anything but a string names no file: setuptools reports that when uv builds.
        for name in (n for n in listed if isinstance(n, str)):
            rel = posixpath.normpath(posixpath.join(rel_dir, name))
            if rel != ".." and not rel.startswith(("../", "/")):
                out.append(rel)
    return out


def _requires_python(text: str, rel_dir: str) -> str | None:
    project = _toml(text, _shown(rel_dir)).get("project")
    found = project.get("requires-python") if isinstance(project, dict) else None
    return found if isinstance(found, str) else None


class _Bound(Record):
    """One end of a Python range: the version padded for comparing, whether it is excluded
    (`>` / `<`), and its spelling (`>=3.10`)."""

    version: tuple[int, ...]
    strict: bool
    shown: str


def intersect(specs: Iterable[str | None]) -> str | None:
    """The `requires-python` uv writes for members declaring `specs`: the highest lower bound
    and the lowest upper one (`>=3.10, <4`). None when no member declares one, or one uses a
    form this does not combine (`!=`, `==`), and the lock's own line then stays."""
    found = _range(specs)
    if found is None:
        return None
    return ", ".join(b.shown for b in found if b is not None) or None


def same_range(left: str, right: str) -> bool:
    """Whether two `requires-python` values allow the same versions however spelled
    (`>= 3.10,<4.0` and `>=3.10, <4`); False when either is a form `intersect` does not read."""
    ends = [_range([left]), _range([right])]
    keys = [tuple(b and (b.version, b.strict) for b in end) if end else None for end in ends]
    return keys[0] is not None and keys[0] == keys[1]


def _range(specs: Iterable[str | None]) -> tuple[_Bound | None, _Bound | None] | None:
    """(lower, upper) over every clause of `specs`; None as `intersect` says."""
    lower: _Bound | None = None
    upper: _Bound | None = None
    declared = False
    for spec in specs:
        if spec is None:
            continue
        declared = True
        for clause in spec.split(","):
            found = _CLAUSE.match(clause)
            if found is None:
                return None
            op, text = found.groups()
            key = tuple(int(n) for n in text.split("."))
            ends: list[tuple[str, tuple[int, ...], str]] = [(op, key, text)]
            if op == "~=":
                if len(key) < 2:
                    return None
                top = (*key[:-2], key[-2] + 1)
                ends = [(">=", key, text), ("<", top, ".".join(map(str, top)))]
            for kind, version, shown in ends:
                padded = version + (0,) * (4 - len(version))
                bound = _Bound(padded, kind in (">", "<"), kind + shown)
                if kind.startswith(">"):
                    if lower is None or (bound.version, bound.strict) > lower[:2]:
                        lower = bound
                elif upper is None or (bound.version, not bound.strict) < (
                    upper.version,
                    not upper.strict,
                ):
                    upper = bound
    return (lower, upper) if declared else None
