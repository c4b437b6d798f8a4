"""The JSON Schemas editors validate configs with agree with the loader: accepts ⇔ loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from vx.errors import ConfigError
from vx.workspace import config_root, config_schema
from vx.workspace.config_root import parse_workspace_config
from vx.workspace.config_schema import parse_project_config

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def loads(parse: Any, raw: object) -> bool:
    try:
        parse(raw, "vx.config.json")
    except ConfigError:
        return False
    return True


def build(**body: Any) -> dict[str, Any]:
    return {"tasks": {"build": body}}


def run(**fields: Any) -> dict[str, Any]:
    return build(exec={"command": "make", **fields})


def cached(**cache: Any) -> dict[str, Any]:
    return build(exec="make", cache=cache)


PROJECT_VALID = [
    {},
    {"$schema": "../../schemas/config.json"},
    {"tags": ["scope:web", "type:app"], "tasks": {}},
    build(exec="tsc -b"),
    build(dependsOn=["^build", "codegen", "other-pkg#gen", "//#lint", "@scope/ui#build"]),
    build(exec="x", description=""),
    run(env={"passThrough": ["NODE_OPTIONS"], "define": {"NODE_ENV": "production"}}),
    run(env={"secret": ["NPM_TOKEN"], "define": {}}),
    run(timeout=600000, retries=0),
    run(timeout=1.0e3),
    run(persistent=True, readyWhen=r"ready in \d+ms"),
    run(persistent=True, interactive=False),
    run(interactive=True),
    cached(),
    cached(inputs={"files": ["src/**", "!src/**/*.test.ts"], "workspaceFiles": ["tsconfig.json"]}),
    cached(inputs={"env": ["API_URL"], "tasks": ["^build"], "runtime": ["node --version"]}),
    cached(
        inputs={"workspaceRuntime": ["uv --version"]}, outputs={"files": [], "workspaceFiles": []}
    ),
    cached(outputs={"files": ["dist/**", "!dist/cache/**"]}),
    cached(outputs={"files": ["...", "a..b/**", "..x", "x.."]}),
    run(timeout=2**31 - 1, retries=100),
    {"tasks": {"build:css": {"exec": "x"}, "test.unit": {"exec": "y"}, "a^b": {"exec": "z"}}},
]

PROJECT_INVALID = [
    [],
    "tasks",
    {"$schema": 1},
    {"taks": {}},
    {"tags": "web"},
    {"tags": ["a b"]},
    {"tags": [""]},
    {"tasks": []},
    {"tasks": {"": {"exec": "x"}}},
    {"tasks": {"a#b": {"exec": "x"}}},
    {"tasks": {"^a": {"exec": "x"}}},
    {"tasks": {"a b": {"exec": "x"}}},
    {"tasks": {"build": "make"}},
    build(exec="x", extra=1),
    build(exec="x", description=None),
    build(),
    build(dependsOn=[]),
    build(dependsOn=["a"], cache={}),
    build(exec="x", dependsOn="a"),
    *(build(exec="x", dependsOn=[ref]) for ref in ("", "^", "^a#b", "a#", "#a", "a#b#c", "a b")),
    build(exec=""),
    build(exec=" "),
    build(exec=None),
    build(exec=["make"]),
    build(exec={}),
    build(exec={"comand": "make"}),
    run(timeout=0),
    run(timeout=1.5),
    run(timeout="600"),
    run(timeout=True),
    run(retries=-1),
    run(persistent="yes"),
    run(interactive=1),
    run(readyWhen="ready"),
    run(readyWhen="ready", persistent=False),
    run(readyWhen="ready (", persistent=True),
    run(readyWhen="", persistent=True),
    run(persistent=True, interactive=True),
    run(env={"pass_through": []}),
    run(env={"passThrough": ["A B"]}),
    run(env={"secret": [""]}),
    run(env={"define": {"PORT": 3000}}),
    run(env={"define": {"A=B": "1"}}),
    run(env={"define": ["A=1"]}),
    cached(input={}),
    cached(inputs={"files": ["/abs"]}),
    cached(inputs={"files": "src/**"}),
    cached(inputs={"runtime": [""]}),
    cached(inputs={"tasks": ["^"]}),
    cached(outputs={"files": [""]}),
    cached(outputs={"workspaceFiles": ["!"]}),
    cached(outputs={"files": ["!/abs"]}),
    cached(outputs={"dirs": []}),
    *(
        cached(**{kind: {field: [glob]}})
        for kind in ("inputs", "outputs")
        for field in ("files", "workspaceFiles")
        for glob in ("../lib/**", "../../**", "!../x", "a/../../x", "a/..", "..")
    ),
    run(timeout=2**31),
    run(timeout=1e30),
    run(retries=101),
    run(retries=10**30),
]

WORKSPACE_VALID = [
    {},
    {"$schema": "./node_modules/vx/schemas/workspace.json"},
    {"cacheDir": ".cache/vx"},
    {"cacheDir": "/var/cache/vx"},
    {"concurrency": 8},
    {"concurrency": "50%"},
    {"concurrency": "250%"},
    {"concurrency": 4.0},
    {"timeout": 900000},
    {"timeout": 2**31 - 1},
    {"concurrency": 2**53},
    {"cacheRetention": {"maxSize": 2**53}},
    {"cacheRetention": {}},
    {"cacheRetention": {"olderThan": "30d", "maxSize": "10G"}},
    {"cacheRetention": {"olderThan": "45s", "maxSize": "500MB"}},
    {"cacheRetention": {"olderThan": "12H", "maxSize": "4096b"}},
    {"cacheRetention": {"maxSize": 1073741824}},
    {"affectedBase": "origin/main"},
    {"passThrough": ["SSH_AUTH_SOCK", "AWS_*"]},
    {"plugins": []},
    {"plugins": ["vx_docker:plugin", "acme.vx.plugins:make.factory"]},
    {"tasks": {}},
    {"tasks": {"build": {"exec": "uv build", "cache": {"outputs": {"files": ["dist/**"]}}}}},
    {"tasksFrom": "turbo"},
]

WORKSPACE_INVALID = [
    [],
    {"$schema": None},
    {"cachedir": "x"},
    {"cacheDir": ""},
    {"cacheDir": "  "},
    {"concurrency": 0},
    {"concurrency": -1},
    {"concurrency": True},
    {"concurrency": 2.5},
    {"concurrency": "50"},
    {"concurrency": "0%"},
    {"concurrency": "05%"},
    {"concurrency": "50 %"},
    {"concurrency": "50%\n"},
    {"timeout": 0},
    {"timeout": 2**31},
    {"timeout": 1e30},
    {"concurrency": 2**53 + 1},
    {"concurrency": 1e30},
    {"cacheRetention": {"maxSize": 1e30}},
    {"timeout": "10m"},
    {"cacheRetention": "30d"},
    {"cacheRetention": {"maxsize": "1G"}},
    {"cacheRetention": {"olderThan": "30 days"}},
    {"cacheRetention": {"olderThan": "0d"}},
    {"cacheRetention": {"olderThan": "1w"}},
    {"cacheRetention": {"olderThan": 30}},
    {"cacheRetention": {"maxSize": "10"}},
    {"cacheRetention": {"maxSize": "1.5G"}},
    {"cacheRetention": {"maxSize": 0}},
    {"cacheRetention": {"maxSize": False}},
    {"affectedBase": ""},
    {"passThrough": "AWS_*"},
    {"passThrough": ["A=B"]},
    {"passThrough": [""]},
    {"plugins": "a:b"},
    {"plugins": ["plugin"]},
    {"plugins": ["a:b:c"]},
    {"plugins": ["a b:c"]},
    {"tasks": {"build": {}}},
    {"tasks": {"a#b": {"exec": "x"}}},
    {"tasks": {"build": {"exec": "x"}}, "tasksFrom": "turbo"},
]


def test_the_tables_are_big_enough() -> None:
    for table in (PROJECT_VALID, PROJECT_INVALID, WORKSPACE_VALID, WORKSPACE_INVALID):
        assert len(table) >= 10


@pytest.mark.parametrize("raw", PROJECT_VALID)
def test_valid_project_configs_pass_both(raw: object) -> None:
    assert validator("config.json").is_valid(raw)
    assert loads(parse_project_config, raw)


@pytest.mark.parametrize("raw", PROJECT_INVALID)
def test_invalid_project_configs_fail_both(raw: object) -> None:
    assert not validator("config.json").is_valid(raw)
    assert not loads(parse_project_config, raw)


@pytest.mark.parametrize("raw", WORKSPACE_VALID)
def test_valid_workspace_configs_pass_both(raw: object) -> None:
    assert validator("workspace.json").is_valid(raw)
    assert loads(parse_workspace_config, raw)


@pytest.mark.parametrize("raw", WORKSPACE_INVALID)
def test_invalid_workspace_configs_fail_both(raw: object) -> None:
    assert not validator("workspace.json").is_valid(raw)
    assert not loads(parse_workspace_config, raw)


def test_workspace_tasks_share_the_project_task_schema() -> None:
    """workspace.json's `tasks` are config.json's: one set of definitions, copied whole."""
    project = json.loads((SCHEMAS / "config.json").read_text())
    workspace = json.loads((SCHEMAS / "workspace.json").read_text())
    assert workspace["$defs"] == project["$defs"]


def _properties(schema: dict[str, Any], pointer: str) -> tuple[str, ...]:
    node: Any = schema
    for part in pointer.split("/"):
        node = node[part] if part else node
    return tuple(key for key in node["properties"] if key != "$schema")


@pytest.mark.parametrize(
    ("name", "pointer", "fields"),
    [
        ("config.json", "", config_schema.PROJECT_FIELDS),
        ("config.json", "$defs/task", config_schema.TASK_FIELDS),
        ("config.json", "$defs/exec", config_schema.EXEC_FIELDS),
        ("config.json", "$defs/env", config_schema.ENV_FIELDS),
        ("config.json", "$defs/sandbox", config_schema.SANDBOX_FIELDS),
        ("config.json", "$defs/sandbox/properties/allow", config_schema.ALLOW_FIELDS),
        ("config.json", "$defs/cache", config_schema.CACHE_FIELDS),
        ("config.json", "$defs/cache/properties/inputs", config_schema.INPUT_FIELDS),
        ("config.json", "$defs/cache/properties/outputs", config_schema.OUTPUT_FIELDS),
        ("workspace.json", "", config_root.WORKSPACE_FIELDS),
        ("workspace.json", "properties/cacheRetention", config_root.RETENTION_FIELDS),
    ],
)
def test_schema_fields_are_the_loader_fields(
    name: str, pointer: str, fields: tuple[str, ...]
) -> None:
    schema = json.loads((SCHEMAS / name).read_text())
    assert _properties(schema, pointer) == fields


@pytest.mark.parametrize(
    "name",
    [
        "config.json",
        "workspace.json",
        "plan.json",
        "shard-plan.json",
        "info.json",
        "cache.json",
        "init.json",
        "lock.json",
        "vx-lock.json",
    ],
)
def test_every_object_in_the_schemas_is_closed(name: str) -> None:
    """Records refuse unknown fields; maps (tasks, env.define) say what each value must be."""

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, where
            elif node.get("type") == "object":
                assert isinstance(node.get("additionalProperties"), dict), where
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(json.loads((SCHEMAS / name).read_text()), name)
