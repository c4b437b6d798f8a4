"""The standalone binary build/binary.py makes with Nuitka, and smoke tests against it.

A Nuitka build compiles vx and the standard library modules it reaches to C: 10-15 minutes
on a 2-core machine, too long for the test suite's every run. So the build runs only when
asked: VX_BUILD_BINARY=1 builds it (VX_BINARY_MODE=standalone|onefile, default standalone,
the folder releases ship), or VX_BINARY_UNDER_TEST=PATH tests one already built (the `vx`
inside a standalone folder, or a onefile binary). `.ci/run` installs nuitka and runs this
file alone with VX_BUILD_BINARY=1, after the suite; the release workflow builds and
smoke-tests the binary on every platform.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO, base_env, make_git_workspace
from tests.e2e.releaseserver import ReleaseServer, folder_tarball, load_build_script

GIVEN = os.environ.get("VX_BINARY_UNDER_TEST", "")
MODE = os.environ.get("VX_BINARY_MODE", "standalone")

if not GIVEN and os.environ.get("VX_BUILD_BINARY") != "1":
    pytest.skip(
        "the Nuitka build takes 10-40 minutes: set VX_BUILD_BINARY=1 to build and test it, or "
        "VX_BINARY_UNDER_TEST=PATH to test a built one",
        allow_module_level=True,
    )
if not GIVEN and importlib.util.find_spec("nuitka") is None:
    pytest.skip("nuitka is not installed (python3 -m pip install nuitka)", allow_module_level=True)
if not GIVEN and not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler on PATH: Nuitka needs one to build vx", allow_module_level=True)
if not GIVEN and sys.platform == "linux" and shutil.which("patchelf") is None:
    pytest.skip(
        "patchelf is not installed: a Linux standalone build needs it", allow_module_level=True
    )


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    if GIVEN:
        return Path(GIVEN)
    out = tmp_path_factory.mktemp("binary")
    done = subprocess.run(
        [sys.executable, str(REPO / "build" / "binary.py"), "--mode", MODE, "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.split()[-1])


def vx(binary, args, cwd, home):
    return subprocess.run(
        [str(binary), *args],
        cwd=cwd,
        env=base_env({"HOME": str(home)}),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_version_and_the_bundled_python(binary, tmp_path):
    assert vx(binary, ["--version"], tmp_path, tmp_path).stdout == "vx 0.1.0\n"
    ws = make_git_workspace(tmp_path / "ws", {"package.json": {"name": "solo"}})
    info = vx(binary, ["info", "--format", "json"], ws, tmp_path)
    assert '"python": "bundled"' in info.stdout, info.stderr


def test_the_manual_is_inside(binary, tmp_path):
    docs = vx(binary, ["docs", "output-logs", "--limit", "1"], tmp_path, tmp_path)
    assert docs.stdout.startswith("── cli > --output-logs"), docs.stderr


def test_a_run_then_a_cached_run(binary, tmp_path):
    ws = make_git_workspace(
        tmp_path / "ws",
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {
                "tasks": {
                    "build": {
                        "exec": "mkdir -p out && echo hi > out/x",
                        "cache": {"outputs": {"files": ["out/**"]}},
                    }
                }
            },
        },
    )
    first = vx(binary, ["run", "build"], ws, tmp_path)
    assert first.returncode == 0, first.stderr
    again = vx(binary, ["run", "build", "--summarize=s.json"], ws, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "cached" in again.stdout + again.stderr


def test_install_sh_then_vx_upgrade(binary, tmp_path):
    """The folder packed as its release tarball, installed by install.sh, upgraded by itself."""
    if (MODE == "onefile" and not GIVEN) or not (binary.parent / "share").is_dir():
        pytest.skip("a onefile build is one file: releases ship the standalone folder")
    if shutil.which("curl") is None and shutil.which("wget") is None:
        pytest.skip("install.sh needs curl or wget, and neither is installed")
    tarball = load_build_script("tarball")
    asset = tarball.pack(binary.parent, tmp_path / "assets", "0.1.0", tarball.host_platform())
    new = folder_tarball(tmp_path / "release", "0.2.0", b'#!/bin/sh\necho "vx 0.2.0"\n')
    home = tmp_path / "home"
    env = base_env({"HOME": str(home), "PATH": "/usr/bin:/bin"})
    with ReleaseServer() as server:
        env["VX_UPGRADE_URL"] = server.url
        server.release("0.1.0", {asset.name: asset.read_bytes()})
        installed = subprocess.run(
            ["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, check=False
        )
        assert installed.returncode == 0, installed.stderr
        link = home / ".vx" / "bin" / "vx"
        assert vx(link, ["--version"], tmp_path, home).stdout == "vx 0.1.0\n"
        docs = vx(link, ["docs", "output-logs", "--limit", "1"], tmp_path, home)
        assert docs.stdout.startswith("── cli > --output-logs"), docs.stderr
        server.release("0.2.0", {new.name: new.read_bytes()})
        proc = subprocess.run(
            [str(link), "upgrade"], env=env, capture_output=True, text=True, check=False
        )
    assert proc.returncode == 0, proc.stderr
    assert str(link.readlink()) == "../lib/vx-0.2.0/vx"
    assert sorted(p.name for p in (home / ".vx" / "lib").iterdir()) == ["vx-0.1.0", "vx-0.2.0"]


def test_the_reapi_cache_works_from_the_binary(binary, tmp_path):
    """grpcio is built in: a second clone restores what the first uploaded to BuildGrid."""
    from tests.conftest import VxResult
    from tests.e2e.remoteservers import buildgrid_server
    from tests.e2e.test_remote_turbo import clone, files, outcomes

    origin = make_git_workspace(tmp_path / "origin", files(plugin="vx.plugins.reapi:plugin"))
    argv = ["run", "build", "--all", "--output-logs=full"]
    with buildgrid_server(tmp_path / "bgd") as server:
        for name in ("one", "two"):  # each with a home, so a store, of its own
            env = base_env({"HOME": str(tmp_path / f"h-{name}"), "VX_REAPI_URL": server.url})
            ran = subprocess.run(
                [str(binary), *argv],
                cwd=clone(origin, tmp_path / name),
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            assert ran.returncode == 0, ran.stderr
    second = VxResult(tuple(argv), tmp_path / "two", ran.returncode, ran.stdout, ran.stderr)
    assert outcomes(second) == dict.fromkeys(("a#build", "b#build", "c#build"), "restored-remote")
