"""`vx upgrade` of the binary's folder install against a release host on 127.0.0.1.

install.sh's layout is built by hand: `<root>/lib/vx-0.1.0/vx` (a built vx.pyz standing in
for the binary, which answers and upgrades the same way) and `<root>/bin/vx`, a relative
symlink to it. Each new release is a tarball build/tarball.py packed, its `vx` a small
script answering `--version`.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from tests.conftest import base_env
from tests.e2e.releaseserver import (
    ReleaseServer,
    Route,
    folder_tarball,
    gone_by_deadline,
    hanging_vx,
    interrupt_when_marked,
)

from vx.selfupdate.release import platform_key

NEW = b'#!/bin/sh\necho "vx 0.2.0"\n'
NO_START = b"#!/bin/sh\necho 'cannot execute: wrong ELF class' >&2\nexit 126\n"
WRONG_VERSION = b'#!/bin/sh\necho "vx 9.9.9"\n'
HANGS = b"#!/bin/sh\nsleep 600 &\nsleep 600\n"
ASSET = f"vx-0.2.0-{platform_key()}.tar.gz"


@pytest.fixture
def root(built_pyz, tmp_path):
    """install.sh's layout, vx 0.1.0 installed."""
    root = tmp_path / "vxroot"
    (root / "lib" / "vx-0.1.0").mkdir(parents=True)
    (root / "bin").mkdir()
    exe = root / "lib" / "vx-0.1.0" / "vx"
    shutil.copy2(built_pyz, exe)
    exe.chmod(0o751)
    (root / "bin" / "vx").symlink_to("../lib/vx-0.1.0/vx")
    return root


@pytest.fixture
def server():
    with ReleaseServer() as s:
        yield s


def publish(server, tmp_path, vx, **kw):
    tarball = folder_tarball(tmp_path / "release", "0.2.0", vx)
    server.release("0.2.0", {tarball.name: tarball.read_bytes()}, **kw)


