"""From what a traced task did to the cache block it needs: globs that name what it read and
wrote, generalised only as far as they stay true.

Pure: the caller hands in root-relative POSIX paths (the trace's, the files git tracks, the
files on disk), so this module reads nothing and runs nothing.

The rules, each for a reason:

- Paths outside the workspace are the toolchain (`/usr`, `~/.cache`): vx keys those through
  lockfiles and runtime probes, not file globs. Paths under a dependency, VCS or tool-cache
  directory (`node_modules`, `.git`, `__pycache__`, `.yarn`, `.venv`, `.cache`, `.*_cache`) are
  the package manager's or a tool's own state, neither inputs nor outputs.
- A written file git tracks makes the task uncacheable: restoring it would overwrite a source.
- An output directory glob (`lib/**`) is used only where every file beneath it is the task's
  own, since vx cleans outputs before each run; else the glob narrows to the files themselves.
  Outside its package only the package was looked at, so what a task writes there is named
  file by file.
- An input directory glob (`src/**`) is used unless it would take in the task's outputs, so a
  file added beside the ones read next time is an input too.
- Reads of files some observed task wrote are left out: they are that task's outputs, which
  reach the reader's key through its `dependsOn` key, not as files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_STATE_DIRS = frozenset(
    {"node_modules", ".git", "__pycache__", ".yarn", ".venv", ".cache", ".turbo", ".nx"}
)


class Seen(Record):
    """One task's observation, paths relative to the workspace root.

    `written` are the files the task left behind (written and still there); `existing` every
    file on disk in the package before the task ran, beside what git tracks.
    """

    package: str  # the package's directory, "." for the root
    reads: frozenset[str]
    written: frozenset[str]
    tracked: frozenset[str]
    existing: frozenset[str]
    others_wrote: frozenset[str]  # files earlier observed tasks wrote


class Verdict(Record):
    """A cache block as JSON-ready lists, or why the task is left uncached."""

    block: Mapping[str, object] | None
    reason: str | None = None


def state_path(rel: str) -> bool:
    """Whether `rel` lies in a package manager's, VCS's or tool's own state directory."""
    parts = rel.split("/")
    return any(p in _STATE_DIRS or (p.startswith(".") and p.endswith("cache")) for p in parts[:-1])


def inside(rel: str, base: str) -> bool:
    """`rel` lies in the directory `base` ("." holds everything)."""
    return base == "." or rel.startswith(base + "/")


def derive(seen: Seen) -> Verdict:
    """The cache block `seen` calls for, or why there is none."""
    written = sorted(p for p in seen.written if not state_path(p))
    tracked = [p for p in written if p in seen.tracked]
    if tracked:
        more = f" and {len(tracked) - 1} more" if len(tracked) > 1 else ""
        return Verdict(None, f"it writes {tracked[0]}{more}, which git tracks")
    base = seen.package
    own_out = [_local(p, base) for p in written if inside(p, base)]
    ws_out = [p for p in written if not inside(p, base)]
    keep = {_local(p, base) for p in seen.existing | seen.tracked if inside(p, base)}
    keep -= set(own_out)
    out_files = generalise(own_out, keep)
    reads = sorted(
        p
        for p in seen.reads
        if not state_path(p) and p not in seen.written and p not in seen.others_wrote
    )
    own_in = [_local(p, base) for p in reads if inside(p, base)]
    ws_in = [p for p in reads if not inside(p, base) and p in seen.tracked]
    in_files = generalise(own_in, set(own_out))
    inputs: dict[str, object] = {"files": in_files}
    if ws_in:
        inputs["workspaceFiles"] = ws_in
    outputs: dict[str, object] = {"files": out_files}
    if ws_out:  # by name: what else lies in a directory out there was never looked at
        outputs["workspaceFiles"] = ws_out
    return Verdict({"inputs": inputs, "outputs": outputs})


def _local(rel: str, base: str) -> str:
    return rel if base == "." else rel[len(base) + 1 :]


def generalise(paths: Iterable[str], blocked: Iterable[str]) -> list[str]:
    """`paths` as globs: each file under the shallowest directory holding no `blocked` path
    becomes that directory's `**`; a file with no such directory stays itself. Sorted."""
    taken: set[str] = set()
    for path in blocked:
        parts = path.split("/")
        taken.update("/".join(parts[:i]) for i in range(1, len(parts)))
    out: set[str] = set()
    for path in paths:
        parts = path.split("/")
        for i in range(1, len(parts)):
            directory = "/".join(parts[:i])
            if directory not in taken:
                out.add(f"{directory}/**")
                break
        else:
            out.add(path)
    return sorted(out)


def differing(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The files whose digest differs between two runs, or that only one run left behind."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
