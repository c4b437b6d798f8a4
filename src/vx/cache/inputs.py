"""One task's key components, gathered from the workspace model, the run's file table and env.

Every task gets a key, because its dependants fold it. A task with a `cache` block folds
everything it declares: its files, variables, runtime commands and the keys of the dependencies
`inputs.tasks` selects. A task without one (an uncached task, or a group) folds only what
defines it: the format, the workspace fingerprint, its manifest, its config, its forwarded args
and its dependencies' keys. Its files are deliberately not read: it runs every time anyway,
and a dependant that reads what it produces declares those files as its own inputs.

Upstream keys are passed in by the caller; this module never walks the graph.
"""

from __future__ import annotations

import os
import stat
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.cache.key import (
    KeyComponent,
    Kind,
    canonical,
    digest_json,
    digest_text,
    env_digest,
    format_component,
)
from vx.errors import ErrorCode, UserError
from vx.ids import ROOT, TaskId
from vx.util.globs import compile_globs, fixed_prefix

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from vx.cache.fileids import FileTable
    from vx.workspace.model import CacheSpec, Project, TaskDef, Workspace


class ProbeError(UserError):
    """A runtime command that could not give an answer: it hung, or `sh` would not start."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.REFUSED, message)


if TYPE_CHECKING:
    from typing import Protocol

    class RuntimeDigests(Protocol):
        """What a key asks of `inputs.runtime` commands: the digest of each one's answer in a
        directory (`run/runtime.RuntimeProbe` runs them; a failure is a `ProbeError`)."""

        def digest(self, command: str, cwd: Path) -> str: ...


# Root files whose change can alter what any task of the workspace installs or resolves.
WORKSPACE_FILES = (
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    "uv.lock",
    "pnpm-workspace.yaml",
    ".npmrc",
    ".yarnrc.yml",
    "bunfig.toml",
)

# Fields of `TaskDef.resolved` that only describe a task to people: editing them re-keys nothing.
DISPLAY_ONLY = frozenset({"description"})

ABSENT = "absent"

_NO_GROUPS: Mapping[str, Sequence[str]] = MappingProxyType({})


def workspace_fingerprint(files: FileTable) -> tuple[KeyComponent, ...]:
    """The root lockfiles and package-manager files that exist, by content id; once per run."""
    out: list[KeyComponent] = []
    for name in WORKSPACE_FILES:
        found = files.id_of(name)
        if found is not None:
            out.append(KeyComponent(Kind.WORKSPACE, name, found))
    return tuple(out)


def config_component(task: TaskDef) -> KeyComponent:
    """The task's resolved config in canonical JSON, display-only fields left out."""
    kept = {k: v for k, v in task.resolved.items() if k not in DISPLAY_ONLY}
    return KeyComponent(Kind.CONFIG, task.name, digest_json(kept))


def env_names(patterns: Iterable[str], env: Mapping[str, str]) -> list[str]:
    """The variables `inputs.env` keys on: each name as written, and for a pattern ending in
    `*` every variable set now whose name starts with the rest, in sorted order. The task
    receives the same set, so a value it sees is a value its key holds."""
    names: list[str] = []
    for pattern in dict.fromkeys(patterns):
        if pattern.endswith("*"):
            prefix = pattern[:-1]
            names.extend(sorted(name for name in env if name.startswith(prefix)))
        else:
            names.append(pattern)
    return list(dict.fromkeys(names))


