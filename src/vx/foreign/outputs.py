"""Making outputs read from turbo.json / nx.json safe for vx, which cleans them.

Turbo and Nx never delete an output before a run; vx cleans a task's declared outputs before
it runs and before a restore. So an output glob a Turbo or Nx repo declares safely can delete
committed files, the package's own manifest, or another task's work under vx. Each mapped
task's outputs are settled here before vx sees them: committed files and the project's own
files under an output are taken back with `!` entries (never cleaned, saved or restored), and
where two cached tasks share an output path with no edge ordering them, the first keeps its
cache and the others run uncached, each with a warning saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx import git
from vx.errors import UserError
from vx.util.globs import compile_globs, covered, fixed_prefix, has_magic, segment_regex

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.foreign.driver import Warnings

OWN_FILES = (
    "package.json",
    "vx.config.json",
    "vx.config.toml",
    "vx.config.py",
    "turbo.json",
    "turbo.jsonc",
    "project.json",
)
MAX_TAKEN_BACK = 16
"""Past this many committed files under one task's outputs, its cache costs more than it saves:
every `!` entry is matched against each output path on every save, clean and restore."""

Tables = dict[str, dict[str, dict[str, Any]]]


def settle_outputs(
    root: Path, tasks: Tables, rel_dirs: Mapping[str, str], warnings: Warnings
) -> None:
    """Take back own and committed files under every output, then resolve shared paths."""
    tracked = _tracked(root)
    for project, table in tasks.items():
        rel = rel_dirs.get(project, ".")
        local = _under(tracked, rel)
        for name, task in table.items():
            outputs = _outputs(task)
            if outputs is None:
                continue
            files = outputs.get("files")
            if files:
                outputs["files"] = files + _own_takebacks(files)
            _wildcard_first(f"{project}#{name}", task, local, warnings)
            if "cache" in task:
                _take_back_tracked(f"{project}#{name}", task, local, tracked, warnings)
        _shared_in_project(project, table, warnings)
    _shared_across(tasks, rel_dirs, warnings)


def _tracked(root: Path) -> list[str]:
    try:
        return sorted(git.ls_files_stage(root))
    except (UserError, OSError):
        return []  # no git here: the run itself says so, in one line


def _under(tracked: Sequence[str], rel: str) -> list[str]:
    if rel in (".", ""):
        return list(tracked)
    prefix = rel + "/"
    return [f[len(prefix) :] for f in tracked if f.startswith(prefix)]


def _outputs(task: Mapping[str, Any]) -> dict[str, list[str]] | None:
    cache = task.get("cache")
    if not isinstance(cache, dict):
        return None
    outputs = cache.get("outputs")
    return outputs if isinstance(outputs, dict) else None


def _positive(globs: Sequence[str]) -> list[str]:
    return [g for g in globs if not g.startswith("!")]


def _own_takebacks(files: Sequence[str]) -> list[str]:
    matcher = compile_globs(files)
    return [f"!{own}" for own in OWN_FILES if matcher.match(own)]


def _take_back_tracked(
    tid: str, task: dict[str, Any], local: Sequence[str], tracked: Sequence[str], warnings: Warnings
) -> None:
    outputs = _outputs(task)
    assert outputs is not None  # noqa: S101 - the caller checked
    hits = {
        key: covered(outputs.get(key, []), base)
        for key, base in (("files", local), ("workspaceFiles", tracked))
    }
    spared = [f for found in hits.values() for f in found]
    if not spared:
        return
    shown = ", ".join(spared[:3]) + (", …" if len(spared) > 3 else "")
    if len(spared) > MAX_TAKEN_BACK:
        del task["cache"]
        warnings.line(
            f"{tid}: its outputs cover {len(spared)} committed files ({shown}), which vx would"
            " clean before each run — it runs uncached; declare its exact outputs in a"
            " vx.config to cache it"
        )
        return
    for key, found in hits.items():
        if found:
            outputs[key] = outputs[key] + [f"!{f}" for f in found]
    warnings.line(
        f"{tid}: its outputs cover {len(spared)} committed file(s) ({shown}); vx cleans outputs"
        " before a run, so they are taken back with ! and kept"
    )


def _reaches_sources(glob: str, local: Sequence[str]) -> bool:
    """Whether an output glob whose first segment is a wildcard can reach a source file.

    Three shapes are known safe when the project's committed files say so: one segment with a
    literal extension no committed file carries (`*.xml` reports), `**/<dir>/**` where no
    committed file sits under a directory of that name, and a first segment without `**` that
    names no committed top-level entry (`dist-*`). Anything else may match a source not yet
    committed, which a clean would delete for good.
    """
    first, _, rest = glob.partition("/")
    if not has_magic(first):
        return False
    if not rest and "." in first and not has_magic(first.rpartition(".")[2]):
        ext = "." + first.rpartition(".")[2]
        return any(f.endswith(ext) for f in local)
    dirs = glob.split("/")
    if len(dirs) == 3 and dirs[0] == "**" and dirs[2] == "**" and not has_magic(dirs[1]):
        return any(f"/{dirs[1]}/" in f"/{f}" for f in local)
    if "**" not in first:
        matcher = segment_regex(first)
        return any(matcher.match(f.partition("/")[0]) for f in local)
    return True


def _wildcard_first(
    tid: str, task: dict[str, Any], local: Sequence[str], warnings: Warnings
) -> None:
    outputs = _outputs(task)
    if outputs is None:
        return
    for glob in _positive(outputs.get("files", [])):
        if _reaches_sources(glob, local):
            del task["cache"]
            warnings.line(
                f"{tid}: its output {glob!r} starts with a wildcard that reaches the sources,"
                " which vx would clean before each run — it runs uncached; declare its exact"
                " outputs in a vx.config to cache it"
            )
            return


def overlap(a: Sequence[str], b: Sequence[str]) -> tuple[str, str] | None:
    """Two glob lists whose walks could meet, as vx's run refuses them: one literal prefix
    holding the other."""
    for pa in _positive(a):
        for pb in _positive(b):
            x, y = fixed_prefix(pa), fixed_prefix(pb)
            if not x or not y or x == y or x.startswith(y + "/") or y.startswith(x + "/"):
                return pa, pb
    return None


def _reaches(table: Mapping[str, Mapping[str, Any]], start: str, goal: str) -> bool:
    """Whether `start` waits on `goal` through same-project dependsOn edges (groups too)."""
    seen: set[str] = set()
    todo = [d for d in table.get(start, {}).get("dependsOn", []) if "#" not in d and "^" not in d]
    while todo:
        name = todo.pop()
        if name == goal:
            return True
        if name in seen:
            continue
        seen.add(name)
        deps = table.get(name, {}).get("dependsOn", [])
        todo.extend(d for d in deps if "#" not in d and "^" not in d)
    return False


def _shared_in_project(project: str, table: dict[str, dict[str, Any]], warnings: Warnings) -> None:
    """Two cached tasks of one project on one output path: the one a dependant waits for
    (a `^` edge), else the first declared, keeps its cache; another stays cached when an edge
    orders it against every kept task it overlaps, and otherwise runs uncached."""
    cached = [
        name
        for name, task in table.items()
        if (out := _outputs(task)) is not None and _positive(out.get("files", []))
    ]

    def files(name: str) -> list[str]:
        out = _outputs(table[name])
        return out.get("files", []) if out else []

    def upstream(name: str) -> bool:
        return any(d.startswith("^") for d in table[name].get("dependsOn", []))

    dropped: set[str] = set()
    for a in cached:
        if a in dropped:
            continue
        group = [b for b in cached if b != a and b not in dropped and overlap(files(a), files(b))]
        if not group:
            continue
        everyone = [a, *group]
        keeper = next((c for c in everyone if upstream(c)), a)
        kept = [keeper]
        for c in everyone:
            if c == keeper:
                continue
            clash = next(
                (
                    k
                    for k in kept
                    if overlap(files(c), files(k))
                    and not (_reaches(table, c, k) or _reaches(table, k, c))
                ),
                None,
            )
            if clash is None:
                kept.append(c)
                continue
            pair = overlap(files(c), files(clash))
            assert pair is not None  # noqa: S101 - the clash was found by it
            dropped.add(c)
            del table[c]["cache"]
            warnings.line(
                f"{project}#{c}: its output {pair[0]!r} overlaps {project}#{clash}'s {pair[1]!r}"
                " with no dependsOn edge between them — vx cleans outputs before a run and a"
                " restore, so it runs uncached; give it its own output path, or order the two"
            )


def _shared_across(tasks: Tables, rel_dirs: Mapping[str, str], warnings: Warnings) -> None:
    """Workspace outputs (`$TURBO_ROOT$/…`, `{workspaceRoot}/…`) against every other task's
    outputs at their workspace paths: the first in project and task order keeps its cache."""
    kept: list[tuple[str, list[str], list[str], str]] = []  # id, workspace globs, own, project
    for project in sorted(tasks):
        rel = rel_dirs.get(project, ".")
        for name, task in tasks[project].items():
            out = _outputs(task)
            if out is None:
                continue
            ws = _positive(out.get("workspaceFiles", []))
            own = [g if rel == "." else f"{rel}/{g}" for g in _positive(out.get("files", []))]
            if not ws and not own:
                continue
            clash = None
            for other, k_ws, k_own, k_project in kept:
                against = k_ws if k_project == project else k_ws + k_own
                pair = overlap(ws, k_ws + k_own) if ws else None
                pair = pair or overlap(own, against)
                if pair is not None:
                    clash = (other, pair)
                    break
            if clash is None:
                kept.append((f"{project}#{name}", ws, own, project))
                continue
            del task["cache"]
            warnings.line(
                f"{project}#{name}: its output {clash[1][0]!r} overlaps {clash[0]}'s"
                f" {clash[1][1]!r} — two cached tasks on one path would delete each other's"
                " work, so it runs uncached; give it its own output path to cache it"
            )
