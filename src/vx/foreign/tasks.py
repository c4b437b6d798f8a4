"""Pieces the turbo.json and nx.json readers share: a script's command, and dangling edges."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.workspace.manifests import load_json_object
from vx.workspace.script_host import ScriptHost, detect_host

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.foreign.driver import Warnings
    from vx.workspace.model import Manager

BUILD = "build"  # a project with a config but no `build` gets vx's default one (graph.build)
ROOT = "//"


def script_host(root: Path, manager: Manager) -> ScriptHost:
    """The manager that runs the scripts, decided as `vx init` decides it.

    `packageManager` first, then the workspace's lockfile: a `.yarnrc.yml` left behind in a
    pnpm workspace must not turn every script into `yarn run`.
    """
    path = root / "package.json"
    manifest = load_json_object(path, "package.json") if path.is_file() else {}
    return detect_host(root, manager, manifest)


def script_command(name: str, scripts: Mapping[str, str], host: ScriptHost) -> str:
    """What runs the package.json script `name`: its body, as Turbo and Nx would run it.

    Inlined it saves a package-manager process per task. Where only the manager gives the
    script what it expects — `pre`/`post` hooks run around it, `$npm_*` variables, Yarn 2+'s
    own shell and Plug'n'Play bins — the script runs through `<manager> run <name>` instead.
    """
    body = scripts[name]
    if host.berry:
        return f"yarn run {name}"
    hooked = f"pre{name}" in scripts or f"post{name}" in scripts
    if hooked or "npm_" in body:
        return f"{host.name} run {name}"
    return body


def _exists(
    ref: str,
    project: str,
    tasks: Mapping[str, Mapping[str, Any]],
    others: Mapping[str, frozenset[str]],
) -> bool | None:
    """Whether a dependsOn entry reaches a task: None when it names no project at all."""
    if ref.startswith("^"):
        return True
    owner, _, name = ref.rpartition("#")
    owner = owner or project
    if owner in tasks:
        return name in tasks[owner] or (name == BUILD and owner != ROOT)
    if owner in others:
        return name in others[owner] or (name == BUILD and owner != ROOT)
    return None


def prune_dangling(
    tasks: dict[str, dict[str, Any]],
    warnings: Warnings,
    others: Mapping[str, frozenset[str]],
) -> None:
    """Drop dependsOn entries that reach no task, and the groups left standing for nothing.

    Turbo runs a task a package has no script for as a no-op that still orders what it depends
    on, so the readers keep such a task as a group; a group whose every edge reaches nothing
    is dropped in turn, until none is left. `others` holds the projects with a vx.config of
    their own and their task names.
    """
    changed = True
    while changed:
        changed = False
        for project, table in tasks.items():
            for name in list(table):
                task = table[name]
                deps = task.get("dependsOn")
                if not deps:
                    continue
                kept = []
                for ref in deps:
                    found = _exists(ref, project, tasks, others)
                    if found is None:
                        owner = ref.rpartition("#")[0]
                        warnings.line(
                            f"{project}#{name}: dependsOn {ref!r} names no project"
                            f" ({owner!r}): the edge is dropped"
                        )
                    if found:
                        kept.append(ref)
                if len(kept) == len(deps):
                    continue
                changed = True
                if kept:
                    task["dependsOn"] = kept
                elif "exec" in task:
                    del task["dependsOn"]
                else:
                    del table[name]
