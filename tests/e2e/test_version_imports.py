"""`vx --version` loads no engine module: start-up is part of every command's cost."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import VX, base_env

ENGINE = (
    "vx.workspace",
    "vx.graph",
    "vx.run",
    "vx.cache",
    "vx.output",
    "vx.history",
    "vx.watch",
    "vx.git",
)
_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)


def imported_by(args: list[str], cwd) -> set[str]:
    """Every module `python -X importtime vx.py ARGS` imported, read from its own report."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(VX), *args],
        cwd=cwd,
        env=base_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert proc.stdout == "vx 0.1.0\n"
    return set(_IMPORTED.findall(proc.stderr))


@pytest.mark.parametrize("args", [["--version"], ["version"]])
def test_the_version_loads_no_engine(tmp_path, args):
    modules = imported_by(args, tmp_path)
    assert "vx.cli.main" in modules, "the import report was not read"
    loaded = sorted(m for m in modules if m.startswith(ENGINE))
    assert loaded == []
    assert "asyncio" not in modules
    assert "argparse" not in modules
