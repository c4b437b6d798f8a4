"""The README's newcomer path: its two quick-start commands, its links and what vx.py needs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from typing import TYPE_CHECKING

from tests.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path

README = (REPO / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else len(README)]


QUICK_START = _section("Quick start")
COMMANDS = re.findall(r"```sh\n(.*?)\n```", QUICK_START, flags=re.DOTALL)


def _steps(command: str) -> list[list[str]]:
    return [shlex.split(step) for step in command.split("&&")]


def _follow_cds(start: Path, command: str) -> Path:
    """Where a `&&` chain leaves its shell: every `cd` applied in turn."""
    here = start
    for argv in _steps(command):
        if argv[0] == "cd":
            here = (here / argv[1]).resolve()
    return here


def test_the_quick_start_is_two_commands_and_the_first_makes_a_venv_before_installing():
    assert len(COMMANDS) == 2, COMMANDS
    heads = [" ".join(argv[:3]) for argv in _steps(COMMANDS[0])]
    assert heads.index("python3 -m venv") < heads.index("python3 -m pip")
    assert any(argv[:2] == [".", ".venv/bin/activate"] for argv in _steps(COMMANDS[0]))
    assert _steps(COMMANDS[0])[-1] == ["vx", "run", "build", "--all"]
    assert _follow_cds(REPO, COMMANDS[0]) == REPO / "examples"


def test_the_test_command_runs_from_where_the_first_command_leaves_you(tmp_path):
    assert _follow_cds(_follow_cds(REPO, COMMANDS[0]), COMMANDS[1]) == REPO
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    # The command as written, asked only to collect one small file so the check stays cheap.
    collect = f"{COMMANDS[1]} --collect-only -q tests/test_layers.py"
    done = subprocess.run(
        ["sh", "-c", collect],
        cwd=REPO / "examples",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_layers.py" in done.stdout


def test_the_quick_start_says_how_long_the_suite_takes():
    before_tests = QUICK_START[: QUICK_START.index(COMMANDS[1])]
    assert re.search(r"\bminutes\b", before_tests.split("```")[-2])


def test_every_link_stays_inside_the_repository_and_exists():
    assert "../" not in README
    for target in re.findall(r"\]\(([^)]+)\)", README):
        if target.startswith(("http://", "https://", "#")):
            continue
        path = (REPO / target.split("#")[0]).resolve()
        assert path.is_relative_to(REPO), target
        assert path.exists(), target


def test_running_vx_py_names_each_dependency_it_needs():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=!~ \[]", dep)[0] for dep in project["dependencies"]]
    paragraph = next(p for p in QUICK_START.split("\n\n") if "python3 vx.py" in p)
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    assert f"{words[len(names)]} dependencies" in paragraph
    install = re.search(r"`python3 -m pip install ([^`]+)`", paragraph)
    assert install is not None, paragraph
    assert sorted(install.group(1).split()) == sorted(names)
