"""Raw config values → frozen models; every refusal names the file and the field path.

A package's config and every task table, the root's included; the root's own fields are
`config_root`'s.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.util.globs import climbs
from vx.workspace.config_fields import (
    FrozenJson,
    Site,
    boolean,
    fields,
    non_blank,
    non_negative_int,
    positive_int,
    quote,
    shown,
    string,
    string_list,
)
from vx.workspace.model import (
    CacheInputs,
    CacheOutputs,
    CacheSpec,
    EnvSpec,
    ExecSpec,
    ProjectConfig,
    SandboxSpec,
    TaskDef,
)

if TYPE_CHECKING:
    from collections.abc import Callable

PROJECT_FIELDS = ("tags", "tasks")
TASK_FIELDS = ("description", "dependsOn", "exec", "cache")
EXEC_FIELDS = (
    "command",
    "env",
    "timeout",
    "retries",
    "persistent",
    "readyWhen",
    "interactive",
    "sandbox",
)
SANDBOX_FIELDS = ("allow",)
ALLOW_FIELDS = ("read", "write")
ENV_FIELDS = ("passThrough", "define", "secret")
CACHE_FIELDS = ("inputs", "outputs")
INPUT_FIELDS = ("files", "workspaceFiles", "env", "tasks", "runtime", "workspaceRuntime")
OUTPUT_FIELDS = ("files", "workspaceFiles")
SCHEMA_KEY = "$schema"

# The longest timer vx arms (what a signed 32-bit count of ms holds), as `--timeout` clamps.
MAX_TIMEOUT_MS = 2**31 - 1
TIMEOUT_UNIT = " ms (about 24 days)"
# A retry count is for a flaky task; past this it would only hide a failing one for hours.
MAX_RETRIES = 100

_NAME = r"[^#^\s][^#\s]*"
_TASK_REF = re.compile(rf"\^?{_NAME}|{_NAME}#{_NAME}")
_SPACE = re.compile(r"\s")
_ENV_BAD = re.compile(r"[=\s]")
_GLOB = re.compile(r"!?[^!/]")


def parse_project_config(
    raw: object,
    path: str,
    *,
    top: Site | None = None,
    shared: Mapping[str, object] = MappingProxyType({}),
) -> ProjectConfig:
    """Validate a project's `vx.config.*` value and build its model (tasks in file order).

    `top` is where a refusal points when the value came from elsewhere than `path` (a lock
    entry's `resolved`); the model still names `path`, the file it stands for. `shared` holds
    the workspace-wide tasks as written: a task of the same name here is merged over its one
    before it is checked, so it may say only what differs (task_defaults.py).
    """
    top = top or Site(path)
    doc = fields(raw, top, PROJECT_FIELDS, ignored=(SCHEMA_KEY,))
    schema_key(doc, top)
    tags = string_list(doc["tags"], top.key("tags"), _tag) if "tags" in doc else ()
    raw = task_table(doc["tasks"], top.key("tasks")) if "tasks" in doc else {}
    if shared:
        from vx.workspace.task_defaults import merge_task

        raw = {k: merge_task(shared[k], v) if k in shared else v for k, v in raw.items()}
    tasks = parse_tasks(raw, top.key("tasks"))
    return ProjectConfig(path=path, tags=tags, tasks=MappingProxyType(tasks))


def parse_tasks(raw: Mapping[str, object], site: Site) -> dict[str, TaskDef]:
    """A `tasks` table's values (names already checked) as task models, in file order."""
    return {name: _task(name, value, site.key(name)) for name, value in raw.items()}


def schema_key(doc: Mapping[str, object], site: Site) -> None:
    if SCHEMA_KEY in doc:
        string(doc[SCHEMA_KEY], site.key(SCHEMA_KEY))


def task_table(value: object, site: Site) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        site.fail("expected an object")
    for name in value:
        if not isinstance(name, str):
            site.fail(f"task names must be strings, got {shown(name)}")
        _task_name(name, site)
    return value


def _task_name(name: str, site: Site) -> None:
    string(name, site.key(name))
    if not name:
        site.fail("a task name may not be empty")
    if "#" in name:
        site.fail(f'task name {quote(name)} may not contain "#" (it joins a project to a task)')
    if name.startswith("^"):
        site.fail(f'task name {quote(name)} may not start with "^" (it marks a dependency\'s task)')
    if _SPACE.search(name):
        site.fail(f"task name {quote(name)} may not contain whitespace")


def _task(name: str, value: object, site: Site) -> TaskDef:
    doc = fields(value, site, TASK_FIELDS)
    description = (
        string(doc["description"], site.key("description")) if "description" in doc else None
    )
    depends_on: tuple[str, ...] = ()
    if "dependsOn" in doc:
        depends_on = string_list(doc["dependsOn"], site.key("dependsOn"), _task_ref)
    exec_spec = _exec(doc["exec"], site.key("exec")) if "exec" in doc else None
    cache_spec = _cache(doc["cache"], site.key("cache")) if "cache" in doc else None
    if exec_spec is None:
        if not depends_on:
            site.fail('a task with no "exec" is a group and needs a non-empty "dependsOn"')
        if cache_spec is not None:
            site.key("cache").fail(
                'a group (a task with no "exec") runs nothing to cache: add "exec" or drop "cache"'
            )
    # Built frozen, not frozen after: a thousand configs' worth of nested dicts walked again
    # was a tenth of a large plan.
    resolved = FrozenJson(
        {
            "description": description,
            "dependsOn": depends_on,
            "exec": _resolved_exec(exec_spec) if exec_spec else None,
            "cache": _resolved_cache(cache_spec) if cache_spec else None,
        }
    )
    return TaskDef(
        name=name,
        depends_on=depends_on,
        description=description,
        exec_spec=exec_spec,
        cache_spec=cache_spec,
        resolved=resolved,
    )


def _exec(value: object, site: Site) -> ExecSpec:
    if isinstance(value, str):
        return ExecSpec(command=non_blank(value, site, "command"))
    if not isinstance(value, Mapping):
        site.fail("expected a command string or an object")
    doc = fields(value, site, EXEC_FIELDS)
    if "command" not in doc:
        site.fail('missing "command"')
    command = non_blank(doc["command"], site.key("command"), "command")
    env = _env(doc["env"], site.key("env")) if "env" in doc else EnvSpec()
    timeout = None
    if "timeout" in doc:
        timeout = positive_int(doc["timeout"], site.key("timeout"), MAX_TIMEOUT_MS, TIMEOUT_UNIT)
    retries = None
    if "retries" in doc:
        retries = non_negative_int(doc["retries"], site.key("retries"), MAX_RETRIES)
    persistent = (
        boolean(doc["persistent"], site.key("persistent")) if "persistent" in doc else False
    )
    interactive = (
        boolean(doc["interactive"], site.key("interactive")) if "interactive" in doc else False
    )
    ready_when = _regex(doc["readyWhen"], site.key("readyWhen")) if "readyWhen" in doc else None
    if ready_when is not None and not persistent:
        site.key("readyWhen").fail(
            'only a persistent task waits to be ready: add "persistent": true or drop "readyWhen"'
        )
    if persistent and interactive:
        site.fail('"interactive" and "persistent" may not both be true')
    sandbox = _sandbox(doc["sandbox"], site.key("sandbox")) if "sandbox" in doc else None
    if sandbox is not None and (persistent or interactive):
        site.key("sandbox").fail(
            "a persistent or interactive task cannot be sandboxed: drop one of the two"
        )
    return ExecSpec(
        command=command,
        env=env,
        timeout_ms=timeout,
        retries=retries,
        persistent=persistent,
        ready_when=ready_when,
        interactive=interactive,
        sandbox=sandbox,
    )


def _sandbox(value: object, site: Site) -> SandboxSpec:
    doc = fields(value, site, SANDBOX_FIELDS)
    if "allow" not in doc:
        site.fail('missing "allow": the paths the task may read and write')
    allow = fields(doc["allow"], site.key("allow"), ALLOW_FIELDS)
    at = site.key("allow")
    read = string_list(allow["read"], at.key("read"), _grant) if "read" in allow else ()
    write = string_list(allow["write"], at.key("write"), _output_glob) if "write" in allow else ()
    return SandboxSpec(read=read, write=write)


def _grant(value: object, site: Site) -> str:
    """A read grant: `.` (the whole project) or a project-relative glob."""
    if value == ".":
        return "."
    return _input_glob(value, site)


def _env(value: object, site: Site) -> EnvSpec:
    doc = fields(value, site, ENV_FIELDS)
    pass_through: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()
    if "passThrough" in doc:
        pass_through = string_list(doc["passThrough"], site.key("passThrough"), env_name)
    if "secret" in doc:
        secret = string_list(doc["secret"], site.key("secret"), env_name)
    define = _define(doc["define"], site.key("define")) if "define" in doc else {}
    return EnvSpec(pass_through=pass_through, define=MappingProxyType(define), secret=secret)


def _define(value: object, site: Site) -> dict[str, str]:
    if not isinstance(value, Mapping):
        site.fail("expected an object of variable names to string values")
    define: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(name, str):
            site.fail(f"variable names must be strings, got {shown(name)}")
        env_name(name, site)
        define[name] = string(text, site.key(name))
    return define


def _cache(value: object, site: Site) -> CacheSpec:
    doc = fields(value, site, CACHE_FIELDS)
    inputs = _inputs(doc["inputs"], site.key("inputs")) if "inputs" in doc else CacheInputs()
    outputs = _outputs(doc["outputs"], site.key("outputs")) if "outputs" in doc else CacheOutputs()
    return CacheSpec(inputs=inputs, outputs=outputs)


def _inputs(value: object, site: Site) -> CacheInputs:
    doc = fields(value, site, INPUT_FIELDS)

    def read(name: str, item: Callable[[object, Site], str]) -> tuple[str, ...] | None:
        return string_list(doc[name], site.key(name), item) if name in doc else None

    return CacheInputs(
        files=read("files", _input_glob),
        workspace_files=read("workspaceFiles", _input_workspace_glob) or (),
        env=read("env", env_name) or (),
        tasks=read("tasks", _task_ref),
        runtime=read("runtime", _command) or (),
        workspace_runtime=read("workspaceRuntime", _command) or (),
    )


def _outputs(value: object, site: Site) -> CacheOutputs:
    doc = fields(value, site, OUTPUT_FIELDS)
    files: tuple[str, ...] = ()
    workspace_files: tuple[str, ...] = ()
    if "files" in doc:
        files = string_list(doc["files"], site.key("files"), _output_glob)
    if "workspaceFiles" in doc:
        workspace_files = string_list(
            doc["workspaceFiles"], site.key("workspaceFiles"), _output_workspace_glob
        )
    return CacheOutputs(files=files, workspace_files=workspace_files)


def _resolved_exec(spec: ExecSpec) -> FrozenJson:
    return FrozenJson(
        {
            "command": spec.command,
            "env": FrozenJson(
                {
                    "passThrough": tuple(spec.env.pass_through),
                    "define": FrozenJson(sorted(spec.env.define.items())),
                    "secret": tuple(spec.env.secret),
                }
            ),
            "timeout": spec.timeout_ms,
            "retries": spec.retries,
            "persistent": spec.persistent,
            "readyWhen": spec.ready_when,
            "interactive": spec.interactive,
            # Only a sandboxed task says so: every other task's config digest stays as it was.
            **(
                {}
                if spec.sandbox is None
                else {
                    "sandbox": FrozenJson(
                        {
                            "allow": FrozenJson(
                                {"read": spec.sandbox.read, "write": spec.sandbox.write}
                            )
                        }
                    )
                }
            ),
        }
    )


def _resolved_cache(spec: CacheSpec) -> FrozenJson:
    inputs, outputs = spec.inputs, spec.outputs
    return FrozenJson(
        {
            "inputs": FrozenJson(
                {
                    "files": None if inputs.files is None else tuple(inputs.files),
                    "workspaceFiles": tuple(inputs.workspace_files),
                    "env": tuple(inputs.env),
                    "tasks": None if inputs.tasks is None else tuple(inputs.tasks),
                    "runtime": tuple(inputs.runtime),
                    "workspaceRuntime": tuple(inputs.workspace_runtime),
                }
            ),
            "outputs": FrozenJson(
                {"files": tuple(outputs.files), "workspaceFiles": tuple(outputs.workspace_files)}
            ),
        }
    )


def _tag(value: object, site: Site) -> str:
    tag = string(value, site)
    if not tag or _SPACE.search(tag):
        site.fail(f"tag {quote(tag)} must be a non-empty word without whitespace")
    return tag


def _task_ref(value: object, site: Site) -> str:
    ref = string(value, site)
    if not _TASK_REF.fullmatch(ref):
        site.fail(
            f"{quote(ref)} is not a task reference: write name, ^name, package#name or //#name"
        )
    return ref


def env_name(value: object, site: Site) -> str:
    name = string(value, site)
    if not name or _ENV_BAD.search(name):
        site.fail(f'{quote(name)} is not a variable name: no "=", no whitespace, not empty')
    return name


def _glob(value: object, site: Site, base: str, above: str) -> str:
    """A relative glob that stays under its base; `above` says what to do with one that climbs.

    A `..` is refused however it is spelt (`a/../../x`, `{..,b}`, `\\.\\.`): an output glob
    is cleaned before each run, so one that climbs would delete what the task does not own.
    """
    pattern = string(value, site)
    if not _GLOB.match(pattern):
        site.fail(
            f"{quote(pattern)} is not a glob relative to the {base} "
            '(a path or pattern, optionally after "!" to exclude)'
        )
    if climbs(pattern):
        site.fail(f'{quote(pattern)} reaches outside the {base} through ".." — {above}')
    return pattern


def _input_glob(value: object, site: Site) -> str:
    return _glob(
        value,
        site,
        "project directory",
        "list files elsewhere in the workspace under inputs.workspaceFiles, "
        "relative to the workspace root",
    )


def _input_workspace_glob(value: object, site: Site) -> str:
    return _glob(
        value, site, "workspace root", "only files inside the workspace can be inputs: drop it"
    )


def _output_glob(value: object, site: Site) -> str:
    return _glob(
        value,
        site,
        "project directory",
        "vx cleans outputs before each run; list outputs elsewhere in the workspace under "
        "outputs.workspaceFiles, relative to the workspace root",
    )


def _output_workspace_glob(value: object, site: Site) -> str:
    return _glob(
        value,
        site,
        "workspace root",
        "vx cleans outputs before each run and never outside the workspace: write the task's "
        "outputs inside it",
    )


def _command(value: object, site: Site) -> str:
    return non_blank(value, site, "command")


def _regex(value: object, site: Site) -> str:
    pattern = string(value, site)
    if not pattern:
        site.fail("expected a non-empty regular expression")
    try:
        with warnings.catch_warnings():
            # `re` warns of syntax it may read differently one day; a stray line on stderr
            # is no refusal, and the pattern works as written today.
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as exc:
        site.fail(f"{quote(pattern)} is not a valid regular expression: {exc}")
    except (RecursionError, OverflowError):
        site.fail(f"{quote(pattern)} nests or repeats too deeply for Python's re to compile")
    return pattern
