"""Real uv workspaces, made in the test and read by the real `uv`: vx sees what uv sees.

The root `pyproject.toml` has a `[project]`, so uv counts it a member; a member sits two
levels down (`libs/*/*`; uv refuses one inside another member's directory); the root's `test` dependency group lists a member that depends on
the root (a cycle uv locks fine); and a glob matching a directory without a manifest is refused
by both. Skips, saying why, where `uv` is not installed (`.ci/run` installs it from PyPI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from vx.workspace.manifests import normalize_python_name

NESTED = "libs/*/*"
ROOT = f"""\
[project]
name = "Core_Kit"
version = "1.0.0"
requires-python = ">=3.8"

[dependency-groups]
test = ["app"]

[tool.uv.sources]
app = {{ workspace = true }}

[tool.uv.workspace]
members = ["packages/*", "{NESTED}"]
"""


def member(name: str, *deps: str) -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    sources = "".join(f"{normalize_python_name(d)} = {{ workspace = true }}\n" for d in deps)
    return (
        f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.8"\n'
        f"dependencies = [{listed}]\n[tool.uv.sources]\n{sources}"
    )


BUILD = {"tasks": {"build": {"exec": "echo built", "dependsOn": ["^build"], "cache": {}}}}
FILES: dict[str, Any] = {
    "pyproject.toml": ROOT,
    "vx.config.json": BUILD,
    "src/core_kit/__init__.py": "VERSION = 1\n",
    "packages/app/pyproject.toml": member("app", "core-kit", "util"),
    "packages/app/vx.config.json": BUILD,
    "packages/util/pyproject.toml": member("util", "Core.Kit"),
    "packages/util/vx.config.json": BUILD,
    "packages/solo/pyproject.toml": member("solo"),
    "packages/solo/vx.config.json": BUILD,
    "libs/py/ext/pyproject.toml": member("ext", "app"),
    "libs/py/ext/vx.config.json": BUILD,
}


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not os.access(found, os.X_OK):
        pytest.skip("uv is not installed (.ci/run installs it: python3 -m pip install uv)")
    return found


def uv(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "UV_CACHE_DIR": str(root.parent / "uv-cache"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_OFFLINE": "1",
        "UV_NO_PROGRESS": "1",
    }
    return subprocess.run(
        [_uv(), *args], cwd=root, env=env, capture_output=True, text=True, check=check
    )


def uv_members(root: Path) -> set[str]:
    """`uv workspace list` where this uv has it; else the members uv.lock's manifest names."""
    listed = uv(root, "workspace", "list", check=False)
    if listed.returncode == 0:
        return {line.strip() for line in listed.stdout.splitlines() if line.strip()}
    print(f"uv has no `workspace list` ({listed.stderr.strip()}); comparing uv.lock's members")
    uv(root, "lock")
    lock = tomllib.loads((root / "uv.lock").read_text())
    return set(lock["manifest"]["members"])


def uv_edges(root: Path) -> dict[str, set[str]]:
    """Each member's workspace dependencies as uv locked them: runtime, then every group."""
    uv(root, "lock")
    lock = tomllib.loads((root / "uv.lock").read_text())
    members = set(lock["manifest"]["members"])
    edges: dict[str, set[str]] = {}
    for package in lock["package"]:
        if package["name"] not in members:
            continue
        deps = {d["name"] for d in package.get("dependencies", [])}
        for group in package.get("dev-dependencies", {}).values():
            deps |= {d["name"] for d in group}
        edges[package["name"]] = deps & members
    return edges


