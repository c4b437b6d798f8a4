"""Reading nx.json live: targetDefaults, namedInputs and each project's targets as vx tasks.

A project's targets are its package.json scripts (Nx runs them with `nx:run-script`), the
`nx.targets` of its package.json and the `targets` of its project.json, each over the
`targetDefaults` entry for its name (else its executor). Inputs expand named sets recursively;
`{projectRoot}` and `{workspaceRoot}` anchor globs and outputs; a `nx:run-commands` command
runs in the workspace root unless its `cwd` says otherwise, as Nx runs it.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import TYPE_CHECKING, Any

from vx.errors import ConfigError
from vx.foreign.driver import LiveRead, LiveTasks, Warnings, read_jsonc
from vx.foreign.nx_inputs import NxInputs
from vx.foreign.tasks import script_command, script_host
from vx.util.globs import has_magic
from vx.workspace.manifests import load_json_object

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.foreign.driver import LiveProject
    from vx.workspace.model import Manager
    from vx.workspace.script_host import ScriptHost

NX_JSON = "nx.json"
PROJECT_JSON = "project.json"
RUN_SCRIPT = "nx:run-script"
RUN_COMMANDS = "nx:run-commands"
NOOP = "nx:noop"
NX_FIELDS = frozenset({"$schema", "targetDefaults", "namedInputs", "tasksRunnerOptions"})
NX_ADVICE = {
    "plugins": "targets Nx plugins infer are not read; declare them in project.json",
    "nxCloudId": "vx does not speak Nx Cloud's protocol: runs cache locally",
    "nxCloudAccessToken": "vx does not speak Nx Cloud's protocol: runs cache locally",
    "defaultBase": "set affectedBase in vx.workspace.json",
    "affected": "set affectedBase in vx.workspace.json",
    "parallel": "set concurrency in vx.workspace.json",
    "cacheDirectory": "set cacheDir in vx.workspace.json",
}
TARGET_FIELDS = frozenset(
    {"executor", "command", "options", "dependsOn", "inputs", "outputs", "cache", "continuous"}
)
COMMAND_OPTIONS = frozenset({"command", "commands", "cwd", "parallel", "env", "script"})
_OPTION = re.compile(r"\{options\.([A-Za-z0-9_.-]+)\}")


class _Nx:
    """nx.json's parts every project reads."""

    def __init__(self, root: Path, warnings: Warnings) -> None:
        path = root / NX_JSON
        if not path.is_file():
            raise ConfigError(
                "nx.json",
                "is not at the workspace root, and tasksFrom (or vx migrate --from) names"
                " nx — add it there, or drop tasksFrom",
            )
        doc = read_jsonc(path, NX_JSON)
        for name in doc:
            if name not in NX_FIELDS:
                warnings.field(
                    NX_JSON, f'"{name}"', "", NX_ADVICE.get(name, "vx has no such setting")
                )
        self.defaults = _object(doc.get("targetDefaults", {}), NX_JSON, "targetDefaults")
        self.named = _object(doc.get("namedInputs", {}), NX_JSON, "namedInputs")
        runner = _object(doc.get("tasksRunnerOptions", {}), NX_JSON, "tasksRunnerOptions")
        options = runner.get("default", {}).get("options", {}) if runner else {}
        self.cacheable = frozenset(options.get("cacheableOperations", []) or [])
        extra = set(runner.get("default", {}).get("options", {})) - {"cacheableOperations"}
        if extra or set(runner) - {"default"}:
            warnings.field(NX_JSON, '"tasksRunnerOptions"', "", "vx reads cacheableOperations only")

    def defaults_for(self, name: str, executor: str | None) -> dict[str, Any]:
        if name in self.defaults:
            return dict(self.defaults[name])
        if executor is not None and executor in self.defaults:
            return dict(self.defaults[executor])
        for key, value in self.defaults.items():
            if has_magic(key) and fnmatch.fnmatchcase(name, key):
                return dict(value)
        return {}


