"""`vx migrate`'s plan: native vx.config.json files written from what turbo.json / nx.json say.

The configs are the very dicts the live readers hand the validator, so a repo migrated here
resolves to the same tasks, edges and outputs it had while vx read turbo.json live.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.foreign.driver import NX, TURBO
from vx.foreign.turbo_json import find_turbo
from vx.ids import ROOT
from vx.workspace.config_load import PROJECT_STEM, WORKSPACE_STEM, find_config

if TYPE_CHECKING:
    from pathlib import Path

    from vx.workspace.model import Workspace

SOURCES = (TURBO, NX)


@dataclass(frozen=True, slots=True)
class Migration:
    """What `vx migrate` would write: root-relative path → whole text, and what it leaves.

    `remove` holds configs of another spelling that `--force` replaces; `kept` the configs
    left as they are; `workspace_note` says what to change by hand in a workspace file vx
    does not rewrite (a `.toml` or `.py` one that still says `tasksFrom`).
    """

    root: Path
    source: str
    files: dict[str, str] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    workspace_note: str | None = None
    first_task: str | None = None


def pick_source(ws: Workspace, given: str | None) -> str:
    """Which runner's config to migrate: `--from`, else the workspace's `tasksFrom`, else the
    one of turbo.json and nx.json the root holds."""
    if given:
        return given
    if ws.config.tasks_from:
        return ws.config.tasks_from
    turbo = find_turbo(ws.root) is not None
    nx = (ws.root / "nx.json").is_file()
    if turbo and nx:
        raise UserError(
            ErrorCode.USAGE,
            "vx migrate: the root holds both turbo.json and nx.json — say which: --from turbo"
            " or --from nx",
        )
    if not turbo and not nx:
        raise UserError(
            ErrorCode.USAGE,
            f"vx migrate: {ws.root} holds no turbo.json or nx.json to migrate"
            " — vx init writes configs from package.json scripts",
        )
    return TURBO if turbo else NX


def plan_migration(cwd: Path, given: str | None, *, force: bool) -> Migration:
    """Read the runner's config as a live run would, and lay out the files it becomes."""

    from vx.loader.assemble import load_workspace, read_live_projects

    ws = load_workspace(cwd, live=False)
    source = pick_source(ws, given)
    projects = list(ws.projects)
    kept = [p.config.path for p in projects if p.config is not None and not force]
    if force:
        projects = [p._replace(config=None) for p in projects]
    read = read_live_projects(source, ws.root, ws.manager, projects)
    files: dict[str, str] = {}
    remove: list[str] = []
    rel_dirs = {p.name: p.rel_dir for p in projects} | {ROOT: "."}
    first: str | None = None
    for name in sorted(read.projects):
        rel = rel_dirs[name]
        path = f"{PROJECT_STEM}.json" if rel == "." else f"{rel}/{PROJECT_STEM}.json"
        files[path] = json.dumps(read.projects[name].raw, indent=2, ensure_ascii=False) + "\n"
        existing = find_config(ws.root / rel, PROJECT_STEM, root=ws.root)
        if existing is not None and existing.suffix != ".json":
            remove.append(existing.relative_to(ws.root).as_posix())
        tasks = read.projects[name].raw["tasks"]
        if first is None or "build" in tasks:
            first = "build" if "build" in tasks else first or next(iter(tasks), None)
    note = _workspace_file(ws, files)
    return Migration(
        root=ws.root,
        source=source,
        files=files,
        remove=tuple(remove),
        kept=tuple(kept),
        warnings=tuple(read.warnings),
        workspace_note=note,
        first_task=first,
    )


def _workspace_file(ws: Workspace, files: dict[str, str]) -> str | None:
    """Drop `tasksFrom` from a vx.workspace.json (the configs now say it all); a note for a
    .toml or .py one, which vx does not rewrite."""
    path = find_config(ws.root, WORKSPACE_STEM, root=ws.root)
    if path is None or ws.config.tasks_from is None:
        return None
    if path.suffix != ".json":
        return f"remove tasksFrom from {path.name}: the vx.config files now declare every task"
    from vx.workspace.config_load import read_config

    raw = read_config(path, path.name, "workspace")
    assert isinstance(raw, dict)  # noqa: S101 - it loaded as a workspace config just now
    kept = {k: v for k, v in raw.items() if k != "tasksFrom"}
    files[path.name] = json.dumps(kept, indent=2, ensure_ascii=False) + "\n"
    return None


def apply_migration(plan: Migration) -> None:
    """Write every file (whole, atomically) and drop the configs of another spelling."""
    from vx.util.atomic import write_atomic

    for rel, text in plan.files.items():
        write_atomic(plan.root / rel, text.encode("utf-8"))
    for rel in plan.remove:
        (plan.root / rel).unlink(missing_ok=True)


__all__ = ["SOURCES", "Migration", "apply_migration", "pick_source", "plan_migration"]
