"""`vx init`'s plan: which files to write from package.json scripts, which to keep, and what to
tell the user. Nothing is written here; `apply_plan` writes a plan once it is decided.

`plan_init` is the one place that decides what to write: it reads the repo, drafts each
package's tasks (init_tasks.py), and turns the drafts into files (init_render.py). A
different source of tasks is a different draft step feeding the same `_files` step.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from vx.errors import ConfigError, ErrorCode, UserError
from vx.workspace import script_words as sw
from vx.workspace.config_load import PROJECT_STEM, SUFFIXES, WORKSPACE_STEM
from vx.workspace.discover import find_root
from vx.workspace.init_render import render_project, render_workspace
from vx.workspace.init_tasks import (
    BUILD,
    CACHE_REASON,
    COPY_REASON,
    LIFECYCLE,
    PackageDraft,
    TaskDraft,
    draft_package,
    script_table,
)
from vx.workspace.manifests import PACKAGE_JSON, load_json_object
from vx.workspace.model import Manager
from vx.workspace.script_host import ScriptHost, detect_host

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

# Tasks `next:` never suggests first: they serve, or change the repo or the world.
_CHANGES = frozenset(
    {"clean", "release", "publish", "deploy", "version", "format", "fix", "lint:fix",
     "format:fix", "changeset", "bump", "upgrade", "reset"}
)  # fmt: skip
_RUNNERS = {"npm": "npx", "pnpm": "pnpm", "yarn": "yarn", "bun": "bunx"}
LISTED = 5
EXAMPLE_PATH = f"packages/<name>/{PROJECT_STEM}.json"
EXAMPLE_CONFIG = '{"tasks": {"build": {"dependsOn": ["^build"], "exec": "tsc -b"}}}'


class ConfigFormat(StrEnum):
    """The spelling `vx init` writes configs in."""

    JSON = "json"
    TOML = "toml"
    PY = "py"


class InitRequest(NamedTuple):
    """What the user asked `vx init` for. `env` is read for `npm_config_user_agent` only."""

    cwd: Path
    format: ConfigFormat = ConfigFormat.JSON
    force: bool = False
    env: Mapping[str, str] = {}


class PlannedFile(NamedTuple):
    """A file to write: root-relative POSIX path and its whole text."""

    path: str
    text: str


class TodoGroup(NamedTuple):
    """One reason to revisit a generated config, and the tasks (`pkg#task`) it applies to."""

    reason: str
    tasks: tuple[str, ...]


class InitPlan(NamedTuple):
    """Everything `vx init` will do and say. `replaced` are existing configs `--force`
    overwrites or removes (one of another extension); `kept` the configs left as they are."""

    root: Path
    files: tuple[PlannedFile, ...]
    kept: tuple[str, ...]
    replaced: tuple[str, ...]
    todos: tuple[TodoGroup, ...]
    notes: tuple[str, ...]
    next: str
    mapped: int  # tasks written across every file


class _Package(NamedTuple):
    """A member (or the root) as init sees it: where, its name, its package.json."""

    rel_dir: str
    name: str | None
    manifest: dict[str, object]


def existing_configs(directory: Path, stem: str) -> tuple[str, ...]:
    """The file names of `<stem>.*` configs already in `directory`, in the loader's order."""
    return tuple(f"{stem}{s}" for s in SUFFIXES if (directory / f"{stem}{s}").is_file())


def _join(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}"


def _read(root: Path, rel_dir: str) -> dict[str, object] | None:
    path = root / rel_dir / PACKAGE_JSON
    if not path.is_file():
        return None
    return load_json_object(path, _join(rel_dir, PACKAGE_JSON))


def _in_git(root: Path) -> bool:
    return any((d / ".git").exists() for d in (root, *root.parents))


def plan_init(request: InitRequest) -> InitPlan:
    """Read the repo at `request.cwd` and decide every file `vx init` writes."""
    try:
        found = find_root(request.cwd)
    except UserError as e:
        if e.code is not ErrorCode.NO_WORKSPACE:
            raise
        raise UserError(
            ErrorCode.NO_WORKSPACE,
            f"vx init: no package.json at or above {request.cwd} — create one first"
            " (npm init -y), then re-run vx init",
        ) from None
    root = found.root
    root_manifest = _read(root, ".") or {}
    host = detect_host(root, found.manager, root_manifest)
    notes = list(found.notes)
    members, member_notes = _members(root, found.members, found.manager)
    notes.extend(member_notes)
    drafts: dict[str, tuple[_Package, PackageDraft]] = {}
    member_dirs = tuple(p.rel_dir for p in members)
    for package in members:
        scripts = script_table(package.manifest)
        draft = draft_package(
            scripts, host, package.manifest, members=member_dirs, here=package.rel_dir
        )
        drafts[package.rel_dir] = (package, draft)
    single = found.manager is Manager.SINGLE
    if single:
        package = _Package(".", _name(root_manifest), root_manifest)
        draft = draft_package(script_table(root_manifest), host, root_manifest)
        drafts["."] = (package, draft)
    else:
        carried = frozenset(t.name for _, d in drafts.values() for t in d.tasks)
        root_draft, left_out = _root_draft(root_manifest, host, member_dirs, carried)
        notes.extend(_root_notes(left_out, host))
        if root_draft.tasks:
            drafts["."] = (_Package(".", _name(root_manifest), root_manifest), root_draft)
    notes.extend(_package_notes(drafts, host))
    return _files(request, root, drafts, notes, single=single)


