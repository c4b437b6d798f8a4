"""The wheels build/wheels.py makes, installed into temp venvs: `vx` and `python -m vx` in both.

The platform wheel's "binary" here is a built vx.pyz (an executable single file, as the
Nuitka binary is) or a small script that says it was run; the venvs see the system's
site-packages for xxhash, zstandard and watchdog, so nothing is downloaded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO, base_env

SCRIPT_BINARY = '#!/bin/sh\necho "binary ran: $*"\n'


def build(tmp, *extra):
    out = subprocess.run(
        [sys.executable, str(REPO / "build" / "wheels.py"), "--out", str(tmp), *extra],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [p for p in out if p.endswith(".whl")]


def venv_with(tmp, wheel):
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            "--disable-pip-version-check",
            wheel,
        ],
        check=True,
        capture_output=True,
    )
    return venv


def run(argv, cwd):
    return subprocess.run(
        argv,
        cwd=cwd,
        env=base_env({"HOME": str(cwd)}),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def pure_venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pure")
    (wheel,) = build(tmp)
    assert wheel.endswith("-py3-none-any.whl")
    return venv_with(tmp, wheel)


def test_the_pure_wheel_runs_vx_and_python_m_vx(pure_venv, tmp_path):
    assert run([str(pure_venv / "bin" / "vx"), "--version"], tmp_path).stdout == "vx 0.1.0\n"
    module = run([str(pure_venv / "bin" / "python"), "-m", "vx", "--version"], tmp_path)
    assert module.stdout == "vx 0.1.0\n", module.stderr
    where = run(
        [str(pure_venv / "bin" / "python"), "-c", "import vx; print(vx.__file__)"], tmp_path
    )
    assert where.stdout.startswith(str(pure_venv)), "the venv's vx was not the one imported"


def test_the_pure_wheel_carries_the_manual(pure_venv, tmp_path):
    docs = run([str(pure_venv / "bin" / "vx"), "docs", "output-logs", "--limit", "1"], tmp_path)
    assert docs.stdout.startswith("── cli > --output-logs"), docs.stderr


def test_upgrade_is_refused_for_a_pip_install_naming_pip(pure_venv, tmp_path):
    proc = run([str(pure_venv / "bin" / "vx"), "upgrade"], tmp_path)
    assert proc.returncode == 1
    assert "was installed by pip" in proc.stderr
    assert proc.stderr.endswith("python3 -m pip install --upgrade vx-runner\n")


def folder_with(tmp, vx_bytes):
    folder = tmp / "vx_main.dist"
    (folder / "share" / "docs").mkdir(parents=True)
    (folder / "vx").write_bytes(vx_bytes)
    (folder / "vx").chmod(0o755)
    (folder / "libpython3.11.so.1.0").write_bytes(b"a library the binary loads")
    return folder


def platform_venv(tmp, vx_bytes):
    folder = folder_with(tmp, vx_bytes)
    wheels = build(tmp / "dist", "--folder", str(folder), "--platform-tag", "manylinux_2_17_x86_64")
    (platform_wheel,) = [w for w in wheels if "manylinux" in w]
    return venv_with(tmp, platform_wheel)


def test_the_platform_wheel_runs_the_folders_binary(tmp_path):
    venv = platform_venv(tmp_path, SCRIPT_BINARY.encode())
    (site,) = (venv / "lib").glob("python3*/site-packages")
    binary = site / "vx" / "_bin" / "vx"
    assert binary.read_text() == SCRIPT_BINARY
    assert (binary.parent / "libpython3.11.so.1.0").is_file()
    assert (venv / "bin" / "vx").read_text().startswith("#!/bin/sh\n")
    assert run([str(venv / "bin" / "vx"), "run", "x"], tmp_path).stdout == "binary ran: run x\n"
    module = run([str(venv / "bin" / "python"), "-m", "vx", "--version"], tmp_path)
    assert module.stdout == "binary ran: --version\n", module.stderr


def test_the_launcher_follows_a_symlink_to_its_script(tmp_path):
    """pipx and ~/.local/bin links put `vx` away from its prefix."""
    venv = platform_venv(tmp_path, SCRIPT_BINARY.encode())
    elsewhere = tmp_path / "links"
    elsewhere.mkdir()
    (elsewhere / "vx").symlink_to(venv / "bin" / "vx")
    assert run([str(elsewhere / "vx"), "--version"], tmp_path).stdout == "binary ran: --version\n"


def test_a_binary_pip_installed_is_refused_by_upgrade(tmp_path):
    pyz = tmp_path / "vx.pyz"
    subprocess.run(
        [sys.executable, str(REPO / "build" / "pyz.py"), "--out", str(pyz)],
        check=True,
        capture_output=True,
    )
    venv = platform_venv(tmp_path, pyz.read_bytes())
    proc = run([str(venv / "bin" / "vx"), "upgrade"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.endswith("python3 -m pip install --upgrade vx-runner\n"), proc.stderr


def test_pip_takes_the_platform_wheel_for_python_3_10(tmp_path):
    """The platform wheel needs no Python of its own: pip picks it for an older one too."""
    folder = folder_with(tmp_path, SCRIPT_BINARY.encode())
    tag = "manylinux_2_17_x86_64"
    build(tmp_path / "dist", "--folder", str(folder), "--platform-tag", tag)
    picked = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--no-index", "--find-links", str(tmp_path / "dist"),
         "--only-binary=:all:", "--python-version", "3.10", "--platform", tag,
         "--dest", str(tmp_path / "got"), "vx-runner"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert picked.returncode == 0, picked.stderr
    assert [p.name for p in (tmp_path / "got").iterdir()] == [f"vx_runner-0.1.0-py3-none-{tag}.whl"]


def python310():
    """A Python 3.10 that runs: on PATH, or one pyenv installed but has not activated."""
    found = [
        shutil.which("python3.10"),
        *map(str, Path.home().glob(".pyenv/versions/3.10*/bin/python3.10")),
    ]
    for candidate in filter(None, found):
        if (
            subprocess.run(
                [candidate, "-c", "import venv"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return candidate
    return pytest.skip("no Python 3.10 here to install the platform wheel with")


def test_the_platform_wheel_installs_and_runs_under_python_3_10(tmp_path):
    python = python310()
    folder = folder_with(tmp_path, SCRIPT_BINARY.encode())
    wheels = build(tmp_path / "dist", "--folder", str(folder), "--platform-tag", "linux_x86_64")
    (wheel,) = [w for w in wheels if "linux_x86_64" in w]
    venv = tmp_path / "venv310"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-index", "--disable-pip-version-check", wheel],
        check=True, capture_output=True,
    )  # fmt: skip
    assert (
        run([str(venv / "bin" / "vx"), "--version"], tmp_path).stdout == "binary ran: --version\n"
    )
    module = run([str(venv / "bin" / "python"), "-m", "vx", "--version"], tmp_path)
    assert module.stdout == "binary ran: --version\n", module.stderr