def upgrade(root, server_url, *args):
    return subprocess.run(
        [str(root / "bin" / "vx"), "upgrade", *args],
        cwd=root,
        env=base_env({"VX_UPGRADE_URL": server_url}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def state(root):
    """Where bin/vx leads, and every name in bin/ and lib/ (no partial file left behind)."""
    return (
        str((root / "bin" / "vx").readlink()),
        sorted(p.name for p in (root / "bin").iterdir()),
        sorted(p.name for p in (root / "lib").iterdir()),
    )


BEFORE = ("../lib/vx-0.1.0/vx", ["vx"], ["vx-0.1.0"])


def test_a_good_release_unpacks_beside_and_flips_the_link(root, server, tmp_path):
    (root / "lib" / "vx-0.0.9").mkdir()  # a version before the running one: dropped
    publish(server, tmp_path, NEW)
    proc = upgrade(root, server.url)
    assert proc.returncode == 0, proc.stderr
    link = root / "bin" / "vx"
    assert proc.stdout == f"vx 0.1.0 → 0.2.0: installed at {link}\n"
    assert state(root) == ("../lib/vx-0.2.0/vx", ["vx"], ["vx-0.1.0", "vx-0.2.0"])
    assert link.read_bytes() == NEW
    new = root / "lib" / "vx-0.2.0"
    assert (new / "vx").stat().st_mode & 0o7777 == 0o751
    assert sorted(p.name for p in new.iterdir()) == ["libpython3.11.so.1.0", "share", "vx"]
    assert server.asked == ["/latest/download/release.json", f"/latest/download/{ASSET}"]


def test_a_tag_pins_that_release(root, server, tmp_path):
    publish(server, tmp_path, NEW, latest=False)
    proc = upgrade(root, server.url, "v0.2.0")
    assert proc.returncode == 0, proc.stderr
    assert server.asked == ["/download/v0.2.0/release.json", f"/download/v0.2.0/{ASSET}"]


def test_the_same_version_downloads_nothing(root, server):
    server.release("0.1.0", {f"vx-0.1.0-{platform_key()}.tar.gz": b"x"})
    proc = upgrade(root, server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"already at 0.1.0 ({root / 'bin' / 'vx'}) — nothing downloaded\n"
    assert state(root) == BEFORE


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("bad digest", "did not match the release's SHA-256"),
        ("truncated", "the connection ended early"),
        ("not a tarball", f"could not unpack {ASSET}"),
        ("stray member", "lies outside vx-0.2.0-"),
        ("no asset", f"has no {ASSET} for this platform"),
        ("404", "(404)"),
        ("429", "is rate-limiting this address (429); try again in 60 s"),
    ],
)
def test_a_bad_download_replaces_nothing(root, server, tmp_path, setup, words):
    if setup == "bad digest":
        publish(server, tmp_path, NEW, digests={ASSET: "0" * 64})
    elif setup == "truncated":
        publish(server, tmp_path, NEW)
        server.routes[f"/latest/download/{ASSET}"].cut = 10
    elif setup == "not a tarball":
        server.release("0.2.0", {ASSET: b"<html>sign in to the wifi</html>"})
    elif setup == "stray member":
        other = folder_tarball(tmp_path / "release", "0.2.0", NEW, plat="plan9-mips")
        server.release("0.2.0", {ASSET: other.read_bytes()})
    elif setup == "no asset":
        server.release("0.2.0", {"vx-0.2.0-plan9-mips.tar.gz": NEW})
    else:
        publish(server, tmp_path, NEW)
        status, headers = (404, {}) if setup == "404" else (429, {"Retry-After": "60"})
        server.routes[f"/latest/download/{ASSET}"] = Route(b"no", status, headers)
    proc = upgrade(root, server.url)
    assert proc.returncode == 1
    assert words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr  # the download notice + one
    assert "Traceback" not in proc.stderr
    assert state(root) == BEFORE


@pytest.mark.parametrize(
    ("vx", "words"),
    [
        (NO_START, "--version exited 126: cannot execute: wrong ELF class"),
        (WRONG_VERSION, '--version answered "vx 9.9.9", not "vx 0.2.0"'),
        (HANGS, "no answer to --version within 10 s"),
    ],
)
def test_a_binary_that_does_not_start_is_rolled_back(root, server, tmp_path, vx, words):
    publish(server, tmp_path, vx)
    proc = upgrade(root, server.url)
    assert proc.returncode == 1
    assert words in proc.stderr
    assert f"the previous vx is back in place at {root / 'bin' / 'vx'}" in proc.stderr
    assert state(root) == BEFORE
    assert (root / "lib" / "vx-0.1.0" / "vx").stat().st_mode & 0o7777 == 0o751


def test_an_unwritable_lib_is_refused_before_the_download(root, server, tmp_path):
    publish(server, tmp_path, NEW)
    lib = root / "lib"
    if subprocess.run(["chattr", "+i", str(lib)], check=False).returncode != 0:
        pytest.skip("chattr +i is refused here: cannot make a directory unwritable for root")
    try:
        proc = upgrade(root, server.url)
    finally:
        subprocess.run(["chattr", "-i", str(lib)], check=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"cannot write to {lib} (EACCES)")
    assert server.asked == []


def test_a_folder_outside_the_layout_is_a_zipapp_replaced_in_place(root, server, tmp_path):
    """Without bin/vx leading to it, the file is just a vx.pyz: its own asset, swapped whole."""
    (root / "bin" / "vx").unlink()
    exe = root / "lib" / "vx-0.1.0" / "vx"
    server.release("0.2.0", {"vx.pyz": NEW})
    proc = subprocess.run(
        [str(exe), "upgrade"],
        env=base_env({"VX_UPGRADE_URL": server.url}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert exe.read_bytes() == NEW


def test_ctrl_c_during_the_probe_puts_the_old_link_back_and_kills_the_probe(root, server, tmp_path):
    marker = tmp_path / "probed"
    publish(server, tmp_path, hanging_vx(marker))
    code, err, pid = interrupt_when_marked(
        [str(root / "bin" / "vx"), "upgrade"], base_env({"VX_UPGRADE_URL": server.url}), marker
    )
    assert code != 0
    assert "Traceback" not in err
    assert state(root) == BEFORE
    assert gone_by_deadline(pid)


def test_a_release_whose_folder_is_the_running_one_is_refused_in_one_line(root, server, tmp_path):
    """vx 0.1.0's executable sits in lib/vx-0.2.0 (a hand-made mix-up): nothing renamed onto it."""
    (root / "lib" / "vx-0.1.0").rename(root / "lib" / "vx-0.2.0")
    (root / "bin" / "vx").unlink()
    (root / "bin" / "vx").symlink_to("../lib/vx-0.2.0/vx")
    publish(server, tmp_path, NEW)
    proc = upgrade(root, server.url)
    assert proc.returncode == 1
    assert "is this vx's own folder, yet this vx answers another version" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert state(root) == ("../lib/vx-0.2.0/vx", ["vx"], ["vx-0.2.0"])
