"""Reading manifests: package.json, pyproject.toml, and pnpm-workspace.yaml's `packages:`."""

from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vx.errors import ConfigError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

PACKAGE_JSON = "package.json"
PYPROJECT = "pyproject.toml"
PNPM_WORKSPACE = "pnpm-workspace.yaml"

JS_DEPENDENCY_FIELDS = (
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
)

WORKSPACE_SOURCE = "workspace"

# Fields that list what a package needs to be tested or used beside, not to be built: an edge
# only these make counts for selection alone where it would close a cycle.
PYTHON_GROUP_FIELD = "[dependency-groups]"
PYTHON_DEV_FIELD = "[tool.uv] dev-dependencies"
JS_WEAK_FIELDS = ("devDependencies", "peerDependencies")

_PEP508_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_PEP503_RUN = re.compile(r"[-_.]+")
_FLOW_ITEM = re.compile(r"""\s*('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^,'"]*?)\s*(?:,|\Z)""")


class Manifest(Record):
    """What vx needs from one package manifest.

    `workspaces` is the member glob list the file declares (uv's `exclude` entries come back
    as `!` globs), or None when the file declares no workspace at all. `dependency_fields`
    names, per dependency, the fields that list it (`devDependencies`, `[dependency-groups]
    test`): an edge only test or peer fields make may give way to break a cycle.
    """

    file: str
    name: str | None = None
    version: str | None = None
    dependencies: Mapping[str, str] = MappingProxyType({})
    workspaces: tuple[str, ...] | None = None
    dependency_fields: Mapping[str, tuple[str, ...]] = MappingProxyType({})


def normalize_python_name(name: str) -> str:
    """PEP 503: `My_Pkg.x` and `my-pkg-x` are one distribution."""
    return _PEP503_RUN.sub("-", name).lower()


