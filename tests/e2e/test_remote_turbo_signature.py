"""Signed artifacts shared with Turborepo itself: the real `turbo` and vx, with the same key,
against one `turborepo-remote-cache`. vx verifies what turbo stored and writes the very tag
turbo wrote for the same bytes, and turbo restores what vx stored (and refuses it under
another key)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.remoteservers import TOKEN, turbo_cli, turbo_server

from vx.cache.remote.base import Untrusted
from vx.plugins.model import CacheContext
from vx.plugins.turbo import plugin

if TYPE_CHECKING:
    from pathlib import Path

    from vx.cache.remote.base import RemoteCache

KEY = "a-signature-key-of-thirty-two-bytes-or-more"
TEAM = "team_vx"


def turbo_repo(root: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is needed for a repository turbo runs in")
    version = subprocess.run([npm, "--version"], capture_output=True, text=True, check=True)
    return make_git_workspace(root, {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"],
                         "packageManager": f"npm@{version.stdout.strip()}"},
        "turbo.json": {"remoteCache": {"signature": True},
                       "tasks": {"build": {"outputs": ["dist/**"]}}},
        ".gitignore": "dist/\n.turbo/\nnode_modules/\n",
        "packages/a/package.json": {
            "name": "a", "scripts": {"build": "mkdir -p dist && echo built > dist/out.txt"}},
    })  # fmt: skip


def run_turbo(repo: Path, env: dict[str, str], home: Path) -> str:
    home.mkdir(parents=True, exist_ok=True)
    full = {"PATH": os.environ["PATH"], "HOME": str(home), "TURBO_TELEMETRY_DISABLED": "1",
            "DO_NOT_TRACK": "1", "TURBO_NO_UPDATE_NOTIFIER": "1", **env}  # fmt: skip
    done = subprocess.run([str(turbo_cli()), "run", "build"], cwd=repo, env=full,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def vx_client(env: dict[str, str], root: Path) -> RemoteCache:
    """vx's client as the plugin builds it from the same variables turbo read."""
    seam = plugin().cache
    assert seam is not None
    return seam(CacheContext(root, env))


@pytest.mark.parametrize("team_variable", ["TURBO_TEAMID", "TURBO_TEAM"])
def test_vx_and_turbo_verify_each_others_tags(tmp_path: Path, team_variable: str) -> None:
    origin = turbo_repo(tmp_path / "origin")
    with turbo_server(tmp_path / "storage", signature_key="server-keeps-tags") as server:
        env = {"TURBO_API": server.url, "TURBO_TOKEN": TOKEN, team_variable: TEAM,
               "TURBO_REMOTE_CACHE_SIGNATURE_KEY": KEY}  # fmt: skip
        said = run_turbo(origin, env, tmp_path / "home")
        assert "cache miss, executing" in said
        [artifact] = [p for p in (tmp_path / "storage" / TEAM).iterdir() if p.suffix != ".tag"]
        key, body = artifact.name, artifact.read_bytes()
        turbos_tag = artifact.with_name(key + ".tag").read_text()

        client = vx_client(env, origin)
        assert client.fetch(key) == body, "vx verified turbo's tag"

        artifact.unlink()
        artifact.with_name(key + ".tag").unlink()
        client.store(key, body, duration_ms=1.0)
        assert artifact.with_name(key + ".tag").read_text() == turbos_tag

        again = run_turbo(clone(origin, tmp_path / "two"), env, tmp_path / "home")
        assert f"cache hit, replaying logs {key}" in again
        assert (tmp_path / "two/packages/a/dist/out.txt").read_text() == "built\n"

        other = {**env, "TURBO_REMOTE_CACHE_SIGNATURE_KEY": KEY + "-other"}
        vx_client(other, origin).store(key, body, duration_ms=1.0)
        with pytest.raises(Untrusted):
            client.fetch(key)
        refused = run_turbo(clone(origin, tmp_path / "three"), env, tmp_path / "home")
        assert "cache miss, executing" in refused, "turbo checks the tag vx wrote"


def clone(origin: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True)
    return where
