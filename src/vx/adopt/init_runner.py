"""`vx init` in a Turbo or Nx repo: keep its config read live (`--keep`), or write native
vx.config.json files from it (`--native`, the default there), as one `vx init` plan."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING

from vx.adopt.init_plan import InitPlan, PlannedFile
from vx.errors import ErrorCode, UserError
from vx.foreign.driver import NX, TURBO
from vx.foreign.turbo_json import find_turbo
from vx.workspace.config_load import WORKSPACE_STEM, find_config, read_config

if TYPE_CHECKING:
    from pathlib import Path


_SET_UP = "vx is already set up here: every package has a vx.config (--force regenerates them)"


class RunnerMode(StrEnum):
    """What `vx init` does with a turbo.json / nx.json."""

    KEEP = "keep"  # vx.workspace.json says tasksFrom; the runner's config stays the truth
    NATIVE = "native"  # vx.config.json per package, as `vx migrate` writes them


def runner_config(root: Path) -> str | None:
    """`turbo` or `nx` when the root holds that runner's config (turbo.json wins over nx.json,
    as a repo with both runs turbo); None when it holds neither."""
    if find_turbo(root) is not None:
        return TURBO
    if (root / "nx.json").is_file():
        return NX
    return None


def adoption_advice(root: Path) -> str:
    """What a repo with no vx config runs to adopt vx: `vx init`, and beside turbo.json or
    nx.json `vx init --keep` too, which keeps that file the truth."""
    kind = runner_config(root)
    if kind is None:
        return "run `vx init` to write a vx.config per package from its package.json scripts"
    return (
        f"run `vx init --keep` to read {_file(kind)} live on every run, or `vx init` to write"
        " vx.config files from it"
    )


def _file(kind: str) -> str:
    return "turbo.json" if kind == TURBO else "nx.json"


def plan_runner_init(root: Path, kind: str, mode: RunnerMode, *, force: bool) -> InitPlan:
    """The files `vx init --keep` / `--native` writes in a repo whose tasks `kind` describes."""
    if mode is RunnerMode.KEEP:
        return _keep(root, kind, force=force)
    return _native(root, kind, force=force)


def _keep(root: Path, kind: str, *, force: bool) -> InitPlan:
    """A vx.workspace.json declaring `tasksFrom`, and nothing else: no task is copied."""
    files: list[PlannedFile] = []
    kept: list[str] = []
    replaced: list[str] = []
    notes: list[str] = []
    existing = find_config(root, WORKSPACE_STEM, root=root)
    name = f"{WORKSPACE_STEM}.json"
    declares = f'"tasksFrom": "{kind}"'
    if existing is None:
        files.append(PlannedFile(name, json.dumps({"tasksFrom": kind}, indent=2) + "\n"))
    else:
        raw = read_config(existing, existing.name, "workspace")
        current = raw.get("tasksFrom") if isinstance(raw, dict) else None
        if current == kind:
            notes.append(f"{existing.name} already reads {_file(kind)} live")
        elif force and existing.suffix == ".json" and isinstance(raw, dict):
            merged = {**raw, "tasksFrom": kind}
            files.append(PlannedFile(name, json.dumps(merged, indent=2) + "\n"))
            replaced.append(existing.name)
        else:
            kept.append(existing.name)
            how = "" if existing.suffix == ".json" else " (vx rewrites only a .json one)"
            notes.append(f"add {declares} to {existing.name} to read {_file(kind)} live{how}")
    notes.append(
        f"every package without a vx.config runs the tasks {_file(kind)} describes, read on"
        " each run; vx init --native writes them out when you want to drop it"
    )
    return InitPlan(
        root=root,
        files=tuple(files),
        kept=tuple(kept),
        replaced=tuple(replaced),
        todos=(),
        notes=tuple(notes),
        next="vx run build --all",
        mapped=0,
    )


def _native(root: Path, kind: str, *, force: bool) -> InitPlan:
    """A vx.config.json per package with the tasks the runner's config gives it."""
    from vx.adopt.migrate import plan_migration

    migration = plan_migration(root, kind, force=force)
    mapped = sum(
        len(json.loads(text).get("tasks", {}))
        for path, text in migration.files.items()
        if path.rpartition("/")[2].startswith("vx.config.")
    )
    configs = sum(1 for p in migration.files if p.rpartition("/")[2].startswith("vx.config."))
    tasks = "task" if mapped == 1 else "tasks"
    notes = [f"{mapped} {tasks} from {_file(kind)} in {configs} vx.config.json files"]
    notes += migration.warnings
    if migration.workspace_note:
        notes.append(migration.workspace_note)
    if not migration.files and migration.kept:
        return InitPlan(
            root=root,
            files=(),
            kept=migration.kept,
            replaced=(),
            todos=(),
            notes=(_SET_UP,),
            next="vx run build --all",
            mapped=0,
        )
    if not migration.files:
        raise UserError(
            ErrorCode.CONFIG,
            f"vx init: {_file(kind)} gives no package a task vx can run"
            " — declare tasks in it, or pass --keep to read it as it is",
        )
    notes.append(f"{_file(kind)} is no longer read; delete it when you are ready")
    task = migration.first_task
    return InitPlan(
        root=root,
        files=tuple(PlannedFile(p, t) for p, t in migration.files.items()),
        kept=migration.kept,
        replaced=migration.remove,
        todos=(),
        notes=tuple(notes),
        next=f"vx run {task} --all" if task else "vx show",
        mapped=0,  # the report's count says "from package.json scripts"; the note says whence
    )