def _name(manifest: Mapping[str, object]) -> str | None:
    name = manifest.get("name")
    return name if isinstance(name, str) and name else None


def _members(
    root: Path, dirs: tuple[str, ...], manager: Manager
) -> tuple[list[_Package], list[str]]:
    """The named members with a package.json, and notes for nameless and duplicate ones."""
    notes: list[str] = []
    if manager is Manager.UV:
        return [], notes
    packages: list[_Package] = []
    by_name: dict[str, list[str]] = {}
    for rel in dirs:
        manifest = _read(root, rel)
        if manifest is None:
            continue
        name = _name(manifest)
        if name is None:
            if script_table(manifest):
                notes.append(
                    f'{_join(rel, PACKAGE_JSON)} has no "name", so it is no project and its'
                    " scripts were not mapped: give it a name and re-run vx init"
                )
            continue
        by_name.setdefault(name, []).append(rel)
        packages.append(_Package(rel, name, manifest))
    for name, rels in by_name.items():
        if len(rels) > 1:
            notes.append(
                f'{" and ".join(rels)} share the name "{name}": a run refuses the workspace'
                " until each package has its own name"
            )
    return packages, notes


def _root_draft(
    manifest: Mapping[str, object],
    host: ScriptHost,
    members: tuple[str, ...],
    carried: frozenset[str],
) -> tuple[PackageDraft, list[tuple[str, str]]]:
    """The root's own tasks among several packages, and the scripts left out with why."""
    scripts = script_table(manifest)
    out: dict[str, str] = {}
    for name, command in scripts.items():
        if name in LIFECYCLE:
            continue
        line = sw.read_line(command)
        if any(sw.workspace_part(w, members, ".") for w in line.segments):
            out[name] = "runs the workspace's members"
    changed = True
    while changed:  # a script that runs a left-out script by name runs the members too
        changed = False
        for name, command in scripts.items():
            if name in out or name in LIFECYCLE:
                continue
            runs = {
                s
                for w in sw.read_line(command).segments
                for s in sw.scripts_run(w, frozenset(scripts))
            }
            if runs & set(out):
                out[name] = "runs the workspace's members"
                changed = True
    for name in scripts:
        if name not in out and name in carried and name not in LIFECYCLE:
            out[name] = "a member's task has this name, so vx run --all would run it twice"
    kept = {k: v for k, v in scripts.items() if k not in out}
    from vx.workspace.init_tasks import hook_targets

    hooks = hook_targets(scripts, host)
    for hook, target in hooks.items():  # a hook goes where its script goes
        if target in out:
            kept.pop(hook, None)
    draft = draft_package(kept, host, manifest, members=members, here=".")
    return draft, sorted(out.items(), key=lambda kv: list(scripts).index(kv[0]))


def _root_notes(left_out: list[tuple[str, str]], host: ScriptHost) -> list[str]:
    if not left_out:
        return []
    by_reason: dict[str, list[str]] = {}
    for name, reason in left_out:
        by_reason.setdefault(reason, []).append(name)
    example = {
        "npm": "npm run build --workspaces",
        "pnpm": "pnpm -r build",
        "bun": "bun run --filter '*' build",
    }.get(
        host.name,
        "yarn workspaces foreach -A run build" if host.berry else "yarn workspaces run build",
    )
    notes = [
        f"root scripts left out ({reason}): {', '.join(names)}"
        for reason, names in by_reason.items()
    ]
    notes.append(f"vx run build --all replaces what the root ran as {example}")
    return notes


def _package_notes(
    drafts: Mapping[str, tuple[_Package, PackageDraft]], host: ScriptHost
) -> list[str]:
    notes: list[str] = []
    empty = sorted(
        p.name or p.rel_dir for p, d in drafts.values() if not d.tasks and p.rel_dir != "."
    )
    if empty:
        notes.append(
            f"no script to run, so no config: {_listing(empty)} (still projects; a task"
            " declared in their own vx.config runs)"
        )
    for package, draft in drafts.values():
        if draft.builder_hook:
            notes.append(
                f"{package.name} has no build script but its {draft.builder_hook} builds:"
                f' add "build" running it to package.json and re-run vx init'
            )
        who = package.name or "(root)"
        notes.extend(f"{who}: script {s.script!r} left out: {s.reason}" for s in draft.skipped)
    if host.pnp:
        notes.append(
            "Yarn Plug'n'Play: bins live in .pnp.cjs, where vx's PATH finds none, so every task"
            " runs its script through `yarn run`; set nodeLinker: node-modules in .yarnrc.yml"
            " to run the commands directly"
        )
    return notes


