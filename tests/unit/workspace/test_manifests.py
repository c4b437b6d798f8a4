"""Reading package.json, pyproject.toml and pnpm-workspace.yaml's `packages:` list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vx.errors import ConfigError, ErrorCode
from vx.workspace.manifests import (
    WORKSPACE_SOURCE,
    normalize_python_name,
    parse_pnpm_packages,
    read_package_json,
    read_pyproject,
)

if TYPE_CHECKING:
    from pathlib import Path


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_package_json_merges_every_dependency_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "package.json",
        """{"name": "app", "version": "1.2.3",
            "dependencies": {"a": "workspace:*", "left-pad": "^1"},
            "devDependencies": {"b": "^2.0.0"},
            "peerDependencies": {"c": "*", "a": "^9"},
            "optionalDependencies": {"d": "file:../d", "bad": 3}}""",
    )
    manifest = read_package_json(path, "package.json")
    assert (manifest.file, manifest.name, manifest.version) == ("package.json", "app", "1.2.3")
    assert dict(manifest.dependencies) == {
        "a": "workspace:*",
        "left-pad": "^1",
        "b": "^2.0.0",
        "c": "*",
        "d": "file:../d",
    }
    assert manifest.workspaces is None


@pytest.mark.parametrize(
    ("workspaces", "expected"),
    [
        (["packages/*", "apps/*"], ("packages/*", "apps/*")),
        ({"packages": ["packages/*"], "nohoist": ["**/x"]}, ("packages/*",)),
        ({"nohoist": ["**/x"]}, ()),
        ([], ()),
    ],
)
def test_package_json_workspaces_forms(tmp_path: Path, workspaces: Any, expected: Any) -> None:
    import json

    path = write(tmp_path, "package.json", json.dumps({"workspaces": workspaces}))
    assert read_package_json(path, "package.json").workspaces == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{",
            "package.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
        ),
        ("[]", "package.json: expected a JSON object at the top level"),
        ('{"name": 5}', "package.json: name: expected a string"),
        (
            '{"workspaces": "packages/*"}',
            'package.json: workspaces: expected a list of globs or {"packages": [...]}',
        ),
        ('{"workspaces": ["a", 1]}', "package.json: workspaces: expected a list of strings"),
        (
            '{"workspaces": {"packages": "a"}}',
            "package.json: workspaces.packages: expected a list of strings",
        ),
    ],
)
def test_package_json_refusals(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "package.json", text)
    with pytest.raises(ConfigError) as caught:
        read_package_json(path, "package.json")
    assert caught.value.message == message
    assert caught.value.code is ErrorCode.CONFIG


def test_package_json_with_bom_and_blank_name(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_bytes(b'\xef\xbb\xbf{"name": ""}')
    assert read_package_json(path, "package.json").name is None


def test_pyproject_requirements_become_names(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "pyproject.toml",
        """
[project]
name = "My_App"
version = "0.3.0"
dependencies = [
  "Requests[socks]>=2.31 ; python_version >= '3.11'",
  "shared_lib",
  "zope.interface==6.*",
  "  spaced  >= 1",
]
[project.optional-dependencies]
cli = ["click>=8"]
[dependency-groups]
dev = ["pytest>=8", {include-group = "lint"}]
lint = ["ruff"]
[tool.uv]
dev-dependencies = ["mypy"]
[tool.uv.sources]
shared-lib = { workspace = true }
click = { git = "https://example.invalid/click" }
undeclared = { workspace = true }
""",
    )
    manifest = read_pyproject(path, "pyproject.toml")
    assert (manifest.file, manifest.name, manifest.version) == ("pyproject.toml", "My_App", "0.3.0")
    assert dict(manifest.dependencies) == {
        "requests": "[socks]>=2.31 ; python_version >= '3.11'",
        "shared-lib": WORKSPACE_SOURCE,
        "zope-interface": "==6.*",
        "spaced": ">= 1",
        "click": ">=8",
        "pytest": ">=8",
        "ruff": "*",
        "mypy": "*",
    }
    assert manifest.workspaces is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tool.uv.workspace]\nmembers = ["packages/*"]', ("packages/*",)),
        (
            '[tool.uv.workspace]\nmembers = ["packages/*", "libs/*"]\nexclude = ["packages/seeds"]',
            ("packages/*", "libs/*", "!packages/seeds"),
        ),
        ("[tool.uv.workspace]\n", ()),
        ('[tool.uv]\npackage = false\n[project]\nname = "x"', None),
        ("tool = 3\nproject = 4\ndependency-groups = 5\n", None),
    ],
)
def test_uv_workspace_members_and_excludes(tmp_path: Path, text: str, expected: Any) -> None:
    path = write(tmp_path, "pyproject.toml", text)
    assert read_pyproject(path, "pyproject.toml").workspaces == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[project",
            "pyproject.toml: not valid TOML: Expected ']' at the end of a table declaration (at end of document)",
        ),
        ("[project]\nname = 3", "pyproject.toml: project.name: expected a string"),
        (
            '[tool.uv.workspace]\nmembers = "a"',
            "pyproject.toml: tool.uv.workspace.members: expected a list of strings",
        ),
    ],
)
def test_pyproject_refusals(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "pyproject.toml", text)
    with pytest.raises(ConfigError) as caught:
        read_pyproject(path, "pyproject.toml")
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("name", "expected"),
    [("Foo_Bar", "foo-bar"), ("foo.bar", "foo-bar"), ("foo--_.bar", "foo-bar"), ("x", "x")],
)
def test_normalize_python_name(name: str, expected: str) -> None:
    assert normalize_python_name(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("packages:\n  - 'packages/*'\n  - \"apps/**\"\n", ("packages/*", "apps/**")),
        ("packages:\n- a\n- b  # trailing comment\n", ("a", "b")),
        ("packages:\n  - '!**/test/**'\n", ("!**/test/**",)),
        ("# header\n---\npackages:\n\n  # note\n  - a\n", ("a",)),
        ("packages: ['a/*', \"b/*\", c/**]\n", ("a/*", "b/*", "c/**")),
        ("packages: []\n", ()),
        ("packages:\n  - 'it''s'\n", ("it's",)),
        ('packages:\n  - "a\\"b"\n', ('a"b',)),
        (
            "catalog:\n  react: ^18\npackages:\n  - a\nonlyBuiltDependencies:\n  - esbuild\n",
            ("a",),
        ),
        ("packages:\n", ()),
        ("catalog:\n  react: ^18\n", None),
        ("", None),
    ],
)
def test_pnpm_packages(text: str, expected: Any) -> None:
    assert parse_pnpm_packages(text, "pnpm-workspace.yaml") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("packages:\n  foo: bar\n", "pnpm-workspace.yaml: packages: line 2: expected `- <glob>`"),
        ("packages:\n  - 'open\n", "pnpm-workspace.yaml: packages: line 2: unterminated quote"),
        ("packages: a/*\n", "pnpm-workspace.yaml: packages: line 1: expected a list of globs"),
    ],
)
def test_pnpm_refusals(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_pnpm_packages(text, "pnpm-workspace.yaml")
    assert caught.value.message == message