def _object(value: object, shown: str, pointer: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(shown, "expected an object", pointer)
    return value


class _Project:
    """One project as Nx sees it: its name, tags, named inputs and targets."""

    def __init__(self, root: Path, project: LiveProject, nx: _Nx, warnings: Warnings) -> None:
        self.live = project
        directory = root / project.rel_dir
        has_file = (directory / PROJECT_JSON).is_file()
        # What a warning names: the project.json, or without one the package.json whose "nx"
        # field and scripts made the targets (never a file that is not there).
        self.shown = posixpath.join(
            project.rel_dir, PROJECT_JSON if has_file else "package.json"
        ).removeprefix("./")
        self.files: list[str] = [NX_JSON]
        doc: dict[str, Any] = {}
        if has_file:
            doc = read_jsonc(directory / PROJECT_JSON, self.shown)
            self.files.append(self.shown)
        package: dict[str, Any] = {}
        if (directory / "package.json").is_file():
            manifest = load_json_object(directory / "package.json", "package.json")
            found = manifest.get("nx")
            package = found if isinstance(found, dict) else {}
        self.nx_name = str(doc.get("name") or package.get("name") or project.name)
        self.tags = [
            t for t in [*doc.get("tags", []), *package.get("tags", [])] if isinstance(t, str)
        ]
        for field in ("implicitDependencies",):
            if field in doc or field in package:
                warnings.field(
                    self.shown,
                    f'"{field}"',
                    "",
                    "vx links packages by their package.json dependencies",
                )
        self.named = {**nx.named, **doc.get("namedInputs", {}), **package.get("namedInputs", {})}
        included = package.get("includedScripts")
        self.targets: dict[str, dict[str, Any]] = {}
        for script in project.scripts:
            if included is None or script in included:
                self.targets[script] = {"executor": RUN_SCRIPT, "options": {"script": script}}
        for source in (package.get("targets", {}), doc.get("targets", {})):
            for name, value in _object(source, self.shown, "targets").items():
                self.targets[name] = _merge(
                    self.targets.get(name, {}), _object(value, self.shown, f"targets.{name}")
                )


def _root_unclaimed(root: Path, project: LiveProject) -> bool:
    if not project.is_root or project.rel_dir != "." or (root / PROJECT_JSON).is_file():
        return False
    if project.name != "//":
        return False  # a single-package repo's root is its one project
    manifest = root / "package.json"
    return not (manifest.is_file() and "nx" in load_json_object(manifest, "package.json"))


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**base, **over}
    if "options" in base or "options" in over:
        merged["options"] = {**base.get("options", {}), **over.get("options", {})}
    return merged


def read_nx(root: Path, projects: Sequence[LiveProject], manager: Manager) -> LiveRead:
    """Every project's tasks as nx.json and its project.json describe them."""
    warnings = Warnings()
    nx = _Nx(root, warnings)
    # The root is an Nx project only with a project.json or an "nx" field of its own: its
    # package.json scripts (`nx run-many -t build`) run the workspace, not a task of it.
    read = [_Project(root, p, nx, warnings) for p in projects if not _root_unclaimed(root, p)]
    names = {p.nx_name: p.live.name for p in read} | {p.live.name: p.live.name for p in read}
    out: dict[str, LiveTasks] = {}
    host = script_host(root, manager)
    for project in read:
        tasks: dict[str, Any] = {}
        for name, target in project.targets.items():
            executor = target.get("executor")
            if executor is None and "command" in target:
                executor = RUN_COMMANDS
            merged = _merge(nx.defaults_for(name, executor), target)
            task = _Target(root, project, name, merged, nx, names, host, warnings).task()
            if task is not None:
                tasks[name] = task
        raw: dict[str, Any] = {"tasks": tasks}
        if project.tags:
            raw["tags"] = project.tags
        path = project.shown if len(project.files) > 1 else NX_JSON
        out[project.live.name] = LiveTasks(raw, path, tuple(project.files))
    return LiveRead(out, warnings.render(), NX_JSON)