def task_components(
    ws: Workspace,
    project: Project,
    task: TaskDef,
    *,
    files: FileTable,
    env: Mapping[str, str],
    forward: tuple[str, ...],
    upstream: Sequence[tuple[str, str]],
    runtime: RuntimeDigests,
    workspace: Sequence[KeyComponent] | None = None,
    group_members: Mapping[str, Sequence[str]] = _NO_GROUPS,
    nested: Mapping[str, tuple[str, ...]] | None = None,
    base_dir: str | None = None,
    lockfile: Sequence[KeyComponent] = (),
) -> tuple[KeyComponent, ...]:
    """Every component of one task's key, in canonical order.

    `upstream` holds `(dependency task id, its key)` pairs; `group_members` maps a dependency
    that is a group to the task ids it stands for (through nested groups), so an `inputs.tasks`
    entry that would only reach a member is refused instead of silently selecting nothing.
    `workspace` is `workspace_fingerprint(files)`, computed once by the caller; omitted, it is
    computed here. `lockfile` holds the project's `lockfile` components (what it resolves
    from each lockfile keyed per project, which `workspace` then leaves out). `forward` is
    empty for a task the user did not request. `nested` and
    `base_dir` are per-run precomputations (`nested_dirs(ws)`, `files_dir(ws, project)`).
    """
    task_id = str(TaskId(project.name, task.name))
    base = base_dir if base_dir is not None else files_dir(ws, project)
    out = [format_component()]
    out.extend(workspace_fingerprint(files) if workspace is None else workspace)
    out.extend(lockfile)
    manifest = _manifest_path(project, base)
    if manifest is not None:
        out.append(KeyComponent(Kind.PACKAGE, manifest, files.id_of(manifest) or ABSENT))
    out.append(config_component(task))
    cache = task.cache_spec
    if cache is not None:
        out.extend(_file_components(ws, project, base, cache, files, nested))
        out.extend(
            KeyComponent(Kind.ENV, name, env_digest(env.get(name)))
            for name in env_names(cache.inputs.env, env)
        )
        out.extend(
            _probes(task_id, Kind.RUNTIME, cache.inputs.runtime, ws.root / project.rel_dir, runtime)
        )
        out.extend(
            _probes(task_id, Kind.WS_RUNTIME, cache.inputs.workspace_runtime, ws.root, runtime)
        )
    out.extend(
        KeyComponent(Kind.FORWARD, str(i), digest_text(arg)) for i, arg in enumerate(forward)
    )
    chosen = dict(upstream)
    if cache is not None and cache.inputs.tasks is not None:
        root = ws.root_project
        scope = (project.name, root.name if root else ROOT)
        chosen = _select_upstream(task_id, scope, cache.inputs.tasks, chosen, group_members)
    out.extend(KeyComponent(Kind.UPSTREAM, dep, key) for dep, key in chosen.items())
    return canonical(out)


def _probes(
    task_id: str, kind: Kind, commands: Sequence[str], cwd: Path, runtime: RuntimeDigests
) -> list[KeyComponent]:
    out: list[KeyComponent] = []
    for command in dict.fromkeys(commands):
        try:
            out.append(KeyComponent(kind, command, runtime.digest(command, cwd)))
        except ProbeError as exc:
            field = "runtime" if kind is Kind.RUNTIME else "workspaceRuntime"
            raise UserError(exc.code, f"{task_id}: cache.inputs.{field}: {exc.message}") from None
    return out


def _file_components(
    ws: Workspace,
    project: Project,
    base: str,
    cache: CacheSpec,
    files: FileTable,
    nested: Mapping[str, tuple[str, ...]] | None,
) -> list[KeyComponent]:
    local = files.paths_under(base, stop_at=_nested_dirs(ws, project, base, nested))
    strip = 0 if base == "." else len(base) + 1
    inputs = cache.inputs
    chosen: list[str]
    if inputs.files is None:
        outputs = compile_globs(cache.outputs.files)
        ws_outputs = compile_globs(cache.outputs.workspace_files)
        own = _runner_files(base)
        chosen = [
            p
            for p in local
            if p not in own and not outputs.match(p[strip:]) and not ws_outputs.match(p)
        ]
    else:
        wanted = compile_globs(inputs.files)
        chosen = [p for p in local if wanted.match(p[strip:])]
    if inputs.workspace_files:
        chosen.extend(_workspace_paths(inputs.workspace_files, files))
    out: list[KeyComponent] = []
    for path in dict.fromkeys(chosen):
        found = files.id_of(path)
        if found is not None:
            out.append(KeyComponent(Kind.FILE, path, found))
    return out


_CONFIG_FILES = ("vx.config.json", "vx.config.toml", "vx.config.py")
_WORKSPACE_FILES = ("vx.workspace.json", "vx.workspace.toml", "vx.workspace.py")


def _runner_files(base: str) -> frozenset[str]:
    """The project's own vx config (and the root's workspace config), left out of its default
    inputs: what they say reaches the key as the `config` component, so a comment, a format
    change or `vx migrate` writing them moves no key."""
    if base == ".":
        return frozenset((*_CONFIG_FILES, *_WORKSPACE_FILES))
    return frozenset(f"{base}/{name}" for name in _CONFIG_FILES)


def _workspace_paths(patterns: Sequence[str], files: FileTable) -> list[str]:
    matcher = compile_globs(patterns)
    candidates: dict[str, None] = {}
    for pattern in matcher.includes:
        candidates.update(dict.fromkeys(files.paths_with_prefix(fixed_prefix(pattern))))
    return [p for p in candidates if matcher.match(p)]


def files_dir(
    ws: Workspace,
    project: Project,
    *,
    real_root: str | None = None,
    parents: dict[str, str] | None = None,
) -> str:
    """The project's directory as git names its files: a member linked from elsewhere under the
    root is read where it really lives, since git lists the files there and not by the link.

    `real_root` is the root's realpath, when the caller has it already (once per run);
    `parents` keeps resolved parent directories between calls, so a thousand members under
    `packages/` cost one `lstat` each rather than a walk of every path component.
    """
    root = real_root if real_root is not None else os.path.realpath(ws.root)
    where = os.path.join(ws.root, project.rel_dir)  # noqa: PTH118
    real = os.path.realpath(where) if parents is None else _real_path(where, parents)
    if real == root:
        return "."
    if real.startswith(root + os.sep):
        return PurePosixPath(os.path.relpath(real, root)).as_posix()
    return project.rel_dir


