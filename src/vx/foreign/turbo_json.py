"""Reading turbo.json live: the root's and each package's turbo.json as vx task configs.

Turbo's rules, as its docs state them: a task in the root `tasks` applies to every package
(`pkg#task` replaces it for that package, `//#task` is the root's own); a package's turbo.json
`extends` the root's and overrides a task field by field; a package runs the script of the
task's name, and a task it has no script for is a no-op that still orders its `dependsOn`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.errors import ConfigError
from vx.foreign.driver import LiveRead, LiveTasks, Warnings, read_jsonc
from vx.foreign.tasks import ROOT, script_command, script_host
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.foreign.driver import LiveProject
    from vx.workspace.script_host import ScriptHost

TURBO_FILES = ("turbo.json", "turbo.jsonc")
DEFAULT = "$TURBO_DEFAULT$"
ROOT_TOKEN = "$TURBO_ROOT$/"  # noqa: S105 - a path token, no secret
EXTENDS = "$TURBO_EXTENDS$"
TASK_FIELDS = frozenset(
    {
        "dependsOn",
        "inputs",
        "outputs",
        "env",
        "passThroughEnv",
        "cache",
        "persistent",
        "interactive",
        "description",
    }
)
TASK_ADVICE = {
    "outputLogs": "set it per run with --output-logs",
    "interruptible": "vx watch restarts what a change reaches",
    "with": "run the sibling tasks together: vx run a b",
}
GLOBAL_FIELDS = frozenset(
    {"$schema", "tasks", "pipeline", "globalDependencies", "globalEnv", "globalPassThroughEnv"}
)
GLOBAL_ADVICE = {
    "ui": "vx frames each task's output; --output-logs sets how much",
    "daemon": "vx has no daemon",
    "remoteCache": "vx caches locally",
    "envMode": "vx passes only the variables a task declares (strict mode)",
    "cacheDir": "set cacheDir in vx.workspace.json",
    "concurrency": "set concurrency in vx.workspace.json",
}
PACKAGE_FIELDS = frozenset({"$schema", "extends", "tasks", "pipeline"})


def find_turbo(directory: Path) -> Path | None:
    """The directory's turbo.json (or turbo.jsonc)."""
    for name in TURBO_FILES:
        if (directory / name).is_file():
            return directory / name
    return None


def _shown(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}"


def _tasks_table(doc: Mapping[str, Any], shown: str, warnings: Warnings) -> dict[str, Any]:
    key = "tasks" if "tasks" in doc or "pipeline" not in doc else "pipeline"
    if key == "pipeline":
        warnings.field(shown, '"pipeline"', "", 'Turbo 1.x\'s name, read as "tasks"')
    table = doc.get(key, {})
    if not isinstance(table, dict):
        raise ConfigError(shown, "expected an object", key)
    for name, value in table.items():
        if not isinstance(value, dict):
            raise ConfigError(shown, "expected an object", f"{key}.{name}")
        for field in value:
            if field not in TASK_FIELDS:
                advice = TASK_ADVICE.get(field, "vx has no such field")
                warnings.field(shown, f'"{field}"', f"tasks.{name}", advice)
    return table