def _read_text(path: Path, shown: str) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(shown, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(shown, f"cannot be read ({exc.strerror})") from None


def load_json_object(path: Path, shown: str) -> dict[str, Any]:
    """A JSON file whose top level must be an object; `shown` names it in refusals."""
    try:
        raw = json.loads(_read_text(path, shown))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            shown, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (RecursionError, ValueError) as exc:
        raise ConfigError(shown, _unreadable(exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(shown, "expected a JSON object at the top level")
    return raw


def load_toml(path: Path, shown: str) -> dict[str, Any]:
    """A TOML file as a dict; `shown` names it in refusals."""
    import tomllib  # an npm workspace's warm run never needs it

    try:
        return tomllib.loads(_read_text(path, shown))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(shown, f"not valid TOML: {exc}") from None
    except (RecursionError, ValueError) as exc:
        raise ConfigError(shown, _unreadable(exc)) from None


def _unreadable(exc: Exception) -> str:
    """What a parser raises past its syntax errors: nesting past the stack, or a huge number."""
    if isinstance(exc, RecursionError):
        return "nests lists or objects too deeply to read"
    return "holds a number too long to read (over 4300 digits)"


def _string_list(value: Any, shown: str, pointer: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(shown, "expected a list of strings", pointer)
    return tuple(value)


def _optional_string(raw: Mapping[str, Any], key: str, shown: str, pointer: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(shown, "expected a string", pointer)
    return value or None


def package_json_workspaces(raw: Mapping[str, Any], shown: str) -> tuple[str, ...] | None:
    """The `workspaces` globs, from the array form or Yarn's `{"packages": [...]}` form."""
    if "workspaces" not in raw:
        return None
    value = raw["workspaces"]
    if isinstance(value, dict):
        return _string_list(value.get("packages", []), shown, "workspaces.packages")
    if isinstance(value, list):
        return _string_list(value, shown, "workspaces")
    raise ConfigError(shown, 'expected a list of globs or {"packages": [...]}', "workspaces")


def read_package_json(path: Path, shown: str) -> Manifest:
    """A package.json: name, version, every dependency field merged, and its `workspaces`."""
    raw = load_json_object(path, shown)
    deps: dict[str, str] = {}
    fields: dict[str, list[str]] = {}
    for key in JS_DEPENDENCY_FIELDS:
        table = raw.get(key)
        if isinstance(table, dict):
            for dep, spec in table.items():
                if isinstance(spec, str):
                    deps.setdefault(dep, spec)
                    fields.setdefault(dep, []).append(key)
    return Manifest(
        file=PACKAGE_JSON,
        name=_optional_string(raw, "name", shown, "name"),
        version=_optional_string(raw, "version", shown, "version"),
        dependencies=MappingProxyType(deps),
        workspaces=package_json_workspaces(raw, shown),
        dependency_fields=_frozen_fields(fields),
    )


def _requirement(text: str) -> tuple[str, str] | None:
    """A PEP 508 requirement split into its normalized name and the rest (`*` when bare)."""
    found = _PEP508_NAME.match(text)
    if found is None:
        return None
    rest = text[found.end() :].strip()
    return normalize_python_name(found.group(1)), rest or "*"


def _table(raw: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """The nested table at `keys`, or an empty one when any step is missing or no table."""
    current: Any = raw
    for key in keys:
        current = current.get(key) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else {}


def _frozen_fields(fields: Mapping[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({dep: tuple(dict.fromkeys(f)) for dep, f in fields.items()})


def _python_requirements(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every requirement string a pyproject declares, with the field that lists it.

    Runtime, extras, dependency groups and uv's dev deps all count: a member that tests
    against another member lists it in a group or under `[tool.uv] dev-dependencies`, and
    those are workspace edges as much as runtime ones. The field is spelled as the TOML reads.
    """
    project = _table(raw, "project")
    lists: list[tuple[str, Any]] = [
        ("[project] dependencies", project.get("dependencies")),
        *(
            (f"[project.optional-dependencies] {extra}", group)
            for extra, group in _table(project, "optional-dependencies").items()
        ),
        *(
            (f"{PYTHON_GROUP_FIELD} {name}", group)
            for name, group in _table(raw, "dependency-groups").items()
        ),
        (PYTHON_DEV_FIELD, _table(raw, "tool", "uv").get("dev-dependencies")),
    ]
    return [
        (where, r)
        for where, group in lists
        if isinstance(group, list)
        for r in group
        if isinstance(r, str)
    ]


def uv_workspace(raw: Mapping[str, Any], shown: str) -> tuple[str, ...] | None:
    """`[tool.uv.workspace]` as one glob list: `members`, then `exclude` entries as `!` globs."""
    table = _table(raw, "tool", "uv").get("workspace")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(shown, "expected a table", "tool.uv.workspace")
    members = _string_list(table.get("members", []), shown, "tool.uv.workspace.members")
    exclude = _string_list(table.get("exclude", []), shown, "tool.uv.workspace.exclude")
    return (*members, *(f"!{e}" for e in exclude))


def read_pyproject(path: Path, shown: str) -> Manifest:
    """A pyproject.toml: `[project]` name and version, requirements by name, its uv workspace."""
    raw = load_toml(path, shown)
    project = _table(raw, "project")
    deps: dict[str, str] = {}
    fields: dict[str, list[str]] = {}
    for where, text in _python_requirements(raw):
        parsed = _requirement(text)
        if parsed is not None:
            deps.setdefault(*parsed)
            fields.setdefault(parsed[0], []).append(where)
    for dep, source in _table(raw, "tool", "uv", "sources").items():
        key = normalize_python_name(dep)
        if key in deps and isinstance(source, dict) and source.get("workspace") is True:
            deps[key] = WORKSPACE_SOURCE
    return Manifest(
        file=PYPROJECT,
        name=_optional_string(project, "name", shown, "project.name"),
        version=_optional_string(project, "version", shown, "project.version"),
        dependencies=MappingProxyType(deps),
        workspaces=uv_workspace(raw, shown),
        dependency_fields=_frozen_fields(fields),
    )


def _unquote(item: str, shown: str, line: int) -> str:
    """One YAML scalar as pnpm-workspace.yaml writes a glob: bare, 'single' or "double"."""
    if item[:1] == "'":
        end = item.find("'", 1)
        while end != -1 and item[end + 1 : end + 2] == "'":
            end = item.find("'", end + 2)
        if end == -1:
            raise ConfigError(shown, f"line {line}: unterminated quote", "packages")
        return item[1:end].replace("''", "'")
    if item[:1] == '"':
        found = re.match(r'"((?:[^"\\]|\\.)*)"', item)
        if found is None:
            raise ConfigError(shown, f"line {line}: unterminated quote", "packages")
        return re.sub(r"\\(.)", r"\1", found.group(1))
    return re.split(r"\s+#", item, maxsplit=1)[0].strip()


def _flow_items(text: str, shown: str, line: int) -> list[str]:
    """The items of a one-line flow sequence: `['a/*', "b/*", c]`."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise ConfigError(shown, f"line {line}: expected a list of globs", "packages")
    inner = body[1:-1]
    items: list[str] = []
    pos = 0
    while pos < len(inner):
        found = _FLOW_ITEM.match(inner, pos)
        if found is None or found.end() == pos:
            raise ConfigError(shown, f"line {line}: expected a list of globs", "packages")
        token = found.group(1)
        if token:
            items.append(_unquote(token, shown, line))
        pos = found.end()
    return items


def parse_pnpm_packages(text: str, shown: str) -> tuple[str, ...] | None:
    """The `packages:` list of a pnpm-workspace.yaml, read without a YAML library.

    Only that top-level key is read: a block list (`- 'packages/*'`, at any indentation) or a
    one-line flow list. Other keys (`catalog:`, `onlyBuiltDependencies:`) are skipped. None
    means the key is absent: pnpm 10 keeps settings in this file for single-package repos too.
    """
    found: list[str] = []
    present = False
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped in {"---", "..."}:
            continue
        top_level = not line[:1].isspace() and not stripped.startswith("-")
        if top_level:
            key, colon, value = stripped.partition(":")
            inside = colon == ":" and key.strip().strip("'\"") == "packages"
            present = present or inside
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
            if inside and value:
                return tuple(_flow_items(value, shown, number))
            continue
        if inside:
            if not stripped.startswith("-"):
                raise ConfigError(shown, f"line {number}: expected `- <glob>`", "packages")
            item = _unquote(stripped[1:].strip(), shown, number)
            if item:
                found.append(item)
    return tuple(found) if present else None


def read_pnpm_packages(path: Path, shown: str) -> tuple[str, ...] | None:
    """The member globs a pnpm-workspace.yaml lists; None when it lists none at all."""
    return parse_pnpm_packages(_read_text(path, shown), shown)