def closure(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in edges.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen - {start}


@pytest.fixture
def uv_ws(workspace) -> Path:
    _uv()
    return workspace(FILES)


def shown(vx, root: Path, *args: str) -> dict[str, str]:
    """normalized name → vx's name, of the projects `vx show ARGS` lists."""
    doc = vx(["show", *args, "--format", "json"], root).assert_ok().json()
    return {normalize_python_name(p["name"]): p["name"] for p in doc}


def test_vx_lists_what_uv_lists_the_root_included(uv_ws: Path, vx) -> None:
    names = shown(vx, uv_ws)
    assert set(names) == uv_members(uv_ws) == {"core-kit", "app", "util", "solo", "ext"}
    one = vx(["show", "Core_Kit", "--format", "json"], uv_ws).assert_ok().json()
    assert (one["name"], one["dir"]) == ("Core_Kit", ".")
    # The root keeps answering to `//` too.
    assert vx(["show", "//", "--format", "json"], uv_ws).assert_ok().json()["name"] == "Core_Kit"


def test_selection_edges_are_uv_s_edges(uv_ws: Path, vx) -> None:
    edges = uv_edges(uv_ws)
    assert edges["core-kit"] == {"app"}  # the test group closes core-kit → app → core-kit
    names = shown(vx, uv_ws)
    for name, spelled in names.items():
        picked = set(shown(vx, uv_ws, "--filter", f"{spelled}...")) - {name}
        assert picked == closure(edges, name), name


def test_ordering_follows_runtime_edges_and_the_group_edge_gives_way(uv_ws: Path, vx) -> None:
    plan = vx(["run", "build", "--all", "--dry=json"], uv_ws).assert_ok().json()
    deps = {t["id"]: sorted(t["deps"]) for t in plan["tasks"]}
    assert deps == {
        "Core_Kit#build": [],
        "app#build": ["Core_Kit#build", "util#build"],
        "ext#build": ["app#build"],
        "solo#build": [],
        "util#build": ["Core_Kit#build"],
    }
    vx(["run", "Core_Kit#build"], uv_ws).assert_ok()  # its name works as pkg#task
    vx(["run", "//#build"], uv_ws).assert_ok()


def test_an_edit_of_the_root_package_reruns_its_dependents(uv_ws: Path, vx) -> None:
    uv(uv_ws, "lock")
    vx(["run", "build", "--all"], uv_ws).assert_ok()
    (uv_ws / "src/core_kit/__init__.py").write_text("VERSION = 2\n")
    plan = vx(["run", "build", "--all", "--dry=json"], uv_ws).assert_ok().json()
    status = {t["id"]: t["cacheStatus"] for t in plan["tasks"]}
    assert status == {
        "Core_Kit#build": "miss",
        "app#build": "miss",
        "ext#build": "miss",
        "solo#build": "hit-local",
        "util#build": "miss",
    }
    # An edit inside the nested member is its own, not the root's around it.
    vx(["run", "build", "--all"], uv_ws).assert_ok()
    (uv_ws / "libs/py/ext/ext.py").write_text("x = 1\n")
    plan = vx(["run", "build", "--all", "--dry=json"], uv_ws).assert_ok().json()
    missed = sorted(t["id"] for t in plan["tasks"] if t["cacheStatus"] == "miss")
    assert missed == ["ext#build"]


def test_a_glob_matching_a_directory_without_pyproject_is_refused_as_uv_refuses_it(
    uv_ws: Path, vx
) -> None:
    (uv_ws / "packages/notes").mkdir()
    (uv_ws / "packages/notes/README.md").write_text("notes, not a package\n")
    said = uv(uv_ws, "workspace", "list", check=False)
    assert said.returncode != 0
    assert "packages/notes" in said.stderr
    assert "missing a `pyproject.toml`" in said.stderr
    r = vx(["show"], uv_ws)
    assert r.code == 1
    assert r.err.strip().splitlines() == [
        (
            'pyproject.toml [tool.uv.workspace] members: the glob "packages/*" matches '
            "packages/notes, which has no pyproject.toml — add one, or leave the directory out "
            '(exclude = ["packages/notes"])'
        )
    ]
    # An empty leftover directory passes, for uv and for vx alike.
    (uv_ws / "packages/notes/README.md").unlink()
    assert uv(uv_ws, "workspace", "list", check=False).returncode == 0
    vx(["show"], uv_ws).assert_ok()