def _real_path(path: str, parents: dict[str, str]) -> str:
    """`os.path.realpath(path)`, resolving its parent once per parent: only the last step is
    checked for a link here."""
    parent, name = os.path.split(path)
    if not name or name in (".", ".."):
        return os.path.realpath(path)
    real_parent = parents.get(parent)
    if real_parent is None:
        real_parent = parents[parent] = os.path.realpath(parent)
    joined = os.path.join(real_parent, name)  # noqa: PTH118
    try:
        if not stat.S_ISLNK(os.lstat(joined).st_mode):
            return joined
    except OSError:
        pass  # absent: realpath answers for it as it would
    return os.path.realpath(path)


def _nested_dirs(
    ws: Workspace, project: Project, base: str, nested: Mapping[str, tuple[str, ...]] | None
) -> list[str]:
    """The other projects inside this one, as directories under `base` (its files' real place).

    `nested` (from `vx.workspace.layout.nested_dirs`, once per run) answers the common case, a
    project read where it is listed, without comparing it with every other project.
    """
    if nested is not None and base == project.rel_dir:
        return list(nested.get(project.name, ()))
    out: list[str] = []
    for other in ws.projects:
        if other.name == project.name:
            continue
        if _inside(other.rel_dir, base):
            out.append(other.rel_dir)
        elif base != project.rel_dir and _inside(other.rel_dir, project.rel_dir):
            out.append(_rebase(other.rel_dir, project.rel_dir, base))
    return out


def _inside(rel_dir: str, base: str) -> bool:
    if rel_dir in (".", "", base):
        return False
    return base == "." or rel_dir.startswith(base + "/")


def _manifest_path(project: Project, base: str) -> str | None:
    """`Project.manifest` (root-relative) where git names it: under `base`, past any link."""
    if project.manifest is None or base == project.rel_dir:
        return project.manifest
    return _rebase(project.manifest, project.rel_dir, base)


def _rebase(path: str, old: str, new: str) -> str:
    """`path`, inside the directory `old`, moved to the same place inside `new`."""
    suffix = path if old == "." else path[len(old) + 1 :]
    return suffix if new == "." else f"{new}/{suffix}"


def _select_upstream(
    task_id: str,
    scope: tuple[str, str],
    entries: Sequence[str],
    upstream: Mapping[str, str],
    group_members: Mapping[str, Sequence[str]],
) -> dict[str, str]:
    """The dependencies `inputs.tasks` keeps; an entry that reaches only a group's member is
    refused, since selecting nothing would stop the key from moving with that member.

    `scope` is (this task's project, the root project's name), which `//#name` stands for.
    """
    tests = [(entry, _reference(task_id, scope, entry)) for entry in entries]
    for entry, test in tests:
        if any(test(dep) for dep in upstream):
            continue
        for group in upstream:
            member = next((m for m in group_members.get(group, ()) if test(m)), None)
            if member is not None:
                group_task = TaskId.parse(group).task
                raise UserError(
                    ErrorCode.CONFIG,
                    f"{task_id}: cache.inputs.tasks: '{entry}' reaches {member} only through the"
                    f" group {group} and selects nothing — name '{group_task}' or depend on"
                    f" {member} directly",
                )
    return {dep: key for dep, key in upstream.items() if any(test(dep) for _, test in tests)}


def _reference(task_id: str, scope: tuple[str, str], entry: str) -> Callable[[str], bool]:
    """A test of a dependency id for one entry: `name`, `^name`, `pkg#name` or `//#name`."""
    own, root = scope
    name = entry.removeprefix("^")
    project, sep, task = name.rpartition("#")
    malformed = sep and (name != entry or not project or not task)
    if not task or malformed or task.startswith("^") or any(ch.isspace() for ch in entry):
        raise UserError(
            ErrorCode.CONFIG,
            f"{task_id}: cache.inputs.tasks: '{entry}' names no task"
            " — write 'build', '^build', 'pkg#build' or '//#build'",
        )
    if entry.startswith("^"):
        return lambda dep: _split(dep)[1] == name and _split(dep)[0] != own
    if sep:
        projects = {project, root} if project == ROOT else {project}
        return lambda dep: _split(dep)[1] == task and _split(dep)[0] in projects
    return lambda dep: _split(dep) == (own, name)


def _split(dep: str) -> tuple[str, str]:
    project, _, task = dep.rpartition("#")
    return project, task