def _strings(value: object, shown: str, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(shown, "expected a list of strings", pointer)
    return list(value)


class _Root:
    """The root turbo.json: its tasks and the global fields every task reads."""

    def __init__(self, root: Path, warnings: Warnings) -> None:
        path = find_turbo(root)
        if path is None:
            raise ConfigError(
                "turbo.json",
                "is not at the workspace root, and tasksFrom (or vx migrate --from) names"
                " turbo — add it there, or drop tasksFrom",
            )
        self.shown = path.name
        doc = read_jsonc(path, self.shown)
        for name in doc:
            if name not in GLOBAL_FIELDS:
                advice = GLOBAL_ADVICE.get(name, "vx has no such setting")
                warnings.field(self.shown, f'"{name}"', "", advice)
        self.tasks = _tasks_table(doc, self.shown, warnings)
        self.global_deps = [
            g.removeprefix(ROOT_TOKEN)
            for g in _strings(doc.get("globalDependencies", []), self.shown, "globalDependencies")
        ]
        self.global_env = _strings(doc.get("globalEnv", []), self.shown, "globalEnv")
        self.global_pass = _strings(
            doc.get("globalPassThroughEnv", []), self.shown, "globalPassThroughEnv"
        )


def _merge(base: Mapping[str, Any] | None, over: Mapping[str, Any]) -> dict[str, Any]:
    """A package's task over the root's: field by field; `$TURBO_EXTENDS$` in a list keeps
    the root's entries before the package's."""
    merged = dict(base or {})
    for key, value in over.items():
        if isinstance(value, list) and EXTENDS in value:
            inherited = merged.get(key, [])
            merged[key] = [*inherited, *(v for v in value if v != EXTENDS)]
        else:
            merged[key] = value
    return merged


def read_turbo(root: Path, projects: Sequence[LiveProject], manager: Manager) -> LiveRead:
    """Every project's tasks as turbo.json describes them."""
    warnings = Warnings()
    top = _Root(root, warnings)
    out: dict[str, LiveTasks] = {}
    single = manager is Manager.SINGLE  # the root is the one package
    host = script_host(root, manager)
    for project in projects:
        defs: dict[str, tuple[dict[str, Any], str]] = {}
        files = [top.shown]
        for key, value in top.tasks.items():
            owner, _, name = key.rpartition("#")
            applies = (
                (owner == ROOT and project.is_root)
                or owner == project.name
                or (not owner and (not project.is_root or single))
            )
            # pkg#task wins over task, whatever their order in the file
            if applies and (owner or name not in defs):
                defs[name] = (dict(value), f"{top.shown} tasks.{key}")
        own = find_turbo(root / project.rel_dir) if not project.is_root else None
        shown = top.shown
        if own is not None:
            shown = _shown(project.rel_dir, own.name)
            files.append(shown)
            doc = read_jsonc(own, shown)
            for name in doc:
                if name not in PACKAGE_FIELDS:
                    warnings.field(shown, f'"{name}"', "", "vx has no such setting")
            extends = doc.get("extends", [])
            if extends != ["//"]:
                warnings.field(shown, '"extends"', "", 'vx reads packages that extend "//" only')
            for name, value in _tasks_table(doc, shown, warnings).items():
                if "#" in name:
                    raise ConfigError(
                        shown, "a package's turbo.json names its own tasks, without pkg#", name
                    )
                base = defs.get(name, ({}, ""))[0]
                defs[name] = (_merge(base, value), f"{shown} tasks.{name}")
        tasks: dict[str, Any] = {}
        for name, (definition, where) in defs.items():
            task = _task(name, definition, where, project, top, host, warnings)
            if task is not None:
                tasks[name] = task
        out[project.name] = LiveTasks({"tasks": tasks}, shown, tuple(files))
    return LiveRead(out, warnings.render(), "turbo.json")


def _env_names(
    names: Sequence[str], field: str, where: str, shown: str, warnings: Warnings
) -> list[str]:
    kept = []
    for name in names:
        if "*" in name or name.startswith("!"):
            warnings.field(
                shown,
                f'{field} entry "{name}"',
                where,
                "vx reads variables by exact name: list each one",
            )
        else:
            kept.append(name.removeprefix("$"))
    return kept


def _task(
    name: str,
    definition: Mapping[str, Any],
    where: str,
    project: LiveProject,
    top: _Root,
    host: ScriptHost,
    warnings: Warnings,
) -> dict[str, Any] | None:
    """One task's vx config, or None for a no-op with nothing to order."""
    shown, _, where = where.partition(" ")
    depends = _strings(definition.get("dependsOn", []), shown, f"{where} dependsOn")
    for d in depends:
        if d.startswith("$") and d != EXTENDS:
            warnings.field(shown, f'dependsOn entry "{d}"', where, 'list the variable under "env"')
    depends = [d for d in depends if not d.startswith("$")]
    if name not in project.scripts:
        return {"dependsOn": depends} if depends else None
    task: dict[str, Any] = {}
    if "description" in definition and isinstance(definition["description"], str):
        task["description"] = definition["description"]
    if depends:
        task["dependsOn"] = depends
    persistent = definition.get("persistent") is True
    interactive = definition.get("interactive") is True
    exec_spec: dict[str, Any] = {"command": script_command(name, project.scripts, host)}
    pass_through = _env_names(
        [
            *top.global_pass,
            *_strings(definition.get("passThroughEnv", []), shown, "passThroughEnv"),
        ],
        "passThroughEnv",
        where,
        shown,
        warnings,
    )
    if pass_through:
        exec_spec["env"] = {"passThrough": list(dict.fromkeys(pass_through))}
    if persistent:
        exec_spec["persistent"] = True
        if interactive:
            warnings.field(
                shown, '"interactive" beside "persistent"', where, "vx runs it persistent"
            )
    elif interactive:
        exec_spec["interactive"] = True
    task["exec"] = exec_spec
    env = _env_names(
        [*top.global_env, *_strings(definition.get("env", []), shown, "env")],
        "env",
        where,
        shown,
        warnings,
    )
    if definition.get("cache") is False or persistent or interactive:
        if env:
            spec = exec_spec.setdefault("env", {})
            spec["passThrough"] = list(dict.fromkeys([*spec.get("passThrough", []), *env]))
        return task
    outputs = _strings(definition.get("outputs", []), shown, "outputs")
    local_out = [g for g in outputs if ROOT_TOKEN not in g]
    ws_out = [_rooted(g) for g in outputs if ROOT_TOKEN in g]
    cache: dict[str, Any] = {}
    inputs = _inputs(definition, shown, local_out)
    if top.global_deps:
        inputs["workspaceFiles"] = [*top.global_deps, *inputs.get("workspaceFiles", [])]
    if env:
        inputs["env"] = list(dict.fromkeys(env))
    if inputs:
        cache["inputs"] = inputs
    if local_out or ws_out:
        cache["outputs"] = {
            k: v for k, v in (("files", local_out), ("workspaceFiles", ws_out)) if v
        }
    task["cache"] = cache
    return task


def _rooted(glob: str) -> str:
    """`$TURBO_ROOT$/x` (or `!$TURBO_ROOT$/x`) as a root-relative glob."""
    negated = glob.startswith("!")
    rest = glob.removeprefix("!").removeprefix(ROOT_TOKEN)
    return f"!{rest}" if negated else rest


def _inputs(definition: Mapping[str, Any], shown: str, outputs: Sequence[str]) -> dict[str, Any]:
    if "inputs" not in definition:
        return {}
    globs = _strings(definition["inputs"], shown, "inputs")
    local = [g for g in globs if ROOT_TOKEN not in g and g not in (DEFAULT, EXTENDS)]
    found: dict[str, Any] = {}
    rooted = [_rooted(g) for g in globs if ROOT_TOKEN in g]
    if rooted:
        found["workspaceFiles"] = rooted
    if DEFAULT in globs:
        # Turbo's default set is the package's files git sees; vx's is the same less the
        # declared outputs, so an explicit list spells that out.
        if local:
            found["files"] = ["**", *local, *(f"!{o}" for o in outputs if not o.startswith("!"))]
    else:
        found["files"] = local
    return found
