"""install.sh against a release host on 127.0.0.1, and the receipt `vx upgrade` then reads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from tests.conftest import REPO, base_env
from tests.e2e.releaseserver import ReleaseServer, Route

from vx.selfupdate.release import platform_asset

ASSET = platform_asset()
NEW = b'#!/bin/sh\necho "vx 0.2.0"\n'
NO_START = b"#!/bin/sh\nexit 126\n"

pytestmark = pytest.mark.skipif(
    shutil.which("curl") is None and shutil.which("wget") is None,
    reason="install.sh needs curl or wget, and neither is installed",
)


@pytest.fixture
def server():
    with ReleaseServer() as s:
        yield s


def install(server, tmp_path, **env):
    full = base_env(
        {
            "HOME": str(tmp_path / "home"),
            "VX_UPGRADE_URL": f"{server.url}/",
            "PATH": "/usr/bin:/bin",
            **env,
        }
    )
    return subprocess.run(
        ["sh", str(REPO / "install.sh")],
        cwd=tmp_path,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_it_installs_verifies_and_writes_the_receipt(server, tmp_path):
    server.release("0.2.0", {ASSET: NEW})
    proc = install(server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "home" / ".vx" / "bin" / "vx"
    assert target.read_bytes() == NEW
    assert target.stat().st_mode & 0o777 == 0o755
    assert proc.stdout == (
        f"vx 0.2.0 installed at {target}\n"
        f'add it to your PATH (e.g. in ~/.profile): export PATH="{target.parent}:$PATH"\n'
    )
    receipt = json.loads((target.parent / ".vx-receipt.json").read_text())
    assert receipt == {
        "installer": "install.sh",
        "asset": ASSET,
        "url": server.url,
        "version": "0.2.0",
    }
    assert sorted(p.name for p in target.parent.iterdir()) == [".vx-receipt.json", "vx"]


def test_vx_install_dir_and_a_pinned_version(server, tmp_path):
    server.release("0.2.0", {ASSET: NEW}, latest=False)
    where = tmp_path / "opt" / "bin"
    proc = install(server, tmp_path, VX_INSTALL_DIR=str(where), VX_VERSION="v0.2.0")
    assert proc.returncode == 0, proc.stderr
    assert (where / "vx").read_bytes() == NEW
    assert server.asked == [f"/download/v0.2.0/{ASSET}.sha256", f"/download/v0.2.0/{ASSET}"]


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("bad digest", "the download did not match its SHA-256"),
        ("truncated", "could not download"),
        ("no start", "the downloaded vx does not start on this machine"),
        ("404", "(404) — check VX_VERSION (latest)"),
        ("429", "rate-limiting this address (429)"),
    ],
)
def test_every_failure_is_one_line_and_installs_nothing(server, tmp_path, setup, words):
    if setup == "bad digest":
        server.release("0.2.0", {ASSET: NEW}, digests={ASSET: "a" * 64})
    elif setup == "no start":
        server.release("0.2.0", {ASSET: NO_START})
    elif setup == "truncated":
        server.release("0.2.0", {ASSET: NEW})
        server.routes[f"/latest/download/{ASSET}"].cut = 5
    elif setup == "429":
        server.routes[f"/latest/download/{ASSET}.sha256"] = Route(b"", 429)
    proc = install(server, tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("install.sh: ")
    assert words in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "home" / ".vx").exists()


def test_vx_upgrade_reads_the_receipt_install_sh_wrote(server, tmp_path):
    """The installed file is a vx.pyz here: the receipt names the asset and the mirror."""
    pyz = tmp_path / "build" / "vx.pyz"
    subprocess.run(
        [sys.executable, str(REPO / "build" / "pyz.py"), "--out", str(pyz)],
        check=True,
        capture_output=True,
    )
    server.release("0.1.0", {ASSET: pyz.read_bytes()})
    assert install(server, tmp_path).returncode == 0
    server.release("0.2.0", {ASSET: NEW})
    target = tmp_path / "home" / ".vx" / "bin" / "vx"
    proc = subprocess.run(
        [str(target), "upgrade"],
        cwd=tmp_path,
        env=base_env({"HOME": str(tmp_path / "home")}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == NEW
    receipt = json.loads((target.parent / ".vx-receipt.json").read_text())
    assert receipt["version"] == "0.2.0"