def _listing(names: list[str]) -> str:
    head = ", ".join(names[:LISTED])
    return head if len(names) <= LISTED else f"{head} and {len(names) - LISTED} more"


def _files(
    request: InitRequest,
    root: Path,
    drafts: Mapping[str, tuple[_Package, PackageDraft]],
    notes: list[str],
    *,
    single: bool,
) -> InitPlan:
    """Drafts → files, honouring existing configs: kept, or replaced under --force."""
    files: list[PlannedFile] = []
    kept: list[str] = []
    replaced: list[str] = []
    todos: dict[str, list[str]] = {}
    mapped = 0
    suffix = f".{request.format.value}"
    for rel_dir in sorted(drafts, key=lambda rel: _join(rel, PROJECT_STEM)):
        package, draft = drafts[rel_dir]
        if not draft.tasks:
            continue
        present = existing_configs(root / rel_dir, PROJECT_STEM)
        is_root_config = rel_dir == "." and not single
        if present and (not request.force or is_root_config):
            kept.extend(_join(rel_dir, p) for p in present)
            continue
        replaced.extend(_join(rel_dir, p) for p in present)
        tasks = _for_format(draft.tasks, request.format)
        text = render_project(tasks, request.format, manifest_name=PACKAGE_JSON)
        files.append(PlannedFile(_join(rel_dir, PROJECT_STEM + suffix), text))
        mapped += len(tasks)
        label = package.name or "//"
        for task in tasks:
            for todo in task.todos:
                todos.setdefault(todo.reason, []).append(
                    f"{label if rel_dir != '.' or single else '//'}#{task.name}"
                )
    ws_present = existing_configs(root, WORKSPACE_STEM)
    if ws_present:
        kept.extend(ws_present)
    else:
        files.append(PlannedFile(WORKSPACE_STEM + suffix, render_workspace(request.format)))
    task_names = [t.name for _, d in drafts.values() for t in d.tasks]
    if mapped and CACHE_REASON in todos:
        notes.append("no task caches yet: a cache block from a TODO makes the second run a hit")
    if not task_names:
        notes.append("no package.json scripts became tasks; a config declares one like this:")
        notes.append(f"  {EXAMPLE_PATH}: {EXAMPLE_CONFIG}")
    plan_todos = tuple(TodoGroup(r, tuple(t)) for r, t in todos.items())
    return InitPlan(
        root=root,
        files=tuple(files),
        kept=tuple(kept),
        replaced=tuple(replaced),
        todos=plan_todos,
        notes=tuple(notes),
        next=_next(request, root, drafts, single=single),
        mapped=mapped,
    )


def _for_format(tasks: tuple[TaskDraft, ...], fmt: ConfigFormat) -> tuple[TaskDraft, ...]:
    """A `.py` config reads name and version from package.json live: no copy to keep up."""
    if fmt is not ConfigFormat.PY:
        return tasks
    return tuple(
        t._replace(todos=tuple(x for x in t.todos if x.reason != COPY_REASON)) for t in tasks
    )


def _next(
    request: InitRequest,
    root: Path,
    drafts: Mapping[str, tuple[_Package, PackageDraft]],
    *,
    single: bool,
) -> str:
    """The one command to type next: run `build`, else a task that neither serves nor changes
    the repo, else the first; spelled with the runner that started vx when vx is installed."""
    tasks = [t for _, d in drafts.values() for t in d.tasks]
    names = [t.name for t in tasks]
    if BUILD in names:
        task = BUILD
    else:
        quiet = [t.name for t in tasks if not t.persistent and t.name not in _CHANGES]
        task = quiet[0] if quiet else (names[0] if names else "")
    agent = request.env.get("npm_config_user_agent", "").split("/", 1)[0]
    runner = _RUNNERS.get(agent)
    installed = (root / "node_modules" / ".bin" / "vx").exists()
    vx = f"{runner} vx" if runner and installed else "vx"
    steps = [] if _in_git(root) else ["git init"]
    if not task:
        steps.append(f"declare a task in a {PROJECT_STEM}.{request.format.value}")
        steps.append(f"{vx} run <task>{'' if single else ' --all'}")
    else:
        steps.append(f"{vx} run {task}{'' if single else ' --all'}")
    return " && ".join(steps)


def apply_plan(plan: InitPlan) -> None:
    """Write the plan's files (each atomically) and remove the configs it replaces."""
    from vx.util.atomic import write_atomic

    written = {f.path for f in plan.files}
    for rel in plan.replaced:
        if rel not in written:
            try:
                (plan.root / rel).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise ConfigError(rel, f"cannot be replaced: {exc.strerror or exc}") from None
    for planned in plan.files:
        path = plan.root / planned.path
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, planned.text)
