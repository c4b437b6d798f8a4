"""The npm packages build/npm.py makes, installed into a temp prefix from their tarballs.

The platform package carries a folder whose `vx` is a built vx.pyz (an executable that
answers as the Nuitka binary does) beside a stand-in library; VX_BINARY_PATH points the launcher at small scripts to watch exit codes and
signals go through it. npm runs --offline: nothing comes from a registry.
"""

from __future__ import annotations

import json
import platform
import shutil
import signal
import subprocess
import sys

import pytest
from tests.conftest import REPO, base_env

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="node and npm are not installed",
)


def npm_install(prefix, *tarballs, omit_optional=False):
    argv = ["npm", "install", "-g", "--prefix", str(prefix), "--offline", "--no-audit", "--no-fund"]
    if omit_optional:
        argv.append("--omit=optional")
    subprocess.run([*argv, *map(str, tarballs)], check=True, capture_output=True, timeout=300)


def pack(tmp, *extra):
    """The platform package (its folder's vx a built vx.pyz) and the launcher, packed."""
    pyz = tmp / "vx.pyz"
    subprocess.run(
        [sys.executable, str(REPO / "build" / "pyz.py"), "--out", str(pyz)],
        check=True,
        capture_output=True,
    )
    folder = tmp / "vx_main.dist"
    folder.mkdir()
    shutil.copy2(pyz, folder / "vx")
    (folder / "libpython3.11.so.1.0").write_bytes(b"a library the binary loads")
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "build" / "npm.py"),
            "--folder",
            str(folder),
            "--out",
            str(tmp / "dist"),
            *extra,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    platform_tgz, launcher_tgz = out
    return platform_tgz, launcher_tgz


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    return pack(tmp_path_factory.mktemp("npm"))


@pytest.fixture(scope="module")
def prefix(packed, tmp_path_factory):
    where = tmp_path_factory.mktemp("prefix")
    npm_install(where, *packed)
    return where


def vx(prefix, *args, env=None, cwd=None):
    return subprocess.run(
        [str(prefix / "bin" / "vx"), *args],
        env=base_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_launcher_runs_the_platform_binary(prefix, tmp_path):
    (package,) = (prefix / "lib" / "node_modules").glob("vx-runner-linux-*")
    assert sorted(p.name for p in (package / "bin").iterdir()) == ["libpython3.11.so.1.0", "vx"]
    assert vx(prefix, "--version", cwd=tmp_path).stdout == "vx 0.1.0\n"
    docs = vx(prefix, "docs", "output-logs", "--limit", "1", cwd=tmp_path)
    assert docs.stdout.startswith("── cli > --output-logs"), docs.stderr


def test_upgrade_under_npm_is_refused_naming_npm(prefix, tmp_path):
    proc = vx(prefix, "upgrade", cwd=tmp_path)
    assert proc.returncode == 1
    assert "was installed by npm" in proc.stderr
    assert proc.stderr.endswith("npm install -g vx-runner@latest\n")


def script(tmp_path, body):
    path = tmp_path / "fake-vx"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_exit_codes_and_arguments_pass_through(prefix, tmp_path):
    fake = script(tmp_path, 'echo "args: $*"; echo "by: $VX_INSTALLED_BY"; exit 7\n')
    proc = vx(prefix, "run", "a b", env={"VX_BINARY_PATH": fake})
    assert proc.returncode == 7
    assert proc.stdout == "args: run a b\nby: npm\n"


@pytest.mark.parametrize(
    ("sig", "body", "code"),
    [
        (signal.SIGTERM, "trap 'echo got TERM; exit 42' TERM\n", 42),
        (signal.SIGINT, "", -signal.SIGINT),
    ],
)
def test_signals_reach_the_binary_and_its_end_is_the_launchers(prefix, tmp_path, sig, body, code):
    fake = script(tmp_path, body + "echo ready\nwhile :; do sleep 0.05; done\n")
    proc = subprocess.Popen(
        [str(prefix / "bin" / "vx")],
        env=base_env({"VX_BINARY_PATH": fake}),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == code
        rest = proc.stdout.read()
    finally:
        proc.kill()
    if sig == signal.SIGTERM:
        assert rest == "got TERM\n"


def test_a_missing_platform_package_names_the_fix(packed, tmp_path):
    npm_install(tmp_path / "p", packed[1], omit_optional=True)
    proc = vx(tmp_path / "p", "--version")
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "vx: no vx binary for linux-x64: the package vx-runner-linux-x64 is not installed"
    )
    assert "npm install -g vx-runner " in proc.stderr
    bad = vx(tmp_path / "p", "--version", env={"VX_BINARY_PATH": str(tmp_path / "nothing")})
    assert (
        bad.stderr
        == f"vx: VX_BINARY_PATH names {tmp_path / 'nothing'}, which does not exist — unset it or point it at a vx binary\n"
    )


def test_the_platform_package_records_the_glibc_floor(prefix):
    (package,) = (prefix / "lib" / "node_modules").glob("vx-runner-linux-*")
    manifest = json.loads((package / "package.json").read_text())
    assert manifest["vx"] == {"glibc": "2.17"}
    assert manifest["libc"] == ["glibc"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc is not this libc")
def test_an_older_glibc_than_the_binary_needs_is_refused_in_one_line(tmp_path):
    """A platform package built for glibc 99.0 stands in for this machine's being too old."""
    npm_install(tmp_path / "p", *pack(tmp_path, "--glibc", "99.0"))
    proc = vx(tmp_path / "p", "--version")
    have = platform.libc_ver()[1]
    assert proc.returncode == 1
    assert proc.stderr == (
        f"vx: the vx binary in vx-runner-linux-x64 needs glibc 99.0 or newer, and this system "
        f"has {have} — install vx with pip instead: python3 -m pip install vx-runner "
        "(Python 3.11 or newer)\n"
    )
    assert proc.stdout == ""
