"""The text of the configs `vx init` writes, in JSON (with comments), TOML or Python.

Each format carries the same tasks and the same TODO comments; the suggested cache block
is a comment line that becomes a valid field of its task when uncommented.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vx.adopt.init_tasks import TaskDraft

TODO_TAG = "TODO(vx init)"
SCRIPTS_TITLE = "Tasks from package.json scripts, written by vx init"
WORKSPACE_TITLE = "Tasks every package of the workspace runs, written by vx init"
_BARE_TOML_KEY = re.compile(r"[A-Za-z0-9_-]+")
_PY_PACKAGE = "_package"

Value = str | bool | list[str] | dict[str, "Value"]


def _string(text: str) -> str:
    """A double-quoted string all three formats read alike (JSON escapes; no `\\/`)."""
    return json.dumps(text, ensure_ascii=False)


def _key(key: str, fmt: str) -> str:
    if fmt == "toml" and _BARE_TOML_KEY.fullmatch(key):
        return key
    return _string(key)


def inline(value: Value | _Live, fmt: str) -> str:
    """One value on one line in the format's syntax."""
    if isinstance(value, _Live):
        return f"{_PY_PACKAGE}[{_string(value.field)}]" if fmt == "py" else _string(value.copy)
    if isinstance(value, bool):
        if fmt == "py":
            return "True" if value else "False"
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(inline(v, fmt) for v in value) + "]"
    sep = " = " if fmt == "toml" else ": "
    items = ", ".join(f"{_key(k, fmt)}{sep}{inline(v, fmt)}" for k, v in value.items())
    return "{ " + items + " }" if fmt == "toml" else "{" + items + "}"


class _Live:
    """A define value a `.py` config reads from package.json; the other formats copy it."""

    __slots__ = ("copy", "field")

    def __init__(self, field: str, copy: str) -> None:
        self.field = field
        self.copy = copy


def _fields(task: TaskDraft) -> list[tuple[str, Value | _Live]]:
    fields: list[tuple[str, Value | _Live]] = []
    if task.depends_on:
        fields.append(("dependsOn", list(task.depends_on)))
    if task.command is None:
        return fields
    cache = [("cache", _value(task.cache))] if task.cache is not None else []
    if not task.persistent and not task.define:
        fields.append(("exec", task.command))
        return fields + cache
    spec: dict[str, Value] = {"command": task.command}
    if task.define:
        define: dict[str, Value] = {}
        for var, value, live in task.define:
            define[var] = _Live(live, value) if live else value  # type: ignore[assignment]
        spec["env"] = {"define": define}
    if task.persistent:
        spec["persistent"] = True
    fields.append(("exec", spec))
    return fields + cache


def _value(value: object) -> Value:
    """A plain JSON value of strings, lists and objects (a cache block) as a `Value`."""
    if isinstance(value, str | bool):
        return value
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items()}
    raise TypeError(f"not a config value: {value!r}")


def _comments(task: TaskDraft, fmt: str) -> list[str]:
    mark = "//" if fmt == "json" else "#"
    lines = [f"{mark} not cached: {task.uncached}"] if task.uncached else []
    for todo in task.todos:
        detail = f" ({todo.detail})" if todo.detail else ""
        lines.append(f"{mark} {TODO_TAG}: {todo.reason}{detail}")
    if task.outputs is not None:
        block: dict[str, Value] = {"outputs": {"files": list(task.outputs)}}
        sep = " = " if fmt == "toml" else ": "
        tail = "" if fmt == "toml" else ","
        lines.append(f"{mark} {_key('cache', fmt)}{sep}{inline(block, fmt)}{tail}")
    return lines


def uses_live(tasks: Sequence[TaskDraft]) -> bool:
    """Some task defines a variable read from package.json."""
    return any(live for t in tasks for _, _, live in t.define)


def render_project(
    tasks: Sequence[TaskDraft], fmt: str, *, manifest_name: str, title: str = SCRIPTS_TITLE
) -> str:
    """A project config declaring `tasks`, with each task's TODOs above its fields. `title`
    heads a TOML or `.py` file (JSON has no comment at the top, where editors read `$schema`)."""
    if fmt == "toml":
        return _toml(tasks, title)
    indent = "    " if fmt == "py" else "  "
    out: list[str] = []
    if fmt == "py":
        out.append(f'"""{title}."""')
        out.append("")
        if uses_live(tasks):
            out += ["import json", "import pathlib", ""]
            out.append(
                f"{_PY_PACKAGE} = json.loads((pathlib.Path(__file__).parent"
                f" / {_string(manifest_name)}).read_text(encoding='utf-8'))"
            )
            out.append("")
        out.append("config = {")
    else:
        out.append("{")
    out.append(f'{indent}"tasks": {{')
    for i, task in enumerate(tasks):
        pad = indent * 2
        out.append(f"{pad}{_string(task.name)}: {{")
        out += [f"{pad}{indent}{line}" for line in _comments(task, fmt)]
        fields = _fields(task)
        for j, (key, value) in enumerate(fields):
            comma = "," if fmt == "py" or j < len(fields) - 1 else ""
            out.append(f"{pad}{indent}{_string(key)}: {inline(value, fmt)}{comma}")
        comma = "," if fmt == "py" or i < len(tasks) - 1 else ""
        out.append(f"{pad}}}{comma}")
    out.append(f"{indent}}}" + ("," if fmt == "py" else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _toml(tasks: Sequence[TaskDraft], title: str) -> str:
    out = [f"# {title}."]
    for task in tasks:
        out.append("")
        out.append(f"[tasks.{_key(task.name, 'toml')}]")
        out += _comments(task, "toml")
        out += [f"{_key(k, 'toml')} = {inline(v, 'toml')}" for k, v in _fields(task)]
    if not tasks:
        out.append("[tasks]")
    return "\n".join(out) + "\n"


def render_workspace(fmt: str, tasks: Sequence[TaskDraft] = ()) -> str:
    """The workspace file: every default, and the tasks every package shares when there are
    some (a uv workspace's), else an empty plugin list to start from."""
    if tasks:
        return render_project(tasks, fmt, manifest_name="", title=WORKSPACE_TITLE)
    if fmt == "toml":
        return "plugins = []\n"
    if fmt == "py":
        return 'config = {"plugins": []}\n'
    return '{ "plugins": [] }\n'
