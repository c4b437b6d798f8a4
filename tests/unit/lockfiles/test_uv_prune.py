"""The uv.lock pruner and the uv prune plan, on a lockfile uv wrote (data/uv_prune/).

The fixture is a virtual root (a `lint` dependency group) over four members: app (runtime
lib, extra `cli`, group `test` on tools), lib (python-dateutil, hence six), tools (idna) and
lone (six, packaging, and the strictest requires-python). Where uv is installed, the pruned
tree is also checked by `uv lock --check --offline`, which is what `uv sync --locked` runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from vx.errors import UserError
from vx.loader.assemble import load_workspace
from vx.lockfiles.model import LockfileError
from vx.lockfiles.uv_prune import prune_text
from vx.prune.uv import intersect, plan

DATA = Path(__file__).parent / "data" / "uv_prune"
LOCK = (DATA / "uv.lock").read_text()
APP = {".", "packages/app", "packages/lib", "packages/tools"}


def _names(text: str) -> set[str]:
    return {p["name"] for p in tomllib.loads(text)["package"]}


@pytest.mark.parametrize(
    ("keep", "production", "members", "packages"),
    [
        (
            APP,
            False,
            ["app", "lib", "tools"],
            {"app", "lib", "tools", "idna", "iniconfig", "python-dateutil", "six"},
        ),
        (
            {".", "packages/app", "packages/lib"},
            True,
            ["app", "lib"],
            {"app", "lib", "iniconfig", "python-dateutil", "six"},
        ),
        ({".", "packages/lone"}, False, ["lone"], {"lone", "six", "packaging", "idna"}),
    ],
    ids=["app", "app-production", "lone"],
)
def test_prune_keeps_what_the_subset_installs(
    keep: set[str], production: bool, members: list[str], packages: set[str]
) -> None:
    pruned = prune_text(LOCK, keep, production=production)
    doc = tomllib.loads(pruned)
    assert doc["manifest"]["members"] == members
    assert _names(pruned) == packages
    assert ("dependency-groups" in doc["manifest"]) is not production
    app = [p for p in doc["package"] if p["name"] == "app"]
    for entry in app:
        assert ("dev-dependencies" in entry) is not production
        assert ("requires-dev" in entry["metadata"]) is not production
        assert "optional-dependencies" in entry


def test_kept_entries_keep_uvs_own_lines() -> None:
    pruned = prune_text(LOCK, APP, production=False, requires_python=">=3.9")
    assert pruned.startswith('version = 1\nrevision = 5\nrequires-python = ">=3.9"\n')
    for block in pruned.split("\n[[package]]\n")[1:]:
        assert f"\n[[package]]\n{block.rstrip()}\n" in LOCK
    assert pruned.endswith("]\n")
    lone = prune_text(LOCK, {".", "packages/lone"}, production=False)
    assert lone.endswith("]\n"), "a dropped last entry leaves no blank line behind"


def test_a_lockfile_vx_does_not_read_is_refused() -> None:
    with pytest.raises(LockfileError, match="version 2"):
        prune_text(LOCK.replace("version = 1", "version = 2", 1), APP, production=False)


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        ([">=3.9", ">=3.10, <4"], ">=3.10, <4"),
        ([">= 3.10.2", "~=3.9", ">=3.9,<4"], ">=3.10.2, <4"),
        ([">3.9", ">=3.9", None], ">3.9"),
        ([">=3.8", "<=3.12", "<3.12"], ">=3.8, <3.12"),
        ([None, None], None),
        ([">=3.9", "!=3.9.1"], None),
    ],
)
def test_requires_python_is_the_intersection(specs: list[str | None], expected: str) -> None:
    assert intersect(specs) == expected


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DATA, root)
    return root


def _uv() -> str | None:
    found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    return found if os.access(found, os.X_OK) else None


@pytest.mark.parametrize("production", [False, True], ids=["all", "production"])
def test_the_plan_cuts_the_root_and_uv_accepts_it(tmp_path: Path, production: bool) -> None:
    root = _copy(tmp_path)
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    found = plan(ws, [app], production=production)
    kept = {"app", "lib"} if production else {"app", "lib", "tools"}
    assert found.kept == kept
    assert found.lockfiles == ("uv.lock",)
    pyproject = tomllib.loads(found.rendered["pyproject.toml"].decode())
    assert pyproject["tool"]["uv"]["workspace"]["members"] == sorted(f"packages/{k}" for k in kept)
    assert ("dependency-groups" in pyproject) is not production
    assert ("packages/app/pyproject.toml" in found.rendered) is production
    lock = tomllib.loads(found.rendered["uv.lock"].decode())
    assert lock["requires-python"] == ">=3.9"

    uv = _uv()
    if uv is None:
        print("uv is not installed (python3 -m pip install uv): the uv lock --check step skips")
        return
    for rel, data in found.rendered.items():
        (root / rel).write_bytes(data)
    for gone in {"app", "lib", "tools", "lone"} - kept:
        shutil.rmtree(root / "packages" / gone)
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never"}
    checked = subprocess.run(
        [uv, "lock", "--check", "--offline"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr


def test_members_written_another_way_are_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "pyproject.toml").write_text('[tool.uv]\nworkspace = { members = ["packages/*"] }\n')
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    with pytest.raises(UserError, match=r"members = \[\.\.\.\] under a \[tool.uv.workspace\]"):
        plan(ws, [app], production=False)


def test_a_bound_that_stays_keeps_uvs_spelling_and_says_nothing(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    member = root / "packages/lone/pyproject.toml"
    member.write_text(member.read_text().replace('">=3.10, <4"', '">= 3.10,<4.0"'))
    ws = load_workspace(root)
    lone = ws.project("lone")
    app = ws.project("app")
    assert lone is not None
    assert app is not None
    found = plan(ws, [lone], production=False)
    assert found.notes == ()
    assert 'requires-python = ">=3.10, <4"\n' in found.rendered["uv.lock"].decode()
    widened = plan(ws, [app], production=False)
    note = (
        "uv.lock: requires-python is now >=3.9 (was >=3.10, <4, held by a member left out);"
        " uv resolved the locked versions for >=3.10, <4, so build on a Python it allows"
    )
    assert widened.notes == (note,)


def _uv_check(root: Path, tmp_path: Path) -> str | None:
    """`uv lock --check --offline` in `root`: its complaint, None when it accepts the tree."""
    uv = _uv()
    if uv is None:
        print("uv is not installed (python3 -m pip install uv): the uv lock --check step skips")
        return None
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never"}
    checked = subprocess.run(
        [uv, "lock", "--check", "--offline"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return None if checked.returncode == 0 else checked.stderr


def test_production_drops_uvs_settings_for_the_groups_it_cuts(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    member = root / "packages/app/pyproject.toml"
    settings = '\n[tool.uv.dependency-groups]\ntest = { requires-python = ">=3.9" }\n'
    member.write_text(member.read_text() + settings)
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text()
        + '\n[tool.uv.dependency-groups.lint]\nrequires-python = ">=3.9"\n'
    )
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    found = plan(ws, [app], production=True)
    for rel in ("pyproject.toml", "packages/app/pyproject.toml"):
        doc = tomllib.loads(found.rendered[rel].decode())
        assert "dependency-groups" not in doc.get("tool", {}).get("uv", {}), rel
    for rel, data in found.rendered.items():
        (root / rel).write_bytes(data)
    for gone in ("tools", "lone"):
        shutil.rmtree(root / "packages" / gone)
    assert _uv_check(root, tmp_path) is None


def test_group_settings_vx_cannot_cut_are_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    member = root / "packages/app/pyproject.toml"
    member.write_text(
        member.read_text() + '\n[tool.uv]\ndependency-groups.test.requires-python = ">=3.9"\n'
    )
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    with pytest.raises(UserError, match=r"packages/app/pyproject.toml lists dependency groups"):
        plan(ws, [app], production=True)


def test_a_bound_vx_cannot_combine_stays_and_says_so(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    member = root / "packages/app/pyproject.toml"
    member.write_text(member.read_text().replace('">=3.9"', '">=3.9, !=3.9.1"'))
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    found = plan(ws, [app], production=False)
    assert 'requires-python = ">=3.10, <4"\n' in found.rendered["uv.lock"].decode()
    note = (
        "uv.lock: requires-python kept as >=3.10, <4 — vx cannot combine the form"
        " packages/app/pyproject.toml uses; if uv sync --locked then refuses, run uv lock in"
        " the output"
    )
    assert found.notes == (note,)


def test_a_dynamic_file_that_is_not_a_string_names_nothing(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    member = root / "packages/app/pyproject.toml"
    member.write_text(
        member.read_text() + "\n[tool.setuptools.dynamic]\ndependencies = { file = 5 }\n"
        'optional-dependencies = { cli = { file = [7, "extra.txt"] } }\n'
    )
    (root / "packages/app/extra.txt").write_text("iniconfig\n")
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    found = plan(ws, [app], production=False)
    assert found.rendered["packages/app/extra.txt"] == b"iniconfig\n"


@pytest.mark.parametrize("where", ["wheels/foo-1.0-py3-none-any.whl", "../foo-1.0.tar.gz"])
def test_a_local_archive_the_lock_installs_is_copied_or_refused(tmp_path: Path, where: str) -> None:
    root = _copy(tmp_path)
    lock = root / "uv.lock"
    text = lock.read_text().replace(
        'dependencies = [\n    { name = "lib" },\n]',
        'dependencies = [\n    { name = "foo" },\n    { name = "lib" },\n]',
        1,
    )
    lock.write_text(
        f'{text}\n[[package]]\nname = "foo"\nversion = "1.0"\nsource = {{ path = "{where}" }}\n'
    )
    (root / "wheels").mkdir()
    (root / "wheels/foo-1.0-py3-none-any.whl").write_bytes(b"PK")
    ws = load_workspace(root)
    app = ws.project("app")
    assert app is not None
    if where.startswith("../"):
        with pytest.raises(
            UserError, match=r"foo comes from \.\./foo-1\.0\.tar\.gz, outside the workspace root"
        ):
            plan(ws, [app], production=False)
        return
    found = plan(ws, [app], production=False)
    assert found.rendered[where] == b"PK"
    assert "foo" in _names(found.rendered["uv.lock"].decode())
