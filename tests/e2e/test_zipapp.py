"""build/pyz.py makes a vx.pyz that runs on its own and carries the manual and the schemas."""

from __future__ import annotations

import subprocess
import zipfile

from tests.conftest import REPO, base_env, make_git_workspace


def test_the_archive_holds_the_package_the_docs_and_the_schemas(built_pyz):
    names = set(zipfile.ZipFile(built_pyz).namelist())
    assert {"__main__.py", "vx/__init__.py", "vx/cli/entry.py", "vx/cli/entry.pyc"} <= names
    for doc in (REPO / "docs").glob("*.md"):
        assert f"vx/_data/docs/{doc.name}" in names
    for schema in (REPO / "schemas").glob("*.json"):
        assert f"vx/_data/schemas/{schema.name}" in names
    assert not any("__pycache__" in n for n in names)


def test_it_runs_by_its_shebang(built_pyz, tmp_path):
    assert built_pyz.stat().st_mode & 0o111
    version = subprocess.run(
        [str(built_pyz), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("vx ")
    ws = make_git_workspace(
        tmp_path / "ws",
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {"tasks": {"hi": {"exec": "echo hi"}}},
        },
    )
    run = subprocess.run(
        [str(built_pyz), "run", "hi"],
        cwd=ws,
        env=base_env({"HOME": str(tmp_path)}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "hi" in run.stdout


def test_vx_docs_reads_the_manual_inside_the_archive(built_pyz, tmp_path):
    """Outside any checkout, so the manual can only come from the zip."""
    out = subprocess.run(
        [str(built_pyz), "docs", "output-logs", "--limit", "1"],
        cwd=tmp_path,
        env=base_env({"HOME": str(tmp_path)}),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith("── cli > --output-logs")
