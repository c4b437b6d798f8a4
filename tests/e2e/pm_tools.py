"""Real package managers for the lockfile tests: npm as installed, the others from the npm registry.

They are installed once per test session into a directory every xdist worker shares (a lock
file orders the workers), each with `npm install --prefix`, so a pnpm or Yarn download happens
once. A manager that cannot be installed (no npm, no registry) makes its tests skip, saying why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

# name → (npm spec to install, the script to run with node, or the binary, under its prefix)
SPECS: dict[str, tuple[str, str]] = {
    "pnpm8": ("pnpm@8", "node_modules/pnpm/bin/pnpm.cjs"),
    "pnpm9": ("pnpm@9", "node_modules/pnpm/bin/pnpm.cjs"),
    "yarn1": ("yarn@1", "node_modules/yarn/bin/yarn.js"),
    "yarn4": ("@yarnpkg/cli-dist@4", "node_modules/@yarnpkg/cli-dist/bin/yarn.js"),
    "bun": ("bun@1", "node_modules/bun/bin/bun.exe"),
}


class Manager(NamedTuple):
    """How to run one package manager: the argv prefix, and the env it needs."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str]


def _npm_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("npm_", "VX_"))}
    env.update(
        {
            "HOME": str(home),
            "npm_config_cache": str(Path.home() / ".npm"),
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            "YARN_ENABLE_TELEMETRY": "0",
            "YARN_NODE_LINKER": "node-modules",
            "YARN_ENABLE_GLOBAL_CACHE": "1",
            "YARN_GLOBAL_FOLDER": str(home / "yarn-berry"),
            "YARN_CACHE_FOLDER": str(home / "yarn1-cache"),
            "PNPM_HOME": str(home / "pnpm"),
            "npm_config_store_dir": str(home / "pnpm-store"),
            "BUN_INSTALL_CACHE_DIR": str(home / "bun-cache"),
            "COREPACK_ENABLE_STRICT": "0",
            # CI machines set CI=true, which makes Yarn 4 (and pnpm, which the tests tell with
            # --no-frozen-lockfile) install frozen; a test that wants that says so by flag.
            "YARN_ENABLE_IMMUTABLE_INSTALLS": "false",
        }
    )
    return env


def tools_dir(factory: pytest.TempPathFactory) -> Path:
    """The directory every worker of this session installs the managers into."""
    base = factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    found = shared / "vx-package-managers"
    found.mkdir(exist_ok=True)
    return found


def get_manager(factory: pytest.TempPathFactory, name: str) -> Manager:
    """The manager `name` (`npm`, `pnpm8`, …), installed if needed; skips when it cannot be."""
    root = tools_dir(factory)
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = _npm_env(home)
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm and node are not installed: the lockfile tests need them")
    if name == "npm":
        return Manager("npm", (npm,), env)
    spec, entry = SPECS[name]
    prefix = root / name
    with (root / "install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (prefix / entry).exists():
            proc = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-save", spec],
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=600,
            )
            if proc.returncode != 0 or not (prefix / entry).exists():
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                pytest.skip(f"{spec} could not be installed from the npm registry: {tail}")
    path = str(prefix / entry)
    argv = (path,) if name == "bun" else (node, path)
    return Manager(name, argv, env)


def run_pm(manager: Manager, args: list[str], cwd: Path) -> None:
    """Run the manager; a failure that is the registry's (offline) skips, anything else fails."""
    proc = subprocess.run(
        [*manager.argv, *args],
        cwd=cwd,
        env=manager.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if proc.returncode != 0:
        text = proc.stdout + proc.stderr
        if any(w in text for w in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT")):
            pytest.skip(f"{manager.name} could not reach the registry: {text.strip()[-300:]}")
        msg = f"{manager.name} {' '.join(args)} failed in {cwd}:\n{text}"
        raise AssertionError(msg)
