"""install.sh against a release host on 127.0.0.1, and the receipt `vx upgrade` then reads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from tests.conftest import REPO, base_env
from tests.e2e.releaseserver import ReleaseServer, Route, folder_tarball

from vx.selfupdate.release import platform_key

PLAT = platform_key()
NEW = b'#!/bin/sh\necho "vx 0.2.0"\n'
NO_START = b"#!/bin/sh\nexit 126\n"


def asset(version):
    return f"vx-{version}-{PLAT}.tar.gz"


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


def publish(server, tmp_path, version, vx, **kw):
    tarball = folder_tarball(tmp_path / "release", version, vx)
    server.release(version, {tarball.name: tarball.read_bytes()}, **kw)
    return tarball


def test_it_installs_verifies_and_writes_the_receipt(server, tmp_path):
    publish(server, tmp_path, "0.2.0", NEW)
    proc = install(server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    root = tmp_path / "home" / ".vx"
    link = root / "bin" / "vx"
    assert link.is_symlink()
    assert str(link.readlink()) == "../lib/vx-0.2.0/vx"
    assert link.read_bytes() == NEW
    assert link.resolve().stat().st_mode & 0o777 == 0o755
    folder = root / "lib" / "vx-0.2.0"
    assert sorted(p.name for p in folder.iterdir()) == ["libpython3.11.so.1.0", "share", "vx"]
    assert proc.stdout == (
        f"vx 0.2.0 installed at {link}\n"
        f'add it to your PATH (e.g. in ~/.profile): export PATH="{link.parent}:$PATH"\n'
    )
    receipt = json.loads((root / ".vx-receipt.json").read_text())
    assert receipt == {
        "installer": "install.sh",
        "asset": asset("0.2.0"),
        "url": server.url,
        "version": "0.2.0",
    }
    assert sorted(p.name for p in root.iterdir()) == [".vx-receipt.json", "bin", "lib"]
    assert [p.name for p in (root / "lib").iterdir()] == ["vx-0.2.0"]
    assert server.asked == [
        "/latest/download/release.json",
        f"/latest/download/{asset('0.2.0')}.sha256",
        f"/latest/download/{asset('0.2.0')}",
    ]


def test_a_second_install_flips_the_link_and_drops_the_old_folder(server, tmp_path):
    publish(server, tmp_path, "0.1.0", b'#!/bin/sh\necho "vx 0.1.0"\n')
    assert install(server, tmp_path).returncode == 0
    publish(server, tmp_path, "0.2.0", NEW)
    proc = install(server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    root = tmp_path / "home" / ".vx"
    assert (root / "bin" / "vx").read_bytes() == NEW
    assert [p.name for p in (root / "lib").iterdir()] == ["vx-0.2.0"]
    assert sorted(p.name for p in (root / "bin").iterdir()) == ["vx"]


def test_vx_install_dir_and_a_pinned_version(server, tmp_path):
    publish(server, tmp_path, "0.2.0", NEW, latest=False)
    where = tmp_path / "opt" / "vx"
    proc = install(server, tmp_path, VX_INSTALL_DIR=str(where), VX_VERSION="v0.2.0")
    assert proc.returncode == 0, proc.stderr
    assert (where / "bin" / "vx").read_bytes() == NEW
    assert (where / "lib" / "vx-0.2.0" / "vx").is_file()
    assert server.asked == [
        "/download/v0.2.0/release.json",
        f"/download/v0.2.0/{asset('0.2.0')}.sha256",
        f"/download/v0.2.0/{asset('0.2.0')}",
    ]


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("bad digest", "the download did not match its SHA-256"),
        ("truncated", "could not download"),
        ("not a tarball", "could not unpack"),
        ("no start", "the downloaded vx does not start on this machine"),
        ("wrong version", 'answers "vx 9.9.9", not "vx 0.2.0"'),
        ("404", "(404) — check VX_VERSION (latest)"),
        (
            "404 asset",
            f"(404) — check VX_VERSION (latest) and that this release has {asset('0.2.0')}",
        ),
        ("429", "rate-limiting this address (429)"),
    ],
)
def test_every_failure_is_one_line_and_installs_nothing(server, tmp_path, setup, words):
    name = asset("0.2.0")
    if setup == "bad digest":
        tarball = folder_tarball(tmp_path / "release", "0.2.0", NEW)
        server.release("0.2.0", {name: tarball.read_bytes()}, digests={name: "a" * 64})
    elif setup == "no start":
        publish(server, tmp_path, "0.2.0", NO_START)
    elif setup == "wrong version":
        publish(server, tmp_path, "0.2.0", b'#!/bin/sh\necho "vx 9.9.9"\n')
    elif setup == "not a tarball":
        server.release("0.2.0", {name: b"<html>sign in to the wifi</html>"})
    elif setup == "truncated":
        publish(server, tmp_path, "0.2.0", NEW)
        server.routes[f"/latest/download/{name}"].cut = 5
    elif setup == "404 asset":
        publish(server, tmp_path, "0.2.0", NEW)
        del server.routes[f"/latest/download/{name}"]
    elif setup == "429":
        server.routes["/latest/download/release.json"] = Route(b"", 429)
    proc = install(server, tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("install.sh: ")
    assert words in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "home" / ".vx").exists()


def test_vx_upgrade_reads_the_receipt_install_sh_wrote(server, tmp_path):
    """The folder's vx is a vx.pyz here: the receipt names the mirror, the upgrade flips the
    link to the new folder and keeps the old one (the running vx's)."""
    pyz = tmp_path / "build" / "vx.pyz"
    subprocess.run(
        [sys.executable, str(REPO / "build" / "pyz.py"), "--out", str(pyz)],
        check=True,
        capture_output=True,
    )
    publish(server, tmp_path, "0.1.0", pyz.read_bytes())
    assert install(server, tmp_path).returncode == 0
    publish(server, tmp_path, "0.2.0", NEW)
    root = tmp_path / "home" / ".vx"
    link = root / "bin" / "vx"
    proc = subprocess.run(
        [str(link), "upgrade"],
        cwd=tmp_path,
        env=base_env({"HOME": str(tmp_path / "home")}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"vx 0.1.0 → 0.2.0: installed at {link}\n"
    assert str(link.readlink()) == "../lib/vx-0.2.0/vx"
    assert link.read_bytes() == NEW
    assert sorted(p.name for p in (root / "lib").iterdir()) == ["vx-0.1.0", "vx-0.2.0"]
    receipt = json.loads((root / ".vx-receipt.json").read_text())
    assert receipt["version"] == "0.2.0"
    assert receipt["asset"] == asset("0.2.0")
