"""`vx init`'s plan: which files to write from package.json scripts, which to keep, and what to
tell the user. Nothing is written here; `apply_plan` writes a plan once it is decided.

`plan_init` is the one place that decides what to write: it reads the repo, drafts each
package's tasks (init_tasks.py), and turns the drafts into files (init_render.py). A
different source of tasks is a different draft step feeding the same `_files` step.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.adopt.init_cycles import CYCLE_REASON, cycle_builds
from vx.adopt.init_observed import Observation, with_observed
from vx.adopt.init_render import render_project, render_workspace
from vx.adopt.init_root import draft_root, root_notes, unreached
from vx.adopt.init_tasks import (
    BUILD,
    COPY_REASON,
    PackageDraft,
    TaskDraft,
    Todo,
    draft_package,
    script_table,
)
from vx.adopt.init_uv import uv_tasks
from vx.errors import ConfigError, ErrorCode, UserError
from vx.util.fuzzy import listing
from vx.util.record import Record
from vx.workspace.config_load import PROJECT_STEM, SUFFIXES, WORKSPACE_STEM
from vx.workspace.discover import find_root
from vx.workspace.manifests import PACKAGE_JSON, load_json_object
from vx.workspace.model import Manager
from vx.workspace.script_host import ScriptHost, detect_host

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

# Tasks `next:` never suggests first, and `--observe` never runs: they change the repo or world.
CHANGES = frozenset(
    {"clean", "release", "publish", "deploy", "version", "format", "fix", "lint:fix",
     "format:fix", "changeset", "bump", "upgrade", "reset"}
)  # fmt: skip
_RUNNERS = {"npm": "npx", "pnpm": "pnpm", "yarn": "yarn", "bun": "bunx"}
LISTED = 5
CACHING = (
    "cache: tasks without a cache block always run; vx init --observe traces each once and"
    " writes the block it saw (or: vx run --audit, then vx audit --apply)"
)
EXAMPLE_PATH = f"packages/<name>/{PROJECT_STEM}.json"
EXAMPLE_CONFIG = '{"tasks": {"build": {"dependsOn": ["^build"], "exec": "tsc -b"}}}'


class ConfigFormat(StrEnum):
    """The spelling `vx init` writes configs in."""

    JSON = "json"
    TOML = "toml"
    PY = "py"


class InitRequest(Record):
    """What the user asked `vx init` for. `env` is read for `npm_config_user_agent` only.

    `observed` holds `--observe`'s findings by (package dir, task name), and `rewrite` the
    files the first pass wrote, which the second pass writes again with those findings in."""

    cwd: Path
    format: ConfigFormat = ConfigFormat.JSON
    force: bool = False
    env: Mapping[str, str] = MappingProxyType({})
    observed: Mapping[tuple[str, str], Observation] = MappingProxyType({})
    rewrite: frozenset[str] = frozenset()


class PlannedFile(Record):
    """A file to write: root-relative POSIX path and its whole text."""

    path: str
    text: str


class TodoGroup(Record):
    """One reason to revisit a generated config, and the tasks (`pkg#task`) it applies to."""

    reason: str
    tasks: tuple[str, ...]


class InitPlan(Record):
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


class PackageInfo(Record):
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


class RepoScan(Record):
    """What `vx init` read before deciding anything: the root and its package.json, the
    workspace's manager and the one running scripts, the named members, notes so far."""

    root: Path
    manager: Manager
    root_manifest: dict[str, object]
    host: ScriptHost
    members: tuple[PackageInfo, ...]
    notes: tuple[str, ...]
    member_dirs: tuple[str, ...] = ()  # every member directory, named or not

    @property
    def single(self) -> bool:
        """The root is the one package (no workspace list)."""
        return self.manager is Manager.SINGLE


def scan_repo(cwd: Path) -> RepoScan:
    """Find the workspace holding `cwd` and read its manifests; no package.json is refused."""
    try:
        found = find_root(cwd)
    except UserError as e:
        if e.code is not ErrorCode.NO_WORKSPACE:
            raise
        raise UserError(
            ErrorCode.NO_WORKSPACE,
            f"vx init: no package.json at or above {cwd} — create one first"
            " (npm init -y), then re-run vx init",
        ) from None
    root = found.root
    root_manifest = _read(root, ".") or {}
    members, member_notes = _members(root, found.members, found.manager)
    return RepoScan(
        root=root,
        manager=found.manager,
        root_manifest=root_manifest,
        host=detect_host(root, found.manager, root_manifest),
        members=tuple(members),
        notes=(*found.notes, *member_notes),
        member_dirs=found.members,
    )


