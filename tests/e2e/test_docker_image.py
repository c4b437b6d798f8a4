"""What the Dockerfile installs, tested without a Docker engine: its /etc/gitconfig lets vx
read a mounted checkout that another user owns, as `docker run -v "$PWD:/work"` gives root."""

from __future__ import annotations

import os
import re

import pytest
from tests.conftest import REPO, make_git_workspace, run_vx

GITCONFIG = REPO / "build" / "docker" / "gitconfig"
HOST_USER = 4242  # the checkout's owner on the host: not the container's root

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root can give a checkout to another user"
)


def test_the_dockerfile_installs_the_gitconfig():
    copies = re.findall(
        r"^COPY\s+(\S+)\s+(\S+)\s*$", (REPO / "Dockerfile").read_text(), re.MULTILINE
    )
    assert ("build/docker/gitconfig", "/etc/gitconfig") in copies


@pytest.fixture
def foreign_checkout(tmp_path):
    ws = make_git_workspace(
        tmp_path / "work",
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {"tasks": {"build": {"exec": "echo built"}}},
        },
    )
    for path in [ws, *ws.rglob("*")]:
        os.lchown(path, HOST_USER, HOST_USER)
    return ws


def env_with(system_config):
    """The tests' git reads no system config; here it reads the image's, as /etc/gitconfig."""
    return {"GIT_CONFIG_SYSTEM": str(system_config), "GIT_CONFIG_NOSYSTEM": "0"}


def test_vx_runs_in_a_checkout_another_user_owns(foreign_checkout, tmp_path):
    env = env_with(GITCONFIG)
    result = run_vx(["run", "build"], foreign_checkout, env=env, home=tmp_path / "home")
    result.assert_ok()
    assert "built" in result.out


def test_without_it_git_refuses_the_checkout(foreign_checkout, tmp_path):
    """The failure the gitconfig prevents: the same run under an empty system config."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    result = run_vx(["run", "build"], foreign_checkout, env=env_with(empty), home=tmp_path / "h")
    assert result.code == 1
    assert "dubious ownership" in result.err
