"""The audit's findings as edits of the config files: a unified diff to print, text to write.

Only additions: an entry a finding names is appended to its list (made if missing), and a
task with no cache block gets the block its trace suggests. A JSON config is rewritten whole
(two-space indent, as `vx init` writes it) and refused when it holds comments, which a
rewrite would drop; a TOML config is edited in place, line by line, keeping the rest of its
text; a `.py` config is code, so its changes are listed, never written.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from typing import TYPE_CHECKING, Any

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.events import AuditReport
    from vx.workspace.model import Workspace


class Edit(Record):
    """Entries to add to one list of one task: `field` is dotted under the task."""

    task: str
    field: str
    values: tuple[str, ...]


class FilePatch(Record):
    """One config file's edits; `new` is its text after them, None when vx cannot write it
    (`note` says why: a `.py` config, JSON with comments, TOML laid out past a line edit)."""

    path: Path
    shown: str
    old: str
    new: str | None
    edits: tuple[Edit, ...]
    note: str | None = None

    def diff(self) -> str:
        """The unified diff of the edit (empty when there is no new text)."""
        if self.new is None:
            return ""
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                f"a/{self.shown}",
                f"b/{self.shown}",
            )
        )


def plan_patches(ws: Workspace, reports: Mapping[str, AuditReport]) -> list[FilePatch]:
    """The patches the latest audits call for, one per config file, in project order."""
    out: list[FilePatch] = []
    for project in ws.projects:
        config = project.config
        if config is None or config.live is not None:
            continue
        edits: list[Edit] = []
        for name, task in config.tasks.items():
            if name in ws.config.tasks:
                # Declared once for every package: an entry appended to one package's list
                # would replace the workspace's whole list there (lists merge by replacing),
                # and one appended to the workspace's would reach every package. Listed only.
                continue
            report = reports.get(f"{project.name}#{name}")
            if report is not None:
                edits += _task_edits(name, report, has_cache=task.cache_spec is not None)
        if edits:
            out.append(_patch(ws.root / config.path, config.path, tuple(edits)))
    return out


def _task_edits(task: str, report: AuditReport, *, has_cache: bool) -> list[Edit]:
    wanted: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.field is not None and finding.value is not None and finding.kind != "toolchain":
            wanted.setdefault(finding.field, []).append(finding.value)
    if not has_cache and not report.uncacheable:
        for field, entries in report.suggested:
            wanted.setdefault(field, []).extend(entries)
    return [Edit(task, field, tuple(dict.fromkeys(v))) for field, v in wanted.items()]


def _patch(path: Path, shown: str, edits: tuple[Edit, ...]) -> FilePatch:
    old = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return FilePatch(path, shown, old, None, edits, "a .py config is code: edit it by hand")
    if path.suffix == ".json":
        try:
            doc = json.loads(old)
        except ValueError:
            filled = _fill_init_hints(old, shown, edits)
            if filled is not None:
                return FilePatch(path, shown, old, filled, edits)
            note = "it holds comments a rewrite would drop: edit it by hand"
            return FilePatch(path, shown, old, None, edits, note)
        for edit in edits:
            _add(doc, edit)
        return FilePatch(
            path, shown, old, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", edits
        )
    return _toml_patch(path, shown, old, edits)


def _add(doc: dict[str, Any], edit: Edit) -> None:
    node = doc.setdefault("tasks", {}).setdefault(edit.task, {})
    if isinstance(node, str):  # the command shorthand: `"build": "tsc"`
        node = doc["tasks"][edit.task] = {"exec": node}
    *parents, leaf = edit.field.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    have = node.setdefault(leaf, [])
    have.extend(v for v in edit.values if v not in have)


def _toml_patch(path: Path, shown: str, old: str, edits: tuple[Edit, ...]) -> FilePatch:
    from vx.lockfiles.tomltext import replace_array, spans, table_name

    want = tomllib.loads(old)
    text = old
    for edit in edits:
        _add(want, edit)
        *parents, leaf = edit.field.split(".")
        table = ".".join(["tasks", _key(edit.task), *parents])
        node: Any = want["tasks"][edit.task]
        for part in parents:
            node = node[part]
        values = node[leaf]
        swapped = replace_array(text, table, leaf, values)
        if swapped is None:
            lines = text.splitlines(keepends=True)
            line = f"{leaf} = {json.dumps(values, ensure_ascii=False)}\n"
            found = next((s for s in spans(lines) if s.name == table_name(f"[{table}]")), None)
            if found is not None:
                lines.insert(found.start + 1, line)
                swapped = "".join(lines)
            else:
                swapped = text + ("" if text.endswith("\n") else "\n") + f"\n[{table}]\n{line}"
        text = swapped
    try:
        same = tomllib.loads(text) == want
    except tomllib.TOMLDecodeError:
        same = False
    if not same:
        note = "its layout (inline tables) is past a line edit: edit it by hand"
        return FilePatch(path, shown, old, None, edits, note)
    return FilePatch(path, shown, old, text, edits)


def _key(name: str) -> str:
    bare = name.replace("-", "").replace("_", "").isalnum()
    return name if bare else json.dumps(name)


def _fill_init_hints(old: str, shown: str, edits: tuple[Edit, ...]) -> str | None:
    """A `vx init` config with the suggested cache blocks written where init left its
    commented hint (`// "cache": …,`), that hint's TODO dropped and every other comment kept;
    None when an edit is not a whole new block or the file is not laid out as init writes it.
    """
    from vx.adopt.init_render import TODO_TAG
    from vx.adopt.init_tasks import CACHE_REASON
    from vx.errors import ConfigError
    from vx.workspace.config_load import parse_jsonc

    blocks: dict[str, dict[str, Any]] = {}
    for edit in edits:
        if not edit.field.startswith("cache."):
            return None
        _add(blocks.setdefault(edit.task, {"tasks": {edit.task: {}}}), edit)
    lines = old.splitlines(keepends=True)
    for task, doc in blocks.items():
        opening = f"{json.dumps(task)}: {{"
        start = next((i for i, line in enumerate(lines) if line.strip() == opening), None)
        if start is None:
            return None
        hint = next((i for i in range(start + 1, len(lines)) if _is_hint(lines[i])), None)
        if hint is None or any(lines[i].strip().startswith("}") for i in range(start, hint)):
            return None
        indent = lines[hint][: len(lines[hint]) - len(lines[hint].lstrip())]
        block = json.dumps(doc["tasks"][task]["cache"])
        lines[hint] = f'{indent}"cache": {block},\n'
        todo = f"// {TODO_TAG}: {CACHE_REASON}"
        lines = [ln for i, ln in enumerate(lines) if not start < i < hint or ln.strip() != todo]
    new = "".join(lines)
    want: Any = parse_jsonc(old, shown)
    for edit in edits:
        _add(want, edit)
    try:
        return new if parse_jsonc(new, shown) == want else None
    except ConfigError:
        return None


def _is_hint(line: str) -> bool:
    return line.strip().startswith('// "cache": ')
