"""`vx --version`, `vx help` and a refused flag load no engine module: start-up is every command's cost."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from tests.e2e.runws import tree

from conftest import VX, base_env

ENGINE = (
    "vx.workspace",
    "vx.lockfiles",
    "vx.foreign",
    "vx.loader",
    "vx.selection",
    "vx.adopt",
    "vx.prune",
    "vx.graph",
    "vx.run",
    "vx.cache",
    "vx.output",
    "vx.history",
    "vx.watch",
    "vx.git",
    "vx.trace",
    "vx.audit",
    "vx.otel",
    "vx.shard",
    "vx.observe",
    "vx.mcp",
)
_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)


def imported_by(argv: list[str], cwd) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The process, and every module `python -X importtime ARGV` imported, from its report."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=base_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return proc, set(_IMPORTED.findall(proc.stderr))


# The console script pip generates calls this, as `vx.py` does.
CONSOLE_SCRIPT = "import sys; from vx.cli.entry import entry; sys.argv[0] = 'vx'; entry()"


@pytest.mark.parametrize("via", ["vx.py", "console script"])
@pytest.mark.parametrize("args", [["--version"], ["version"]])
def test_the_version_loads_only_the_package(tmp_path, args, via):
    argv = [str(VX), *args] if via == "vx.py" else ["-c", CONSOLE_SCRIPT, *args]
    proc, modules = imported_by(argv, tmp_path)
    assert proc.stdout == "vx 0.1.0\n"
    assert "vx.cli.entry" in modules, "the import report was not read"
    assert sorted(m for m in modules if m == "vx" or m.startswith("vx.")) == [
        "vx",
        "vx.cli",
        "vx.cli.entry",
    ]
    _, interpreter = imported_by(["-c", "pass"], tmp_path)  # what site loads on its own
    assert not {"pathlib", "argparse", "dataclasses", "typing", "asyncio"} & (modules - interpreter)


def test_the_console_script_is_the_entry_vx_py_uses():
    pyproject = (VX.parent / "pyproject.toml").read_text()
    assert 'vx = "vx.cli.entry:entry"' in pyproject


@pytest.mark.parametrize(
    ("args", "code"), [(["help"], 0), (["--help"], 0), (["run", "--bogus"], 1), (["--bogus"], 1)]
)
def test_help_and_a_refused_flag_load_no_engine(tmp_path, args, code):
    """The help decides its colours with the console (output's lowest module); nothing more."""
    proc, modules = imported_by([str(VX), *args], tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "vx.cli.main" in modules, "the import report was not read"
    assert (
        sorted(
            m
            for m in modules
            if m.startswith(ENGINE) and m not in ("vx.output", "vx.output.console")
        )
        == []
    )
    assert "asyncio" not in modules


# The engines a plain `vx run` never needs: each is loaded by the flag, verb or setting that
# asks for it (`--audit`, `exec.sandbox`, an OTLP endpoint, `--shard`, `init --observe`,
# `vx mcp`) or by a remote cache plugin. `vx.otel.switch`, which imports no SDK, is how a run
# learns whether tracing is on.
OPTIONAL = ("vx.trace", "vx.audit", "vx.otel.tracer", "vx.otel.export", "vx.shard", "vx.observe")
OPTIONAL_IN_RUN = (
    "vx.mcp",
    "vx.run.audit",
    "vx.run.remote.sharding",
    "vx.run.remote",
    "vx.plugins.otel",
)


def test_a_plain_run_loads_no_optional_engine(workspace, tmp_path):
    build = {"exec": "mkdir -p dist && cat src/index.txt > dist/o"}
    root = workspace(tree({"a": ((), {"build": build})}))
    proc, modules = imported_by([str(VX), "run", "a#build"], root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "vx.run.executor" in modules, "the import report was not read"
    assert sorted(m for m in modules if m.startswith(OPTIONAL + OPTIONAL_IN_RUN)) == []
