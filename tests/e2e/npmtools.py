"""Peers' CLIs (turbo, nx) installed once from the npm registry into a per-user cache dir.

A test that compares vx with a peer asks for its binary here; where node, npm or the registry
is missing, the test skips and says why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vx-tests"


def npm_tool(package: str, spec: str, binary: str) -> Path:
    """The path of `binary` from `package@spec`, installed under TOOLS_DIR on first use."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip(f"node and npm are not on PATH: {package} cannot be installed for this run")
    prefix = TOOLS_DIR / f"{package}-{spec}"
    found = prefix / "node_modules" / ".bin" / binary
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # two test workers install it once
        if not found.exists():
            proc = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                 f"{package}@{spec}"],
                capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            if proc.returncode != 0 or not found.exists():
                pytest.skip(
                    f"{package}@{spec} could not be installed from npm: {proc.stderr[-400:]}"
                )
    return found