def plan_init(request: InitRequest) -> InitPlan:
    """Read the repo at `request.cwd` and decide every file `vx init` writes.

    This is where the source of the tasks is chosen: today every package's tasks come from
    its package.json scripts (`draft_scripts`). Another source yields drafts of the same
    shape, and `_files` turns any drafts into files, keeping or replacing existing configs.
    """
    scan = scan_repo(request.cwd)
    if scan.manager is Manager.UV:
        shared, notes = uv_tasks(scan.root, scan.member_dirs)
        return _files(request, scan.root, {}, [*scan.notes, *notes], single=False, shared=shared)
    drafts, notes = draft_scripts(scan)
    return _files(request, scan.root, drafts, notes, single=scan.single)


Drafts = dict[str, tuple[PackageInfo, PackageDraft]]


def draft_scripts(scan: RepoScan) -> tuple[Drafts, list[str]]:
    """Each package's tasks from its scripts (by root-relative dir), and the notes to print."""
    host = scan.host
    notes = list(scan.notes)
    drafts: Drafts = {}
    member_dirs = tuple(p.rel_dir for p in scan.members)
    for package in scan.members:
        scripts = script_table(package.manifest)
        draft = draft_package(
            scripts, host, package.manifest, members=member_dirs, here=package.rel_dir
        )
        drafts[package.rel_dir] = (package, draft)
    by_name = {p.name: p.rel_dir for p in scan.members if p.name is not None}
    if len(by_name) == len(scan.members):  # duplicate names: the run refuses them first
        for name, builds in cycle_builds(scan.root, by_name, scan.manager).items():
            package, draft = drafts[by_name[name]]
            drafts[by_name[name]] = (package, _without_up_build(draft, builds))
    manifest = scan.root_manifest
    if scan.single:
        notes.extend(unreached(scan.root))
        package = PackageInfo(".", _name(manifest), manifest)
        drafts["."] = (package, draft_package(script_table(manifest), host, manifest))
    else:
        carried: dict[str, tuple[str, ...]] = {}
        for package, draft in drafts.values():
            for task in draft.tasks:
                owner = () if package.name is None else (f"{package.name}#{task.name}",)
                carried[task.name] = (*carried.get(task.name, ()), *owner)
        root_draft, left_out, beside = draft_root(manifest, host, member_dirs, carried)
        notes.extend(root_notes(left_out, manifest, beside))
        if root_draft.tasks:
            drafts["."] = (PackageInfo(".", _name(manifest), manifest), root_draft)
    notes.extend(_package_notes(drafts, host))
    return drafts, notes


def _without_up_build(draft: PackageDraft, builds: tuple[str, ...]) -> PackageDraft:
    """The draft with `^build` replaced by explicit edges, and a TODO saying why."""
    tasks = []
    for task in draft.tasks:
        if f"^{BUILD}" in task.depends_on:
            deps = [d for d in task.depends_on if d != f"^{BUILD}"]
            task = task._replace(  # noqa: PLW2901 - the same task, rewritten
                depends_on=(*builds, *deps), todos=(*task.todos, Todo(CYCLE_REASON))
            )
        tasks.append(task)
    return draft._replace(tasks=tuple(tasks))


def _name(manifest: Mapping[str, object]) -> str | None:
    name = manifest.get("name")
    return name if isinstance(name, str) and name else None


def _members(
    root: Path, dirs: tuple[str, ...], manager: Manager
) -> tuple[list[PackageInfo], list[str]]:
    """The named members with a package.json, and notes for nameless and duplicate ones."""
    notes: list[str] = []
    if manager is Manager.UV:
        return [], notes
    packages: list[PackageInfo] = []
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
        packages.append(PackageInfo(rel, name, manifest))
    for name, rels in by_name.items():
        if len(rels) > 1:
            notes.append(
                f'{" and ".join(rels)} share the name "{name}": a run refuses the workspace'
                " until each package has its own name"
            )
    return packages, notes


