"""Helpers for the cache's end-to-end tests: generated workspaces and a look inside a store."""

from __future__ import annotations

import io
import random
import sqlite3
import tarfile
from contextlib import closing
from typing import TYPE_CHECKING, Any

import zstandard
from tests.e2e.runws import package

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

BUILD = "mkdir -p dist && cat src/*.js > dist/bundle.js"
CACHED_BUILD = {
    "dependsOn": ["^build"],
    "exec": BUILD,
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}
ROOT_FILES: dict[str, Any] = {
    "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
    ".gitignore": "dist/\n",
}


def name(i: int) -> str:
    return f"pkg-{i:03d}"


def generated(count: int, *, seed: int = 7) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """`count` packages, each linking up to 3 earlier ones, with a cached `cat` build.

    Returns the files and each package's direct dependencies. Same seed, same workspace.
    """
    rng = random.Random(seed)  # noqa: S311  a fixture, not a secret
    files = dict(ROOT_FILES)
    deps: dict[str, tuple[str, ...]] = {}
    for i in range(count):
        mine = tuple(name(j) for j in sorted(rng.sample(range(i), rng.randint(0, min(3, i)))))
        deps[name(i)] = mine
        base = f"packages/{name(i)}"
        files[f"{base}/package.json"] = package(name(i), mine)
        files[f"{base}/vx.config.json"] = {"tasks": {"build": CACHED_BUILD}}
        files[f"{base}/src/index.js"] = f"export const id = {i};\n"
        files[f"{base}/src/util.js"] = f"export const deps = {list(mine)!r};\n"
    return files, deps


def dependants(deps: dict[str, tuple[str, ...]], start: str) -> set[str]:
    """`start` and every package that depends on it, directly or not."""
    found = {start}
    changed = True
    while changed:
        changed = False
        for pkg, mine in deps.items():
            if pkg not in found and found.intersection(mine):
                found.add(pkg)
                changed = True
    return found


def tasks(result: VxResult) -> dict[str, dict[str, Any]]:
    """`vx run --format json`'s task rows by task id."""
    return {row["id"]: row for row in result.json()["tasks"]}


def statuses(result: VxResult) -> dict[str, str]:
    return {tid: row["status"] for tid, row in tasks(result).items()}


def hashes(text: str) -> dict[str, str]:
    """`--output-logs=hash-only` lines (`<outcome> <task id> <key>`) by task id."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and "#" in parts[1] and len(parts[2]) == 16:
            out[parts[1]] = parts[2]
    return out


def default_store(home: Path) -> Path:
    """The one shared store a test's own home holds (`~/.vx/<id>/cache`)."""
    found = sorted(home.glob(".vx/*/cache"))
    assert len(found) == 1, found
    return found[0]


def query(store: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        return list(conn.execute(sql, args))


def entry_keys(store: Path) -> set[str]:
    if not (store / "cache.db").exists():
        return set()
    return {row[0] for row in query(store, "SELECT key FROM entries")}


def artifact_members(path: Path) -> dict[str, bytes | None]:
    """An artifact's members: a file's bytes, None for a directory or a link."""
    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(path.read_bytes())).read()
    out: dict[str, bytes | None] = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        for member in tar:
            data = tar.extractfile(member) if member.isfile() else None
            out[member.name] = data.read() if data else None
    return out


def tree_bytes(root: Path) -> dict[str, bytes | str]:
    """Every file (its bytes) and symlink (its target) under root, by relative path."""
    out: dict[str, bytes | str] = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = str(path.readlink())
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out
