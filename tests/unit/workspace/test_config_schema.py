"""Validation of raw config values: what is accepted, how it is modelled, and each refusal's line."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from vx.errors import ConfigError, ErrorCode
from vx.workspace.config_root import parse_workspace_config
from vx.workspace.config_schema import parse_project_config
from vx.workspace.model import (
    CacheInputs,
    CacheOutputs,
    CacheRetention,
    CacheSpec,
    EnvSpec,
    ExecSpec,
    WorkspaceConfig,
)

PATH = "packages/a/vx.config.json"

DESIGN_EXAMPLE = {
    "$schema": "../../schemas/config.json",
    "tags": ["scope:web"],
    "tasks": {
        "build": {
            "description": "compile",
            "dependsOn": ["^build", "codegen", "other-pkg#gen"],
            "exec": {
                "command": "tsc -b",
                "env": {
                    "passThrough": ["NODE_OPTIONS"],
                    "define": {"NODE_ENV": "production"},
                    "secret": ["NPM_TOKEN"],
                },
                "timeout": 600000,
                "retries": 0,
                "persistent": False,
                "interactive": False,
            },
            "cache": {
                "inputs": {
                    "files": ["src/**", "tsconfig.json"],
                    "workspaceFiles": ["tsconfig.base.json"],
                    "env": ["API_URL"],
                    "tasks": ["^build"],
                    "runtime": ["node --version"],
                },
                "outputs": {"files": ["dist/**", "!dist/cache/**"], "workspaceFiles": []},
            },
        },
        "codegen": {"exec": "gen"},
        "dev": {"exec": {"command": "vite", "persistent": True, "readyWhen": r"ready in \d+ms"}},
        "ci": {"dependsOn": ["build", "//#lint"]},
    },
}


def task(body: object) -> dict[str, object]:
    return {"tasks": {"build": body}}


def exec_(**fields: object) -> dict[str, object]:
    return task({"exec": {"command": "make", **fields}})


def test_design_example_builds_the_model() -> None:
    config = parse_project_config(DESIGN_EXAMPLE, PATH)
    assert config.path == PATH
    assert config.tags == ("scope:web",)
    assert list(config.tasks) == ["build", "codegen", "dev", "ci"]
    build = config.tasks["build"]
    assert build.description == "compile"
    assert build.depends_on == ("^build", "codegen", "other-pkg#gen")
    assert build.exec_spec == ExecSpec(
        command="tsc -b",
        env=EnvSpec(
            pass_through=("NODE_OPTIONS",),
            define=MappingProxyType({"NODE_ENV": "production"}),
            secret=("NPM_TOKEN",),
        ),
        timeout_ms=600000,
        retries=0,
    )
    assert build.cache_spec == CacheSpec(
        inputs=CacheInputs(
            files=("src/**", "tsconfig.json"),
            workspace_files=("tsconfig.base.json",),
            env=("API_URL",),
            tasks=("^build",),
            runtime=("node --version",),
        ),
        outputs=CacheOutputs(files=("dist/**", "!dist/cache/**")),
    )
    assert config.tasks["codegen"].exec_spec == ExecSpec(command="gen")
    assert config.tasks["codegen"].cache_spec is None
    assert config.tasks["dev"].exec_spec == ExecSpec(
        command="vite", persistent=True, ready_when=r"ready in \d+ms"
    )
    assert config.tasks["ci"].is_group
    assert not build.is_group


def test_resolved_is_plain_json_with_exec_as_an_object_and_defaults_filled_in() -> None:
    config = parse_project_config(DESIGN_EXAMPLE, PATH)
    assert json.loads(json.dumps(config.tasks["codegen"].resolved)) == {
        "description": None,
        "dependsOn": [],
        "exec": {
            "command": "gen",
            "env": {"passThrough": [], "define": {}, "secret": []},
            "timeout": None,
            "retries": None,
            "persistent": False,
            "readyWhen": None,
            "interactive": False,
        },
        "cache": None,
    }
    assert json.loads(json.dumps(config.tasks["build"].resolved))["cache"] == {
        "inputs": {
            "files": ["src/**", "tsconfig.json"],
            "workspaceFiles": ["tsconfig.base.json"],
            "env": ["API_URL"],
            "tasks": ["^build"],
            "runtime": ["node --version"],
            "workspaceRuntime": [],
        },
        "outputs": {"files": ["dist/**", "!dist/cache/**"], "workspaceFiles": []},
    }
    assert config.tasks["ci"].resolved["exec"] is None


@pytest.mark.parametrize(
    "exec_value",
    [
        {"command": "make"},
        {"command": "make", "env": {}, "persistent": False},
        {"command": "make", "env": {"passThrough": [], "define": {}, "secret": []}},
    ],
)
def test_exec_string_and_its_object_form_resolve_the_same(exec_value: object) -> None:
    plain = parse_project_config(task({"exec": "make"}), PATH).tasks["build"].resolved
    assert parse_project_config(task({"exec": exec_value}), PATH).tasks["build"].resolved == plain


def test_a_cache_block_with_nothing_in_it_reads_every_project_file() -> None:
    spec = parse_project_config(task({"exec": "make", "cache": {}}), PATH).tasks["build"]
    assert spec.cache_spec == CacheSpec()
    assert spec.cache_spec.inputs.files is None
    assert spec.resolved["cache"]["inputs"]["files"] is None


def test_resolved_and_lists_are_frozen() -> None:
    build = parse_project_config(DESIGN_EXAMPLE, PATH).tasks["build"]
    with pytest.raises(TypeError):
        build.resolved["exec"] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        build.resolved["cache"]["inputs"].update(files=[])
    assert isinstance(build.resolved["dependsOn"], tuple)
    with pytest.raises(TypeError):
        build.exec_spec.env.define["X"] = "1"  # type: ignore[union-attr,index]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, {}),
        ({"timeout": 600000.0}, {"timeout": 600000}),
        ({"retries": 3}, {"retries": 3}),
        ({"interactive": True}, {"interactive": True}),
        ({"persistent": True, "readyWhen": "listening on :\\d+"}, {"persistent": True}),
    ],
)
def test_exec_fields_accepted(raw: dict[str, object], expected: dict[str, object]) -> None:
    resolved = parse_project_config(exec_(**raw), PATH).tasks["build"].resolved["exec"]
    for key, value in expected.items():
        assert resolved[key] == value
        assert type(resolved[key]) is type(value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"taks": {}},
            'unknown field "taks" (did you mean "tags" or "tasks"?)',
        ),
        (
            {"schema": "x"},
            'unknown field "schema" (did you mean "$schema"?)',
        ),
        (
            {"nothing": 1},
            'unknown field "nothing" (known fields: tags, tasks)',
        ),
        ([], "expected an object"),
        ({"$schema": 5}, "$schema: expected a string"),
        ({"tags": "web"}, 'tags: expected a list of strings, not a string: write ["web"]'),
        ({"tags": ["a b"]}, 'tags[0]: tag "a b" must be a non-empty word without whitespace'),
        ({"tags": ["ok", 3]}, "tags[1]: expected a string"),
        ({"tasks": []}, "tasks: expected an object"),
        ({"tasks": {1: {}}}, "tasks: task names must be strings, got 1"),
        ({"tasks": {"": {"exec": "x"}}}, "tasks: a task name may not be empty"),
        (
            {"tasks": {"a#b": {"exec": "x"}}},
            'tasks: task name "a#b" may not contain "#" (it joins a project to a task)',
        ),
        (
            {"tasks": {"^a": {"exec": "x"}}},
            'tasks: task name "^a" may not start with "^" (it marks a dependency\'s task)',
        ),
        ({"tasks": {"a b": {"exec": "x"}}}, 'tasks: task name "a b" may not contain whitespace'),
        ({"tasks": {"build": "make"}}, "tasks.build: expected an object"),
        (
            task({"exec": "x", "zzz": 1}),
            'tasks.build: unknown field "zzz" (known fields: description, dependsOn, exec, cache)',
        ),
        (
            task({"exec": "x", "depends_on": []}),
            'tasks.build: unknown field "depends_on" (did you mean "dependsOn"?)',
        ),
        (task({"exec": "x", "description": 3}), "tasks.build.description: expected a string"),
        (
            task({"exec": "x", "dependsOn": "lint"}),
            'tasks.build.dependsOn: expected a list of strings, not a string: write ["lint"]',
        ),
        (task({"exec": "x", "dependsOn": [5]}), "tasks.build.dependsOn[0]: expected a string"),
        *(
            (
                task({"exec": "x", "dependsOn": ["lint", ref]}),
                (
                    f"tasks.build.dependsOn[1]: {json.dumps(ref)} is not a task reference: "
                    "write name, ^name, package#name or //#name"
                ),
            )
            for ref in ("", "^", "^a#b", "a#", "#a", "a#^b", "a b", "a#b#c", "^^a")
        ),
        (
            task({}),
            'tasks.build: a task with no "exec" is a group and needs a non-empty "dependsOn"',
        ),
        (
            task({"dependsOn": []}),
            'tasks.build: a task with no "exec" is a group and needs a non-empty "dependsOn"',
        ),
        (
            task({"dependsOn": ["a"], "cache": {}}),
            (
                'tasks.build.cache: a group (a task with no "exec") runs nothing to cache: '
                'add "exec" or drop "cache"'
            ),
        ),
        (task({"exec": 5}), "tasks.build.exec: expected a command string or an object"),
        (task({"exec": None}), "tasks.build.exec: expected a command string or an object"),
        (task({"exec": "  "}), "tasks.build.exec: expected a non-empty command"),
        (task({"exec": {}}), 'tasks.build.exec: missing "command"'),
        (task({"exec": {"command": ""}}), "tasks.build.exec.command: expected a non-empty command"),
        (
            task({"exec": {"comand": "make"}}),
            'tasks.build.exec: unknown field "comand" (did you mean "command"?)',
        ),
        (exec_(timeout="600"), "tasks.build.exec.timeout: expected a positive integer"),
        (exec_(timeout=0), "tasks.build.exec.timeout: expected a positive integer"),
        (exec_(timeout=1.5), "tasks.build.exec.timeout: expected a positive integer"),
        (exec_(timeout=True), "tasks.build.exec.timeout: expected a positive integer"),
        (exec_(retries=-1), "tasks.build.exec.retries: expected a non-negative integer"),
        (exec_(persistent="yes"), "tasks.build.exec.persistent: expected true or false"),
        (exec_(interactive=1), "tasks.build.exec.interactive: expected true or false"),
        (
            exec_(persistent=True, readyWhen="ready ("),
            (
                'tasks.build.exec.readyWhen: "ready (" is not a valid regular expression: '
                "missing ), unterminated subpattern at position 6"
            ),
        ),
        (
            exec_(persistent=True, readyWhen=""),
            "tasks.build.exec.readyWhen: expected a non-empty regular expression",
        ),
        (
            exec_(readyWhen="ready"),
            (
                "tasks.build.exec.readyWhen: only a persistent task waits to be ready: "
                'add "persistent": true or drop "readyWhen"'
            ),
        ),
        (
            exec_(persistent=True, interactive=True),
            'tasks.build.exec: "interactive" and "persistent" may not both be true',
        ),
        (
            exec_(env={"pass_through": []}),
            'tasks.build.exec.env: unknown field "pass_through" (did you mean "passThrough"?)',
        ),
        (
            exec_(env={"passThrough": ["A B"]}),
            (
                'tasks.build.exec.env.passThrough[0]: "A B" is not a variable name: '
                'no "=", no whitespace, not empty'
            ),
        ),
        (
            exec_(env={"secret": [""]}),
            (
                'tasks.build.exec.env.secret[0]: "" is not a variable name: '
                'no "=", no whitespace, not empty'
            ),
        ),
        (
            exec_(env={"define": ["A=1"]}),
            "tasks.build.exec.env.define: expected an object of variable names to string values",
        ),
        (
            exec_(env={"define": {"PORT": 3000}}),
            "tasks.build.exec.env.define.PORT: expected a string",
        ),
        (
            exec_(env={"define": {"A=B": "1"}}),
            (
                'tasks.build.exec.env.define: "A=B" is not a variable name: '
                'no "=", no whitespace, not empty'
            ),
        ),
        (
            task({"exec": "x", "cache": {"input": {}}}),
            'tasks.build.cache: unknown field "input" (did you mean "inputs"?)',
        ),
        (
            task({"exec": "x", "cache": {"inputs": {"files": ["/etc/passwd"]}}}),
            (
                'tasks.build.cache.inputs.files[0]: "/etc/passwd" is not a glob relative to the '
                'project directory (a path or pattern, optionally after "!" to exclude)'
            ),
        ),
        (
            task({"exec": "x", "cache": {"outputs": {"files": ["dist/**", ""]}}}),
            (
                'tasks.build.cache.outputs.files[1]: "" is not a glob relative to the '
                'project directory (a path or pattern, optionally after "!" to exclude)'
            ),
        ),
        (
            task({"exec": "x", "cache": {"outputs": {"workspaceFiles": ["!"]}}}),
            (
                'tasks.build.cache.outputs.workspaceFiles[0]: "!" is not a glob relative to the '
                'workspace root (a path or pattern, optionally after "!" to exclude)'
            ),
        ),
        (
            task({"exec": "x", "cache": {"inputs": {"runtime": [" "]}}}),
            "tasks.build.cache.inputs.runtime[0]: expected a non-empty command",
        ),
        (
            task({"exec": "x", "cache": {"inputs": {"tasks": ["^"]}}}),
            (
                'tasks.build.cache.inputs.tasks[0]: "^" is not a task reference: '
                "write name, ^name, package#name or //#name"
            ),
        ),
        (
            task({"exec": "x", "cache": {"inputs": {"env": "API_URL"}}}),
            (
                "tasks.build.cache.inputs.env: expected a list of strings, not a string: "
                'write ["API_URL"]'
            ),
        ),
        (
            {"tasks": {"build.css": {"exec": {"command": "x", "timeout": 0}}}},
            'tasks."build.css".exec.timeout: expected a positive integer',
        ),
    ],
)
def test_project_refusals(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_project_config(raw, PATH)
    assert caught.value.message == f"{PATH}: {message}"
    assert caught.value.code is ErrorCode.CONFIG
    assert caught.value.path == PATH
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    "name", ["build", "build:css", "test.unit", "lint-fix", "a^b", "ünïcode", "x_1"]
)
def test_task_names_accepted(name: str) -> None:
    assert list(parse_project_config({"tasks": {name: {"exec": "x"}}}, PATH).tasks) == [name]


@pytest.mark.parametrize(
    "ref", ["build", "^build", "pkg#build", "@scope/pkg#build", "//#lint", "a^b", "pkg#a^b"]
)
def test_task_references_accepted(ref: str) -> None:
    parsed = parse_project_config(task({"dependsOn": [ref]}), PATH)
    assert parsed.tasks["build"].depends_on == (ref,)


WS = "vx.workspace.json"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, WorkspaceConfig(path=WS)),
        ({"$schema": "./schemas/workspace.json"}, WorkspaceConfig(path=WS)),
        (
            {
                "cacheDir": ".cache/vx",
                "concurrency": 8,
                "timeout": 900000,
                "cacheRetention": {"olderThan": "30d", "maxSize": "10G"},
                "affectedBase": "origin/main",
                "plugins": ["vx_plugins.docker:plugin", "company.vx.plugins:make_plugin"],
            },
            WorkspaceConfig(
                path=WS,
                cache_dir=".cache/vx",
                concurrency=8,
                timeout_ms=900000,
                cache_retention=CacheRetention(older_than="30d", max_size="10G"),
                affected_base="origin/main",
                plugins=("vx_plugins.docker:plugin", "company.vx.plugins:make_plugin"),
            ),
        ),
        ({"concurrency": "50%"}, WorkspaceConfig(path=WS, concurrency="50%")),
        ({"concurrency": "150%"}, WorkspaceConfig(path=WS, concurrency="150%")),
        ({"concurrency": 4.0}, WorkspaceConfig(path=WS, concurrency=4)),
        (
            {"cacheRetention": {"maxSize": 1048576}},
            WorkspaceConfig(path=WS, cache_retention=CacheRetention(max_size="1048576B")),
        ),
        (
            {"cacheRetention": {"olderThan": "12H", "maxSize": "500mb"}},
            WorkspaceConfig(path=WS, cache_retention=CacheRetention("12H", "500mb")),
        ),
        ({"cacheRetention": {}}, WorkspaceConfig(path=WS, cache_retention=CacheRetention())),
        ({"tasksFrom": "turbo"}, WorkspaceConfig(path=WS, tasks_from="turbo")),
        ({"tasksFrom": "nx"}, WorkspaceConfig(path=WS, tasks_from="nx")),
    ],
)
def test_workspace_accepted(raw: object, expected: WorkspaceConfig) -> None:
    assert parse_workspace_config(raw, WS) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("x", "expected an object"),
        ({"cachedir": ".cache"}, 'unknown field "cachedir" (did you mean "cacheDir"?)'),
        ({"tasksFrom": "lerna"}, 'tasksFrom: "lerna" is not one of "turbo", "nx"'),
        ({"tasksFrom": 1}, "tasksFrom: expected a string"),
        (
            {"workers": 4},
            (
                'unknown field "workers" (known fields: cacheDir, concurrency, timeout, '
                "cacheRetention, affectedBase, passThrough, plugins, tasksFrom and 3 more)"
            ),
        ),
        ({"executor": "k8s"}, 'executor: "k8s" is not one of "local", "reapi"'),
        ({"cacheDir": " "}, "cacheDir: expected a non-empty path"),
        ({"cacheDir": 1}, "cacheDir: expected a non-empty path"),
        *(
            (
                {"concurrency": value},
                'concurrency: expected a positive integer or a percentage of the CPUs like "50%"',
            )
            for value in (0, -2, True, None, [4])
        ),
        *(
            (
                {"concurrency": value},
                f'concurrency: {json.dumps(value)} is not a percentage of the CPUs like "50%"',
            )
            for value in ("0%", "50", "x%", "50 %", "05%", "1.5%")
        ),
        ({"concurrency": 2.5}, "concurrency: expected a positive integer"),
        ({"timeout": -1}, "timeout: expected a positive integer"),
        ({"timeout": "10m"}, "timeout: expected a positive integer"),
        ({"cacheRetention": "30d"}, "cacheRetention: expected an object"),
        (
            {"cacheRetention": {"maxsize": "1G"}},
            'cacheRetention: unknown field "maxsize" (did you mean "maxSize"?)',
        ),
        *(
            (
                {"cacheRetention": {"olderThan": value}},
                (
                    f"cacheRetention.olderThan: {json.dumps(value)} is not a duration like "
                    '"30d", "12h", "90m" or "45s"'
                ),
            )
            for value in ("30 days", "0d", "30", "d", "1w", "1.5h")
        ),
        ({"cacheRetention": {"olderThan": 30}}, "cacheRetention.olderThan: expected a string"),
        *(
            (
                {"cacheRetention": {"maxSize": value}},
                (
                    f"cacheRetention.maxSize: {json.dumps(value)} is not a size like "
                    '"10G", "500M", "2K", "1T" or "4096B"'
                ),
            )
            for value in ("10", "0G", "10 G", "1.5G", "10P", "G")
        ),
        *(
            (
                {"cacheRetention": {"maxSize": value}},
                'cacheRetention.maxSize: expected a size like "10G" or a positive number of bytes',
            )
            for value in (0, -5, False, None)
        ),
        ({"affectedBase": ""}, "affectedBase: expected a non-empty git revision"),
        ({"plugins": "a:b"}, 'plugins: expected a list of strings, not a string: write ["a:b"]'),
        *(
            (
                {"plugins": [value]},
                (
                    f'plugins[0]: {json.dumps(value)} is not "module:factory" '
                    "(a Python module and a callable in it)"
                ),
            )
            for value in ("plugin", "a:", ":b", "a b:c", "a.:b", "1a:b", "a:b:c")
        ),
    ],
)
def test_workspace_refusals(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_workspace_config(raw, WS)
    assert caught.value.message == f"{WS}: {message}"


def cached_globs(kind: str, field: str, globs: list[str]) -> dict[str, object]:
    return task({"exec": "x", "cache": {kind: {field: globs}}})


_CLIMB_HINTS = {
    ("inputs", "files"): (
        "project directory",
        (
            "list files elsewhere in the workspace under inputs.workspaceFiles, "
            "relative to the workspace root"
        ),
    ),
    ("inputs", "workspaceFiles"): (
        "workspace root",
        "only files inside the workspace can be inputs: drop it",
    ),
    ("outputs", "files"): (
        "project directory",
        (
            "vx cleans outputs before each run; list outputs elsewhere in the workspace under "
            "outputs.workspaceFiles, relative to the workspace root"
        ),
    ),
    ("outputs", "workspaceFiles"): (
        "workspace root",
        (
            "vx cleans outputs before each run and never outside the workspace: write the task's "
            "outputs inside it"
        ),
    ),
}


@pytest.mark.parametrize(("kind", "field"), sorted(_CLIMB_HINTS))
@pytest.mark.parametrize(
    "glob",
    ["../lib/**", "../../**", "../../../*.txt", "!../x", "a/../../x", "a/..", "..", "{..,a}/b"],
)
def test_a_glob_that_climbs_is_refused_with_what_to_do(kind: str, field: str, glob: str) -> None:
    base, hint = _CLIMB_HINTS[kind, field]
    with pytest.raises(ConfigError) as caught:
        parse_project_config(cached_globs(kind, field, ["src/**", glob]), PATH)
    assert caught.value.message == (
        f"{PATH}: tasks.build.cache.{kind}.{field}[1]: {json.dumps(glob)} reaches outside the "
        f'{base} through ".." — {hint}'
    )


@pytest.mark.parametrize("glob", ["...", "a..b/**", "..x/*", "x../y", "dist/.x"])
def test_dots_that_do_not_climb_are_names(glob: str) -> None:
    config = parse_project_config(cached_globs("outputs", "files", [glob]), PATH)
    assert config.tasks["build"].cache_spec is not None
    assert config.tasks["build"].cache_spec.outputs.files == (glob,)


@pytest.mark.parametrize(
    ("exec_fields", "message"),
    [
        ({"timeout": 1e30}, "timeout: expected a positive integer of at most 2147483647 ms"),
        ({"timeout": 10**30}, "timeout: expected a positive integer of at most 2147483647 ms"),
        ({"timeout": 2**31}, "timeout: expected a positive integer of at most 2147483647 ms"),
        ({"timeout": float("inf")}, "timeout: expected a positive integer"),
        ({"timeout": float("nan")}, "timeout: expected a positive integer"),
        ({"retries": 101}, "retries: expected a non-negative integer of at most 100"),
        ({"retries": 1e30}, "retries: expected a non-negative integer of at most 100"),
        ({"retries": float("-inf")}, "retries: expected a non-negative integer"),
    ],
)
def test_huge_and_odd_numbers_are_refused(exec_fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_project_config(task({"exec": {"command": "x", **exec_fields}}), PATH)
    assert caught.value.message.startswith(f"{PATH}: tasks.build.exec.{message}")


def test_the_largest_numbers_are_accepted() -> None:
    config = parse_project_config(
        task({"exec": {"command": "x", "timeout": 2**31 - 1, "retries": 100}}), PATH
    )
    spec = config.tasks["build"].exec_spec
    assert spec is not None
    assert (spec.timeout_ms, spec.retries) == (2**31 - 1, 100)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"timeout": 1e30}, "timeout: expected a positive integer of at most 2147483647 ms"),
        ({"concurrency": 1e30}, "concurrency: expected a positive integer of at most 2**53"),
        ({"concurrency": "9" * 5000 + "%"}, 'concurrency: "99999'),
        ({"cacheRetention": {"maxSize": 1e30}}, "cacheRetention.maxSize: expected a positive"),
        ({"cacheRetention": {"maxSize": "9" * 5000 + "G"}}, 'cacheRetention.maxSize: "9999'),
        ({"cacheRetention": {"maxSize": "8193T"}}, 'cacheRetention.maxSize: "8193T" is too'),
        ({"cacheRetention": {"olderThan": "9" * 5000 + "d"}}, "cacheRetention.olderThan: "),
    ],
)
def test_huge_workspace_numbers_are_refused(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_workspace_config(raw, WS)
    text = caught.value.message.replace(str(2**53), "2**53")
    assert text.startswith(f"{WS}: {message}")
    assert len(text) < 200


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (task({"exec": "echo \0"}), "tasks.build.exec: holds a NUL character"),
        (task({"exec": "echo \ud800"}), "tasks.build.exec: holds a lone surrogate"),
        ({"tasks": {"a\0b": {"exec": "x"}}}, 'tasks."a\\u0000b": holds a NUL character'),
        ({"tasks": {"a\ud800": {"exec": "x"}}}, 'tasks."a\\ud800": holds a lone surrogate'),
        (cached_globs("outputs", "files", ["di\0st/**"]), "tasks.build.cache.outputs.files[0]"),
        (task({"exec": "x", "description": "\0"}), "tasks.build.description: holds a NUL"),
        (
            task({"exec": {"command": "x", "env": {"define": {"A": "\0"}}}}),
            "tasks.build.exec.env.define.A: holds a NUL",
        ),
    ],
)
def test_text_that_no_process_can_take_is_refused(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_project_config(raw, PATH)
    assert caught.value.message.startswith(f"{PATH}: {message}")
    caught.value.message.encode("utf-8")  # printable as it is


@pytest.mark.parametrize(
    "raw",
    [
        {"tasks": {"x" * 10_000 + " y": {"exec": "x"}}},
        {"tasks": {"x" * 10_000: {"exec": {"comand": "x"}}}},
        {"tasks": {"build": {"x" * 10_000: 1}}},
        task({"exec": "x", "dependsOn": ["a b" * 5_000]}),
        task({"exec": "x", "cache": {"outputs": {"files": ["../" * 5_000]}}}),
        task({"exec": {"command": "x", "persistent": True, "readyWhen": "(" * 10_000}}),
    ],
)
def test_long_names_are_cut_in_the_refusal(raw: object) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_project_config(raw, PATH)
    assert "…" in caught.value.message
    assert len(caught.value.message) < 400


def test_a_program_s_odd_key_is_shown_by_a_short_repr() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_project_config({"tasks": {("x",) * 10_000: {"exec": "x"}}}, PATH)
    assert caught.value.message == (
        f"{PATH}: tasks: task names must be strings, got ('x', 'x', 'x', 'x', 'x', 'x', ...)"
    )


def test_a_deeply_nested_value_of_a_program_is_refused_shortly() -> None:
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    raw = {"tasks": {"build": {"exec": "x", "dependsOn": deep}}}
    with pytest.raises(ConfigError) as caught:
        parse_project_config(raw, PATH)
    assert caught.value.message == f"{PATH}: tasks.build.dependsOn[0]: expected a string"