class _Target:
    """One target of one project, turned into a vx task."""

    def __init__(
        self,
        root: Path,
        project: _Project,
        name: str,
        target: dict[str, Any],
        nx: _Nx,
        names: Mapping[str, str],
        host: ScriptHost,
        warnings: Warnings,
    ) -> None:
        self.root, self.project, self.name, self.target = root, project, name, target
        self.nx, self.names, self.host, self.warnings = nx, names, host, warnings
        self.where = f"{project.nx_name}:{name}"
        self.rel = project.live.rel_dir
        self.options: dict[str, Any] = target.get("options", {}) or {}

    def warn(self, field: str, advice: str) -> None:
        self.warnings.field(self.project.shown, field, self.where, advice)

    def task(self) -> dict[str, Any] | None:
        for key in self.target:
            if key not in TARGET_FIELDS:
                self.warn(f'"{key}"', "vx has no such field")
        depends = self.depends()
        executor = self.target.get("executor")
        if executor is None and "command" in self.target:
            executor = RUN_COMMANDS
        task: dict[str, Any] = {}
        if depends:
            task["dependsOn"] = depends
        if executor is None or executor == NOOP:
            return task or None
        command = self.command(executor)
        if command is None:
            return task or None
        exec_spec: dict[str, Any] = {"command": command}
        define = self.options.get("env")
        if isinstance(define, dict) and executor == RUN_COMMANDS:
            exec_spec["env"] = {"define": {str(k): str(v) for k, v in define.items()}}
        persistent = self.target.get("continuous") is True
        if persistent:
            exec_spec["persistent"] = True
        task["exec"] = exec_spec
        cached = self.target.get("cache")
        if cached is None:
            cached = self.name in self.nx.cacheable
        if cached is True and not persistent:
            task["cache"] = self.cache(bool(depends))
        return task

    def depends(self) -> list[str]:
        out: list[str] = []
        for entry in self.target.get("dependsOn", []) or []:
            if isinstance(entry, str):
                project, colon, target = entry.rpartition(":")
                if colon and project in self.names:
                    out.append(f"{self.names[project]}#{target}")
                else:
                    out.append(entry)
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("target"), str):
                self.warn("a dependsOn entry", "write a target name or { target, projects }")
                continue
            target = entry["target"]
            projects = entry.get("projects")
            if "params" in entry:
                self.warn('dependsOn "params"', "arguments after -- reach the requested tasks only")
            if entry.get("dependencies") is True or projects == "dependencies":
                out.append(f"^{target}")
            elif projects in (None, "self"):
                out.append(target)
            else:
                for name in [projects] if isinstance(projects, str) else projects:
                    if name in self.names:
                        out.append(f"{self.names[name]}#{target}")
                    else:
                        self.warn(f'dependsOn projects "{name}"', "name each project exactly")
        return list(dict.fromkeys(out))

    def command(self, executor: str) -> str | None:
        if executor == RUN_SCRIPT:
            script = self.options.get("script", self.name)
            if script not in self.project.live.scripts:
                self.warn(f'script "{script}"', "the package.json has no such script")
                return None
            return script_command(script, self.project.live.scripts, self.host)
        if executor != RUN_COMMANDS:
            self.warn(
                f'executor "{executor}"',
                "it runs only under Nx, so the target is left out; give it a command",
            )
            return None
        for key in self.options:
            if key not in COMMAND_OPTIONS:
                self.warn(f'options "{key}"', "vx runs the command as written")
        listed = (
            self.options.get("commands")
            or self.target.get("command")
            or self.options.get("command")
        )
        if isinstance(listed, str):
            listed = [listed]
        commands = [c["command"] if isinstance(c, dict) else c for c in listed or []]
        commands = [c for c in commands if isinstance(c, str) and c.strip()]
        if not commands:
            self.warn("a run-commands target without a command", "give it a command")
            return None
        if len(commands) > 1 and self.options.get("parallel", True) is not False:
            self.warn('"parallel"', "vx runs a target's commands one after another")
        cwd = posixpath.normpath(str(self.options.get("cwd", ".")))
        to_root = posixpath.relpath(".", cwd)
        text = " && ".join(self.interpolate(c, to_root) for c in commands)
        if "{args." in text:
            self.warn("{args.…} in a command", "pass arguments after --")
        hop = posixpath.relpath(cwd, self.rel)
        return text if hop == "." else f"cd {hop} && {text}"

    def interpolate(self, text: str, to_root: str) -> str:
        return (
            text.replace("{projectRoot}", self.rel)
            .replace("{projectName}", self.project.nx_name)
            .replace("{workspaceRoot}", to_root)
        )

    def cache(self, has_edges: bool) -> dict[str, Any]:
        cache: dict[str, Any] = {}
        inputs = self.inputs(has_edges)
        if inputs is not None:
            cache["inputs"] = inputs
        files: list[str] = []
        ws: list[str] = []
        for entry in self.target.get("outputs", []) or []:
            found = self.output(entry)
            if found is not None:
                (ws if found[0] else files).append(found[1])
        outputs = {k: v for k, v in (("files", files), ("workspaceFiles", ws)) if v}
        if outputs:
            cache["outputs"] = outputs
        return cache

    def output(self, entry: object) -> tuple[bool, str] | None:
        """(whether root-relative, the glob) for one output entry."""
        if not isinstance(entry, str):
            return None
        text = entry
        for match in _OPTION.finditer(entry):
            value = self.options.get(match.group(1))
            if not isinstance(value, str):
                self.warn(f'outputs "{entry}"', f"options.{match.group(1)} is not set")
                return None
            text = text.replace(match.group(0), value)
        negated = text.startswith("!")
        path = (
            text.removeprefix("!")
            .replace("{projectRoot}", self.rel)
            .replace("{projectName}", self.project.nx_name)
        )
        path = posixpath.normpath(path.replace("{workspaceRoot}/", "").removeprefix("./"))
        if not has_magic(path) and "." not in path.rpartition("/")[2]:
            path += "/**"
        bang = "!" if negated else ""
        if self.rel == ".":
            return False, bang + path
        if path.startswith(self.rel + "/"):
            return False, bang + path[len(self.rel) + 1 :]
        return True, bang + path

    def inputs(self, has_edges: bool) -> dict[str, Any] | None:
        entries = self.target.get("inputs")
        if entries is None:
            if "default" not in self.project.named:
                return None
            entries = ["default", "^default"]
        found = NxInputs(self.project.named, self.warn)
        found.expand(entries, ())
        if found.upstream and not has_edges:
            self.warn(
                f'inputs "^{found.upstream}"',
                "vx keys a task on the tasks it depends on, not its dependencies' files;"
                ' add the dependencies\' task whose output it reads: "dependsOn": ["^<task>"]',
            )
        return found.result()
