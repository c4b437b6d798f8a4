"""Tasks read live from turbo.json or nx.json: the driver both readers share.

A workspace whose `vx.workspace.*` says `"tasksFrom": "turbo"` (or `"nx"`) gives every package
without a `vx.config.*` the tasks its runner's config describes. The readers turn those configs
into the same raw project-config dicts a `vx.config.json` holds, so one validator, one model,
one key and one graph serve both; `vx migrate` writes the very same dicts to disk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.errors import ConfigError
from vx.foreign.outputs import settle_outputs
from vx.foreign.tasks import prune_dangling
from vx.util.record import Record
from vx.workspace.config_load import read_config
from vx.workspace.config_schema import parse_project_config
from vx.workspace.manifests import load_json_object

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.workspace.model import Manager, ProjectConfig

TURBO = "turbo"
NX = "nx"


class LiveProject(Record):
    """What a reader needs of one project: its name, where it is, its package.json scripts."""

    name: str
    rel_dir: str
    scripts: Mapping[str, str]
    is_root: bool


class LiveTasks(Record):
    """One project's raw config as a reader made it, and the files it was read from."""

    raw: dict[str, Any]
    path: (
        str  # the file messages name: the package's own turbo.json / project.json, else the root's
    )
    files: tuple[str, ...]  # root-relative files the tasks came from


class LiveRead(Record):
    """What a reader returns: per project name, its tasks; and one line per thing not honoured."""

    projects: dict[str, LiveTasks]
    warnings: list[str]
    label: str  # "turbo.json" or "nx.json", for `vx show`


class Warnings:
    """Collects what a live config holds that vx cannot honour: one line per field, naming
    every place it appears (the first few), so a repo with 40 packages reads one warning."""

    def __init__(self) -> None:
        self._by_field: dict[str, tuple[str, list[str]]] = {}
        self.lines: list[str] = []

    def field(self, file: str, name: str, where: str, advice: str) -> None:
        """`name` (a field, or a value of one) in `file` at `where` is not honoured."""
        key = f"{file}\0{name}"
        found = self._by_field.get(key)
        if found is None:
            self._by_field[key] = (advice, [where] if where else [])
        elif where and where not in found[1]:
            found[1].append(where)

    def line(self, text: str) -> None:
        """A warning of its own (a task left uncached, an edge dropped)."""
        if text not in self.lines:
            self.lines.append(text)

    def render(self) -> list[str]:
        """Every warning, fields first, in the order they were met."""
        out = []
        for key, (advice, wheres) in self._by_field.items():
            file, name = key.split("\0")
            shown = ", ".join(wheres[:3]) + (
                f" and {len(wheres) - 3} more" if len(wheres) > 3 else ""
            )
            at = f" (at {shown})" if shown else ""
            out.append(f"{file}: {name}{at} is not honoured by vx — {advice}")
        return out + self.lines


def read_scripts(root: Path, rel_dir: str) -> dict[str, str]:
    """The `scripts` of the package.json in `rel_dir`, string values only."""
    path = root / rel_dir / "package.json"
    if not path.is_file():
        return {}
    shown = "package.json" if rel_dir == "." else f"{rel_dir}/package.json"
    raw = load_json_object(path, shown)
    scripts = raw.get("scripts")
    if not isinstance(scripts, dict):
        return {}
    return {k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)}


def read_live(
    kind: str,
    root: Path,
    projects: Sequence[LiveProject],
    manager: Manager,
    others: Mapping[str, frozenset[str]],
) -> LiveRead:
    """The raw task configs `kind`'s files give `projects`, safe for vx to clean and restore."""
    if kind == TURBO:
        from vx.foreign.turbo_json import read_turbo

        found = read_turbo(root, projects, manager)
    else:
        from vx.foreign.nx_json import read_nx

        found = read_nx(root, projects, manager)
    warnings = Warnings()
    for text in found.warnings:
        warnings.line(text)
    tasks = {name: live.raw.setdefault("tasks", {}) for name, live in found.projects.items()}
    prune_dangling(tasks, warnings, others)
    rel_dirs = {p.name: p.rel_dir for p in projects}
    settle_outputs(root, tasks, rel_dirs, warnings)
    kept = {name: live for name, live in found.projects.items() if live.raw["tasks"]}
    return LiveRead(kept, warnings.render(), found.label)


def read_jsonc(path: Path, shown: str) -> dict[str, Any]:
    """A turbo.json, nx.json or project.json: JSON with comments, an object at the top."""
    raw = read_config(path, shown, "project")
    if not isinstance(raw, dict):
        raise ConfigError(shown, "expected a JSON object at the top level")
    return raw


def live_config(live: LiveTasks, label: str) -> ProjectConfig:
    """A reader's raw config validated as a `vx.config.json` would be, marked as read live."""
    config = parse_project_config(live.raw, live.path)
    return config._replace(imports=live.files, live=label)
