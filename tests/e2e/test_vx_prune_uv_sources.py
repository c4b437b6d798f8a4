"""`vx prune` on real uv workspaces whose lock has more than one entry per name or a local
package outside the members: the output still passes `uv sync --locked`.

uv locks each workspace here (against PyPI where it needs a package from it); a test skips,
saying why, where uv is not installed or PyPI cannot be reached.
"""

from __future__ import annotations

import tomllib
from typing import TYPE_CHECKING, Any

from tests.conftest import git, make_git_workspace, run_vx
from tests.e2e.test_vx_prune_uv import BACKEND, _uv

if TYPE_CHECKING:
    from pathlib import Path

ROOT = '[tool.uv.workspace]\nmembers = ["packages/*"]\n'
# idna resolves to two versions split by a marker; six is both a dependency and in `dev`.
MARKERS = f"""\
[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.9"
dependencies = [
    "six==1.16.0",
    "idna<3; python_version < '3.10'",
    "idna>=3,<4; python_version >= '3.10'",
]

[dependency-groups]
dev = ["six"]

{BACKEND}"""
# app installs foo from vendor/foo, a directory no workspace member owns.
VENDORED = f"""\
[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.9"
dependencies = ["foo"]

[tool.uv.sources]
foo = {{ path = "../../vendor/foo", editable = true }}

{BACKEND}"""
FOO = f'[project]\nname = "foo"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n\n{BACKEND}'


def _locked(tmp_path: Path, files: dict[str, Any], *lock_args: str) -> tuple[Path, Path, Path]:
    """The workspace written, locked by uv and committed: (root, uv cache, vx home)."""
    for name in ("app", "lib"):
        if f"packages/{name}/pyproject.toml" in files:
            files.setdefault(f"packages/{name}/src/{name}/__init__.py", "X = 1\n")
    root = make_git_workspace(
        tmp_path / "ws", {".gitignore": ".venv/\nout/\n", **files}, commit=False
    )
    cache = tmp_path / "uv-cache"
    _uv(root, cache, "lock", *lock_args)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"
    home.mkdir()
    return root, cache, home


def test_every_locked_version_and_a_dependency_also_in_a_group_stay(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": ROOT,
        "packages/app/pyproject.toml": MARKERS,
        "packages/lib/pyproject.toml": (
            '[project]\nname = "lib"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n'
            f'dependencies = ["iniconfig"]\n\n{BACKEND}'
        ),
    }
    root, cache, home = _locked(tmp_path, files)
    for production in (False, True):
        args = ["prune", "app", *(["--production"] if production else [])]
        run_vx(args, root, home=home).assert_ok()
        out = root / "out"
        lock = tomllib.loads((out / "uv.lock").read_text())
        locked = sorted(p["name"] for p in lock["package"])
        assert locked == ["app", "idna", "idna", "six"], (production, locked)
        _uv(out, cache, "sync", "--locked")
        site = next((out / ".venv").glob("lib/python*/site-packages"))
        assert (site / "six.py").is_file(), production


def test_a_local_package_the_lock_installs_is_copied(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": ROOT,
        "packages/app/pyproject.toml": VENDORED,
        "vendor/foo/pyproject.toml": FOO,
        "vendor/foo/src/foo/__init__.py": "FOO = 1\n",
    }
    root, cache, home = _locked(tmp_path, files, "--offline")
    run_vx(["prune", "app", "--docker"], root, home=home).assert_ok()
    out = root / "out"
    assert (out / "full/vendor/foo/src/foo/__init__.py").is_file()
    assert (out / "json/vendor/foo/pyproject.toml").is_file()
    assert not (out / "json/vendor/foo/src").exists()
    _uv(out / "json", cache, "sync", "--locked", "--all-packages", "--no-install-local")
    _uv(out / "full", cache, "sync", "--locked", "--all-packages")
    site = next((out / "full/.venv").glob("lib/python*/site-packages"))
    assert any(p.name.startswith("foo") for p in site.iterdir()), "foo was not installed"


def test_a_local_package_outside_the_root_is_refused_in_one_line(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere/foo"
    (outside / "src/foo").mkdir(parents=True)
    (outside / "pyproject.toml").write_text(FOO)
    (outside / "src/foo/__init__.py").write_text("FOO = 1\n")
    files = {
        "pyproject.toml": ROOT,
        "packages/app/pyproject.toml": VENDORED.replace(
            "../../vendor/foo", "../../../elsewhere/foo"
        ),
    }
    root, _, home = _locked(tmp_path, files, "--offline")
    refused = run_vx(["prune", "app"], root, home=home)
    assert refused.code == 1, refused
    assert refused.err.strip() == (
        "vx prune: uv.lock: foo comes from ../elsewhere/foo, outside the workspace root, which"
        " the pruned output cannot hold — move it under the root"
    ), refused
    assert not (root / "out").exists()