def _package_notes(
    drafts: Mapping[str, tuple[PackageInfo, PackageDraft]], host: ScriptHost
) -> list[str]:
    notes: list[str] = []
    empty = sorted(
        p.name or p.rel_dir for p, d in drafts.values() if not d.tasks and p.rel_dir != "."
    )
    if empty:
        notes.append(
            f"no script to run, so no config: {listing(empty, LISTED)} (still projects; a task"
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


def _files(
    request: InitRequest,
    root: Path,
    drafts: Mapping[str, tuple[PackageInfo, PackageDraft]],
    notes: list[str],
    *,
    single: bool,
    shared: tuple[TaskDraft, ...] = (),
) -> InitPlan:
    """Drafts → files, honouring existing configs: kept, or replaced under --force. `shared`
    are tasks for every package, which go into the workspace file."""
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
        present = _present(root / rel_dir, PROJECT_STEM, rel_dir, request.rewrite)
        is_root_config = rel_dir == "." and not single
        if present and (not request.force or is_root_config):
            kept.extend(_join(rel_dir, p) for p in present)
            continue
        replaced.extend(_join(rel_dir, p) for p in present)
        tasks = with_observed(_for_format(draft.tasks, request.format), rel_dir, request.observed)
        text = render_project(tasks, request.format, manifest_name=PACKAGE_JSON)
        files.append(PlannedFile(_join(rel_dir, PROJECT_STEM + suffix), text))
        mapped += len(tasks)
        label = package.name or "//"
        for task in tasks:
            for todo in task.todos:
                todos.setdefault(todo.reason, []).append(
                    f"{label if rel_dir != '.' or single else '//'}#{task.name}"
                )
    if not files and kept and not request.force:
        notes.append("vx is already set up here: every package with scripts has a config")
    ws_present = _present(root, WORKSPACE_STEM, ".", request.rewrite)
    if ws_present:
        kept.extend(ws_present)
        if shared:
            notes.append(f"{ws_present[0]} is kept, so add the tasks every package shares to it:")
            notes.append(f"  {render_workspace('json', shared)}".rstrip().replace("\n", "\n  "))
    else:
        text = render_workspace(request.format, shared)
        files.append(PlannedFile(WORKSPACE_STEM + suffix, text))
    if shared and not ws_present:
        names = ", ".join(t.name for t in shared)
        notes.append(f"{names}: declared once in {WORKSPACE_STEM + suffix}, for every package")
    task_names = [t.name for _, d in drafts.values() for t in d.tasks]
    if not task_names and not shared:
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
        next=_next(request, root, drafts, single=single, shared=shared),
        mapped=mapped,
    )


def _present(directory: Path, stem: str, rel_dir: str, rewrite: frozenset[str]) -> tuple[str, ...]:
    """The configs already here, but those this init's first pass wrote (`--observe`)."""
    found = existing_configs(directory, stem)
    return tuple(name for name in found if _join(rel_dir, name) not in rewrite)


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
    drafts: Mapping[str, tuple[PackageInfo, PackageDraft]],
    *,
    single: bool,
    shared: tuple[TaskDraft, ...] = (),
) -> str:
    """The one command to type next: run `build`, else a task that neither serves nor changes
    the repo, else the first; spelled with the runner that started vx when vx is installed."""
    tasks = [*shared, *(t for _, d in drafts.values() for t in d.tasks)]
    names = [t.name for t in tasks]
    if BUILD in names:
        task = BUILD
    else:
        quiet = [t.name for t in tasks if not t.persistent and t.name not in CHANGES]
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
    """Write the plan's files, then remove the configs they replace.

    Every new file is written to a synced temp beside its target before any target changes,
    so a directory that takes no file stops init with the old configs untouched; the temps
    are then renamed in, and only once all of them are in place do replaced configs go. A
    rename that fails takes back the files this call created. An `OSError` is a one-line
    `ConfigError` naming the path.
    """
    from vx.util.atomic import fsync_dir, write_temp

    staged: list[tuple[str, Path, Path]] = []
    created: list[Path] = []
    try:
        for planned in plan.files:
            path = plan.root / planned.path
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                staged.append((planned.path, path, write_temp(path, planned.text)))
            except OSError as exc:
                raise _unwritable(planned.path, exc) from None
        for shown, path, temp in staged:
            existed = path.exists()
            try:
                temp.replace(path)
                fsync_dir(path.parent)
            except OSError as exc:
                for done in created:
                    done.unlink(missing_ok=True)
                raise _unwritable(shown, exc) from None
            if not existed:
                created.append(path)
    finally:
        for _, _, temp in staged:
            temp.unlink(missing_ok=True)
    written = {f.path for f in plan.files}
    for rel in plan.replaced:
        if rel not in written:
            try:
                (plan.root / rel).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise ConfigError(rel, f"cannot be replaced: {exc.strerror or exc}") from None


def _unwritable(shown: str, exc: OSError) -> ConfigError:
    return ConfigError(
        shown, f"cannot be written ({exc.strerror or exc}); the configs it replaces are kept"
    )
