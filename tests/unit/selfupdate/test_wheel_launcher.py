"""The platform wheel's sh launcher picks the binary pip installed with it, run as a real sh."""

from __future__ import annotations

import os
import subprocess

from tests.e2e.releaseserver import load_build_script


def prefix_with(tmp_path, installs):
    """A pip prefix: the launcher as bin/vx, and per (python, mtime) a vx package whose
    binary says which it is, its RECORD stamped with that mtime."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    launcher = prefix / "bin" / "vx"
    launcher.write_text(load_build_script("wheels").LAUNCHER)
    launcher.chmod(0o755)
    for python, mtime in installs:
        site = prefix / "lib" / python / "site-packages"
        binary = site / "vx" / "_bin" / "vx"
        binary.parent.mkdir(parents=True)
        binary.write_text(f'#!/bin/sh\necho "{python} $*"\n')
        binary.chmod(0o755)
        record = site / "vx_runner-0.2.0.dist-info" / "RECORD"
        record.parent.mkdir()
        record.write_text("../../../bin/vx,,\n")
        os.utime(record, (mtime, mtime))
    return launcher


def run(launcher):
    return subprocess.run(
        [str(launcher), "--version"], capture_output=True, text=True, check=False, timeout=60
    )


def test_the_newest_install_wins_over_sort_order(tmp_path):
    """python3.10 sorts before python3.9; the stale one under 3.10 is not picked."""
    launcher = prefix_with(tmp_path, [("python3.10", 1_000_000), ("python3.9", 2_000_000)])
    assert run(launcher).stdout == "python3.9 --version\n"


def test_a_later_install_under_another_python_wins(tmp_path):
    launcher = prefix_with(tmp_path, [("python3.9", 1_000_000), ("python3.12", 2_000_000)])
    assert run(launcher).stdout == "python3.12 --version\n"


def test_through_a_symlink_and_without_a_binary(tmp_path):
    launcher = prefix_with(tmp_path, [("python3.11", 1_000_000)])
    elsewhere = tmp_path / "local-bin"
    elsewhere.mkdir()
    (elsewhere / "vx").symlink_to(launcher)
    assert run(elsewhere / "vx").stdout == "python3.11 --version\n"
    (
        launcher.parent.parent / "lib" / "python3.11" / "site-packages" / "vx" / "_bin" / "vx"
    ).unlink()
    proc = run(launcher)
    assert proc.returncode == 1
    assert proc.stderr.startswith("vx: the vx binary is missing under")
