"""A vx without its runtime dependencies says what to install in one line, never a stack.

`python3 vx.py` and vx.pyz run in whatever interpreter starts them; one without xxhash or
zstandard (hidden here by a sitecustomize on PYTHONPATH) is refused with the pip command, and a
`pip install .` of this tree ships the manual, as the built wheels do.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO, base_env, make_git_workspace

HIDE = """import sys
class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in {names!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Hide())
"""


def hiding(tmp_path, *names):
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE.format(names=set(names)))
    return str(hide)


def workspace(tmp_path):
    return make_git_workspace(
        tmp_path / "ws",
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {"tasks": {"build": {"exec": "echo hi"}}},
        },
    )


def expected(name):
    return (
        f"vx needs {name}, which is not installed for {sys.executable} — install vx's "
        f"dependencies there: {Path(sys.executable).name} -m pip install xxhash "
        "zstandard watchdog (or install vx itself: python3 -m pip install vx-runner)\n"
    )


@pytest.mark.parametrize("hidden", [("xxhash",), ("zstandard", "xxhash")])
@pytest.mark.parametrize("how", ["checkout", "pyz"])
def test_a_missing_dependency_is_one_line_naming_the_install(tmp_path, built_pyz, hidden, how):
    program = REPO / "vx.py" if how == "checkout" else built_pyz
    ws = workspace(tmp_path)
    env = base_env({"PYTHONPATH": hiding(tmp_path, *hidden), "HOME": str(tmp_path)})
    proc = subprocess.run(
        [sys.executable, str(program), "run", "build"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr in {expected(name) for name in hidden}, proc.stderr
    assert "report" not in proc.stderr


def test_pip_install_of_the_tree_ships_the_manual(tmp_path):
    """A plain `pip install .` of a copy of this tree (setuptools from the index, in pip's
    isolated build env), then `vx docs` outside any checkout."""
    tree = tmp_path / "tree"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = REPO / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps"]
    pip += ["--disable-pip-version-check", str(tree)]
    subprocess.run(pip, check=True, capture_output=True, cwd=tmp_path, timeout=600)
    away = tmp_path / "away"
    away.mkdir()
    docs = subprocess.run(
        [str(venv / "bin" / "vx"), "docs", "output-logs", "--limit", "1"],
        cwd=away,
        env=base_env({"HOME": str(away)}),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert docs.stdout.startswith("── cli > --output-logs"), docs.stderr
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import vx; print(vx.__file__)"],
        cwd=away,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), "the venv's vx was not the one imported"
