"""`vx prune` on a real uv workspace: the output installs with `uv sync --locked` and builds.

The workspace is locked by the real uv against PyPI: app needs lib at run time (lib needs
six; app's dependencies are dynamic, so only uv.lock says so) and testkit in its `test`
dependency group (testkit needs idna); lone (iniconfig, and the strictest requires-python) is
left out of every prune. Skips, saying why, where uv is not
installed (`.ci/run` installs it from PyPI) or PyPI cannot be reached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git, make_git_workspace, run_vx

BUILD = {
    "tasks": {
        "build": {
            "exec": "mkdir -p dist && echo built > dist/out.txt",
            "dependsOn": ["^build"],
            "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
        }
    }
}
BACKEND = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
# The error text uv prints when it cannot reach an index.
OFFLINE = ("dns error", "Failed to fetch", "Could not connect", "error sending request", "offline")


def _member(name: str, deps: list[str], extra: str = "", *, python: str = ">=3.9") -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    return (
        f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = "{python}"\n'
        f"dependencies = [{listed}]\n{extra}\n{BACKEND}"
    )


# app's dependencies are dynamic (setuptools reads them from requirements.txt): only uv.lock
# shows that app needs lib, and uv builds app's metadata to check a --locked sync.
APP = """\
[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.9"
dynamic = ["dependencies"]

[dependency-groups]
test = ["testkit"]

[tool.setuptools.dynamic]
dependencies = { file = ["requirements.txt"] }

[tool.uv.sources]
lib = { workspace = true }
testkit = { workspace = true }

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""


def _tree() -> dict[str, Any]:
    files: dict[str, Any] = {
        "pyproject.toml": (
            '[project]\nname = "root"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n\n'
            '[tool.uv.workspace]\nmembers = ["packages/*"]\nexclude = ["packages/attic"]\n'
        ),
        ".python-version": f"{sys.version_info.major}.{sys.version_info.minor}\n",
        ".gitignore": ".venv/\ndist/\nout/\n*.egg-info/\n",
        "packages/app/pyproject.toml": APP,
        "packages/app/requirements.txt": "lib\n",
        "packages/lib/pyproject.toml": _member("lib", ["six==1.16.0"]),
        "packages/testkit/pyproject.toml": _member("testkit", ["idna==3.7"]),
        "packages/lone/pyproject.toml": _member("lone", ["iniconfig==2.0.0"], python=">=3.10"),
    }
    for name in ("app", "lib", "testkit", "lone"):
        files[f"packages/{name}/vx.config.json"] = BUILD
        files[f"packages/{name}/src/{name}/__init__.py"] = f"NAME = {name!r}\n"
    return files


def _uv_path() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not os.access(found, os.X_OK):
        pytest.skip("uv is not installed (.ci/run installs it: python3 -m pip install uv)")
    return found


def _uv(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("VX_", "VIRTUAL_ENV"))},
        "UV_CACHE_DIR": str(cache),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": sys.executable,
        "UV_NO_PROGRESS": "1",
    }
    proc = subprocess.run(
        [_uv_path(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if proc.returncode != 0:
        text = proc.stdout + proc.stderr
        if any(w in text for w in OFFLINE):
            pytest.skip(f"uv could not reach PyPI: {text.strip()[-300:]}")
        raise AssertionError(f"uv {' '.join(args)} failed in {cwd}:\n{text}")
    return proc


@pytest.mark.parametrize("production", [False, True], ids=["all", "production"])
def test_a_pruned_uv_workspace_syncs_locked_and_builds(tmp_path: Path, production: bool) -> None:
    cache = tmp_path / "uv-cache"
    root = make_git_workspace(tmp_path / "ws", _tree(), commit=False)
    _uv(root, cache, "lock")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()

    args = ["prune", "app", "--docker", *(["--production"] if production else [])]
    pruned = run_vx(args, root, home=home).assert_ok()
    assert "uv.lock pruned →" in pruned.err, pruned
    assert "requires-python is now >=3.9 (was >=3.10, held by a member left out)" in pruned.err
    out = root / "out"
    kept = {"app", "lib"} if production else {"app", "lib", "testkit"}
    assert {p.name for p in (out / "full/packages").iterdir()} == kept
    assert {p.name for p in (out / "json/packages").iterdir()} == kept
    assert not (out / "json/packages/app/src").exists()
    assert (out / "json/packages/app/requirements.txt").read_text() == "lib\n"
    assert (out / "json/.python-version").is_file()
    pyproject = tomllib.loads((out / "json/pyproject.toml").read_text())
    members = sorted(f"packages/{k}" for k in kept)
    assert pyproject["tool"]["uv"]["workspace"] == {
        "members": members,
        "exclude": ["packages/attic"],
    }
    lock = tomllib.loads((out / "json/uv.lock").read_text())
    assert lock["manifest"]["members"] == sorted({*kept, "root"})
    assert lock["requires-python"] == ">=3.9", "lone's bound left with lone"
    locked = {p["name"] for p in lock["package"]}
    assert {"lone", "iniconfig"}.isdisjoint(locked), locked
    assert ("idna" in locked) is not production
    app = tomllib.loads((out / "full/packages/app/pyproject.toml").read_text())
    assert ("dependency-groups" in app) is not production

    # The install layer: third-party packages only, from the lock, checked against pyproject.
    _uv(out / "json", cache, "sync", "--locked", "--all-packages", "--no-install-workspace")
    site = list((out / "json/.venv").glob("lib/python*/site-packages"))
    assert site, "uv sync made no virtual environment"
    assert (site[0] / "six.py").is_file(), "the locked sync did not install lib's six"
    assert (site[0] / "idna").is_dir() is not production

    full = out / "full"
    _uv(full, cache, "sync", "--locked", "--all-packages")
    git(full, "init", "-q", "-b", "main")
    git(full, "add", "-A")
    git(full, "commit", "-q", "-m", "pruned")
    built = run_vx(["run", "build", "--all", "--format", "json"], full, home=home).assert_ok()
    ran = {t["id"]: t["status"] for t in json.loads(built.out)["tasks"]}
    assert set(ran) == {f"{k}#build" for k in kept}, built
    assert set(ran.values()) == {"success"}, built

    again = run_vx(args, root, home=home).assert_ok()
    assert (out / ".vx-prune").is_file(), again


def test_a_uv_workspace_vx_cannot_cut_is_refused_in_one_line(workspace: Any, vx: Any) -> None:
    files = {
        "pyproject.toml": '[tool.uv]\nworkspace = { members = ["packages/*"] }\n',
        "packages/app/pyproject.toml": '[project]\nname = "app"\nversion = "0.1.0"\n',
        "uv.lock": "version = 1\n[[package]\n",
    }
    root = workspace(files)
    damaged = vx(["prune", "app"], root)
    assert damaged.code == 1, damaged
    assert damaged.err.startswith("vx prune: uv.lock: not TOML"), damaged
    assert len(damaged.err.strip().splitlines()) == 1, damaged
    (root / "uv.lock").unlink()
    inline = vx(["prune", "app"], root)
    assert inline.code == 1, inline
    assert "members = [...] under a [tool.uv.workspace] table" in inline.err, inline
    assert not (root / "out").exists()


def test_a_root_member_keeps_what_it_depends_on(tmp_path: Path) -> None:
    """uv installs a root with a `[project]` as a member, so its own workspace dependencies
    stay in every prune; checked by `uv lock --check` offline (no registry packages)."""
    files: dict[str, Any] = {
        "pyproject.toml": (
            '[project]\nname = "root"\nversion = "0.1.0"\ndependencies = ["core"]\n\n'
            "[tool.uv.sources]\ncore = { workspace = true }\n\n"
            "[tool.uv.workspace]\nmembers = [\n"
            '    "packages/*",  # every package\n    "tools/*",\n]\n'
        ),
        "packages/app/pyproject.toml": _member("app", ["lib"]).replace(
            "\n[build", "[tool.uv.sources]\nlib = { workspace = true }\n\n[build"
        ),
        "packages/lib/pyproject.toml": _member("lib", []),
        "packages/core/pyproject.toml": _member("core", []),
        "tools/lone/pyproject.toml": _member("lone", []),
    }
    root = make_git_workspace(tmp_path / "ws", files, commit=False)
    cache = tmp_path / "uv-cache"
    _uv(root, cache, "lock", "--offline")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()
    pruned = run_vx(["prune", "app"], root, home=home).assert_ok()
    assert "4 projects (app, core, lib, root)" in pruned.err, pruned
    out = root / "out"
    members = tomllib.loads((out / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    assert members == {"members": ["packages/app", "packages/core", "packages/lib"]}
    assert not (out / "tools").exists()
    _uv(out, cache, "lock", "--check", "--offline")
