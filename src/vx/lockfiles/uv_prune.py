"""uv.lock cut down to what a subset of the workspace installs, so `uv sync --locked` accepts it.

Kept: the `[[package]]` entries of the kept members, and the locked packages they reach
through dependencies, extras and dependency groups (groups left out with `production`), or
that the workspace-wide `[manifest]` requirements name. The `[manifest] members` list is cut
to the kept members and `requires-python` set to what the kept members allow, since uv checks
both against the pyproject files. Every other line stays as uv wrote it.
"""

from __future__ import annotations

import json
import posixpath
import tomllib
from typing import TYPE_CHECKING, Any

from vx.lockfiles import tomltext, uv
from vx.lockfiles.model import LockfileError, linked_dir, reachable

if TYPE_CHECKING:
    from vx.lockfiles.model import LockGraph

# A kept member's lock tables that only its dependency groups fill.
_DEV_TABLES = frozenset({"package.dev-dependencies", "package.metadata.requires-dev"})


def prune_text(
    text: str, keep: set[str], *, production: bool, requires_python: str | None = None
) -> str:
    """`text` (a uv.lock) kept to the member directories `keep` (the root `.` included);
    `requires_python` replaces the top-level bound when given."""
    graph = uv.read(text)  # refuses what tomllib cannot read, nesting too deep included
    doc = tomllib.loads(text)
    wanted = _wanted(graph, doc, keep, production=production)
    lines = text.splitlines(keepends=True)
    blocks: list[tuple[str | None, str, bool]] = []  # (table, text, kept)
    member_names: list[str] = []
    keeping = member = False
    for span in tomltext.spans(lines):
        chunk = "".join(lines[span.start : span.end])
        name = span.name
        if name == "package":
            pkg = _entry(chunk)
            where = uv.member_source(pkg.get("source"))
            rel = posixpath.normpath(where) if where is not None else None
            member = rel is not None and rel in graph.importers
            keeping = rel in keep if member else uv.package_id(pkg) in wanted
            if member and keeping:
                member_names.append(str(pkg["name"]))
        elif name is None or not name.startswith("package."):
            keeping, member = True, False
        elif production and member and name in _DEV_TABLES:
            blocks.append((name, chunk, False))
            continue
        dropped = production and name is not None and name.startswith("manifest.dependency-groups")
        blocks.append((name, chunk, keeping and not dropped))
    out = "".join(chunk for _, chunk, kept in blocks if kept).rstrip("\n") + "\n"
    out = _manifest_members(out, doc, member_names)
    if requires_python is not None and "requires-python" in doc:
        out = _set_top(out, "requires-python", requires_python)
    try:
        tomllib.loads(out)
    except tomllib.TOMLDecodeError as exc:  # an edit vx got wrong: refuse, never write it
        raise LockfileError(f"{uv.NAME}: the pruned lockfile would not be TOML ({exc})") from None
    return out


def _entry(chunk: str) -> dict[str, Any]:
    try:
        found = tomllib.loads(chunk)["package"][0]
    except (tomllib.TOMLDecodeError, KeyError, IndexError, TypeError):
        raise LockfileError(f"{uv.NAME}: a [[package]] entry vx cannot read") from None
    if not isinstance(found, dict) or "name" not in found:
        raise LockfileError(f"{uv.NAME}: a [[package]] entry without a name")
    return found


def _wanted(graph: LockGraph, doc: dict[str, Any], keep: set[str], *, production: bool) -> set[str]:
    """The locked package ids the kept members install, with what `[manifest]` requires."""
    wanted = reachable(graph, keep, production=production)
    manifest = doc.get("manifest")
    names: set[str] = set()
    if isinstance(manifest, dict):
        # Constraints and overrides only bound versions; requirements and groups install.
        lists: list[Any] = [manifest.get("requirements")]
        groups = manifest.get("dependency-groups")
        if isinstance(groups, dict) and not production:
            lists.extend(groups.values())
        for entries in lists:
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, dict) and "name" in entry:
                    names.add(str(entry["name"]))
    todo = [pid for pid, node in graph.nodes.items() if node.name in names]
    while todo:
        pid = todo.pop()
        if pid in wanted or linked_dir(pid) is not None or pid not in graph.nodes:
            continue
        wanted.add(pid)
        todo.extend(graph.nodes[pid].deps)
    return wanted


def _manifest_members(text: str, doc: dict[str, Any], names: list[str]) -> str:
    manifest = doc.get("manifest")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("members"), list):
        return text
    kept = sorted(dict.fromkeys(names))
    found = tomltext.replace_array(text, "manifest", "members", kept)
    if found is None:
        raise LockfileError(f"{uv.NAME}: the [manifest] members list is not one vx can rewrite")
    return found


def _set_top(text: str, key: str, value: str) -> str:
    """`key = "value"` before the first table, in place of the line uv wrote."""
    lines = text.splitlines(keepends=True)
    for at, line in enumerate(lines):
        if tomltext.table_name(line) is not None:
            break
        if line.split("=", 1)[0].strip() == key:
            lines[at] = f"{key} = {json.dumps(value)}\n"
            break
    return "".join(lines)
