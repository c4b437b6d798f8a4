"""install.sh against a release host on 127.0.0.1, and the receipt `vx upgrade` then reads."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile

import pytest
from tests.conftest import REPO, base_env
from tests.e2e.releaseserver import (
    ReleaseServer,
    Route,
    folder_tarball,
    gone_by_deadline,
    hanging_vx,
    interrupt_when_marked,
)

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


def test_a_second_install_flips_the_link_and_keeps_only_the_previous_folder(server, tmp_path):
    """The folder bin/vx led to stays (a running vx still loads from it); older ones go."""
    for version in ("0.1.0", "0.2.0", "0.3.0"):
        publish(server, tmp_path, version, f'#!/bin/sh\necho "vx {version}"\n'.encode())
        proc = install(server, tmp_path)
        assert proc.returncode == 0, proc.stderr
    root = tmp_path / "home" / ".vx"
    assert str((root / "bin" / "vx").readlink()) == "../lib/vx-0.3.0/vx"
    assert sorted(p.name for p in (root / "lib").iterdir()) == ["vx-0.2.0", "vx-0.3.0"]
    assert sorted(p.name for p in (root / "bin").iterdir()) == ["vx"]


def test_reinstalling_the_version_in_use_never_moves_its_folder(server, tmp_path):
    """The live lib/vx-0.2.0 is neither renamed nor removed: the new copy gets its own name."""
    publish(server, tmp_path, "0.2.0", NEW)
    assert install(server, tmp_path).returncode == 0
    root = tmp_path / "home" / ".vx"
    live = root / "lib" / "vx-0.2.0"
    inode = live.stat().st_ino
    proc = install(server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    link = root / "bin" / "vx"
    target = str(link.readlink())
    assert target.startswith("../lib/vx-0.2.0-")
    assert target.endswith("/vx")
    assert link.read_bytes() == NEW
    assert live.stat().st_ino == inode
    again = target.split("/")[2]
    assert sorted(p.name for p in (root / "lib").iterdir()) == ["vx-0.2.0", again]
    assert install(server, tmp_path).returncode == 0  # and back to the plain name
    assert str(link.readlink()) == "../lib/vx-0.2.0/vx"
    assert sorted(p.name for p in (root / "lib").iterdir()) == ["vx-0.2.0", again]


def test_nothing_is_unpacked_or_run_under_tmp(server, tmp_path):
    """The probe runs inside the root (a noexec /tmp would fail it): no temp dir is needed."""
    publish(server, tmp_path, "0.2.0", NEW)
    proc = install(server, tmp_path, TMPDIR=str(tmp_path / "no-such-tmp"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "home" / ".vx" / "bin" / "vx").read_bytes() == NEW


@pytest.mark.skipif(shutil.which("curl") is None, reason="wget may refuse quotes in a URL")
def test_the_receipt_escapes_the_url(server, tmp_path):
    publish(server, tmp_path, "0.2.0", NEW)
    url = server.url.replace("http://", 'http://u"s\\r@')
    proc = install(server, tmp_path, VX_UPGRADE_URL=url)
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads((tmp_path / "home" / ".vx" / ".vx-receipt.json").read_text())
    assert receipt["url"] == url


def test_an_interrupt_before_the_flip_installs_nothing(server, tmp_path):
    """Ctrl-C while the new vx is probed: the trap removes the work folder and says so."""
    publish(server, tmp_path, "0.1.0", b'#!/bin/sh\necho "vx 0.1.0"\n')
    assert install(server, tmp_path).returncode == 0
    root = tmp_path / "home" / ".vx"
    marker = tmp_path / "probed"
    publish(server, tmp_path, "0.2.0", hanging_vx(marker))
    env = base_env(
        {"HOME": str(tmp_path / "home"), "VX_UPGRADE_URL": server.url, "PATH": "/usr/bin:/bin"}
    )
    code, err, pid = interrupt_when_marked(
        ["sh", str(REPO / "install.sh")], env, marker, whole_group=True
    )
    assert code == 1
    assert err == "install.sh: interrupted — nothing installed\n"
    assert str((root / "bin" / "vx").readlink()) == "../lib/vx-0.1.0/vx"
    assert sorted(p.name for p in (root / "lib").iterdir()) == ["vx-0.1.0"]
    assert sorted(p.name for p in (root / "bin").iterdir()) == ["vx"]
    assert gone_by_deadline(pid)


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
        ("hangs", "did not answer --version within 10 s"),
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
    elif setup == "hangs":
        if shutil.which("timeout") is None:
            pytest.skip("no timeout(1) here: install.sh probes without a time limit")
        publish(server, tmp_path, "0.2.0", b"#!/bin/sh\nsleep 600 &\nsleep 600\n")
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


def test_a_new_vx_leaving_a_daemon_on_its_stdout_is_not_waited_for(server, tmp_path):
    """The probe's answer goes to a file, so a process the new vx leaves behind in a session
    of its own, holding what was its stdout, does not keep install.sh waiting."""
    marker = tmp_path / "daemon"
    vx = (
        "#!/bin/sh\n"
        f'setsid sh -c \'echo $$ >"{marker}.tmp" && mv "{marker}.tmp" "{marker}" && exec sleep 600\' &\n'
        f'while [ ! -e "{marker}" ]; do sleep 0.01; done\n'  # the daemon has left our session
        'echo "vx 0.2.0"\n'
    ).encode()
    publish(server, tmp_path, "0.2.0", vx)
    try:
        proc = install(server, tmp_path)
    finally:
        if marker.exists():
            os.kill(int(marker.read_text()), signal.SIGKILL)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "home" / ".vx" / "bin" / "vx").read_bytes() == vx


def test_work_folders_of_killed_runs_are_swept_and_a_live_runs_kept(server, tmp_path):
    lib = tmp_path / "home" / ".vx" / "lib"
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = subprocess.Popen(["sleep", "600"])
    try:
        for pid in (dead.pid, live.pid):
            (lib / f".vx-install-{pid}" / "unpacked").mkdir(parents=True)
            (lib / f".vx-install-{pid}" / "vx.tar.gz").write_bytes(b"half a download")
        publish(server, tmp_path, "0.2.0", NEW)
        proc = install(server, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in lib.iterdir()) == [f".vx-install-{live.pid}", "vx-0.2.0"]
    finally:
        live.kill()
        live.wait()


def linked_tarball(work, version, link, target):
    """A release tarball whose folder holds vx and one symlink `link` → `target`."""
    top = f"vx-{version}-{PLAT}"
    path = work / f"{top}.tar.gz"
    work.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, kind in ((top, tarfile.DIRTYPE), (f"{top}/lib", tarfile.DIRTYPE)):
            info = tarfile.TarInfo(name)
            info.type, info.mode = kind, 0o755
            tar.addfile(info)
        info = tarfile.TarInfo(f"{top}/vx")
        info.size, info.mode = len(NEW), 0o755
        tar.addfile(info, io.BytesIO(NEW))
        info = tarfile.TarInfo(f"{top}/{link}")
        info.type, info.linkname = tarfile.SYMTYPE, target
        tar.addfile(info)
    return path


@pytest.mark.parametrize(
    ("link", "target", "refused"),
    [
        ("lib/escape", "../../outside", True),
        ("escape", "../vx-0.1.0/vx", True),
        ("lib/abs", "/etc/passwd", True),
        ("lib/inside", "../vx", False),
        ("lib/here", "./a/../b", False),
    ],
)
def test_a_release_whose_links_leave_its_folder_is_refused(server, tmp_path, link, target, refused):
    tarball = linked_tarball(tmp_path / "release", "0.2.0", link, target)
    server.release("0.2.0", {tarball.name: tarball.read_bytes()})
    proc = install(server, tmp_path)
    if not refused:
        assert proc.returncode == 0, proc.stderr
        return
    top = f"vx-0.2.0-{PLAT}"
    assert proc.stderr == (
        f"install.sh: could not unpack {tarball.name} ({top}/{link} links to {target}, "
        f"outside {top}/) — nothing installed\n"
    )
    assert not (tmp_path / "home" / ".vx").exists()


def test_a_member_outside_the_top_folder_is_refused(server, tmp_path):
    other = folder_tarball(tmp_path / "release", "0.2.0", NEW, plat="plan9-mips")
    server.release("0.2.0", {asset("0.2.0"): other.read_bytes()})
    proc = install(server, tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"install.sh: could not unpack {asset('0.2.0')} (vx-0.2.0-plan9")
    assert f"lies outside vx-0.2.0-{PLAT}/) — nothing installed\n" in proc.stderr
    assert not (tmp_path / "home" / ".vx").exists()
