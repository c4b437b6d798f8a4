"""release.yml's promises, checked by running its own shell and its floor check for real.

The publish step runs under bash with a stand-in `gh` on PATH that logs its arguments (the
GitHub CLI is the one part that needs credentials); the glibc check runs `build/glibc.py`
on real ELF files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from tests.conftest import REPO
from tests.e2e.releaseserver import load_build_script

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


def step_script(name: str) -> str:
    """The `run: |` block of the step called `name`, dedented."""
    lines = WORKFLOW.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {name}")
    run = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run]) - len(lines[run].lstrip())
    body = []
    for line in lines[run + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return textwrap.dedent("\n".join(body)) + "\n"


def publish(tmp_path, tag):
    """Run the publish step for `tag`; the gh commands it ran, one per line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\necho "$*" >>"{log}"\n[ "$2" != view ]\n')
    gh.chmod(0o755)
    (tmp_path / "dist" / "release").mkdir(parents=True)
    (tmp_path / "dist" / "release" / "release.json").write_text("{}")
    subprocess.run(
        ["bash", "-euo", "pipefail", "-c", step_script("Upload to the release, then publish it")],
        cwd=tmp_path,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "TAG": tag},
        check=True,
    )
    return log.read_text().splitlines()


@pytest.mark.parametrize(
    ("tag", "flags"),
    [
        ("v1.2.0", "--latest"),
        ("v1.2.0-rc.1", "--prerelease --latest=false"),
        ("v2.0.0-beta", "--prerelease --latest=false"),
    ],
)
def test_a_pre_release_tag_is_never_marked_latest(tmp_path, tag, flags):
    ran = publish(tmp_path, tag)
    assert ran[0] == f"release view {tag}"
    assert ran[1] == f"release create {tag} --draft --title {tag} --notes "
    assert ran[-1] == f"release edit {tag} --draft=false {flags}"


def test_the_linux_binaries_are_built_for_the_stated_glibc_and_checked():
    text = WORKFLOW.read_text()
    (floor,) = re.findall(r'^  GLIBC_FLOOR: "([0-9.]+)"$', text, re.MULTILINE)
    assert floor == load_build_script("npm").GLIBC_FLOOR
    images = re.findall(r"image: (manylinux\w+)", text)
    assert images == ["manylinux2014_x86_64", "manylinux2014_aarch64"]  # glibc 2.17
    wheels = re.findall(r"wheel: (manylinux_\w+)", text)
    assert wheels == [
        f"manylinux_{floor.replace('.', '_')}_{arch}" for arch in ("x86_64", "aarch64")
    ]
    check = 'run: python build/glibc.py --folder dist/binary/vx_main.dist --max "$GLIBC_FLOOR"'
    # after the build, before anything is packed from the folder
    assert text.index("sh build/manylinux.sh") < text.index(check) < text.index("- name: Pack")
    assert "sh build/manylinux.sh" in step_script(
        "Build the binary (Linux, in manylinux2014 for glibc 2.17)"
    )


@pytest.fixture
def elf_folder(tmp_path):
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    folder = tmp_path / "vx_main.dist"
    (folder / "lib").mkdir(parents=True)
    shutil.copy2(shutil.which("true") or "/bin/true", folder / "vx")
    (folder / "lib" / "notes.txt").write_text("not an ELF file")
    return folder


def glibc(folder, *extra):
    return subprocess.run(
        [sys.executable, str(REPO / "build" / "glibc.py"), "--folder", str(folder), *extra],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_floor_check_names_the_newest_glibc_a_file_needs(elf_folder):
    shown = glibc(elf_folder)
    assert shown.returncode == 0, shown.stderr
    version = re.fullmatch(r"glibc (2\.[0-9]+) \(vx\)\n", shown.stdout)
    assert version is not None, shown.stdout
    assert glibc(elf_folder, "--max", version.group(1)).returncode == 0


def test_a_file_above_the_floor_is_refused_in_one_line(elf_folder):
    refused = glibc(elf_folder, "--max", "2.0")
    assert refused.returncode == 1
    assert re.fullmatch(
        r"build/glibc\.py: vx needs glibc 2\.[0-9]+, above the stated floor 2\.0 — build in the "
        r"manylinux2014 container \(see \.github/workflows/release\.yml\)\n",
        refused.stderr,
    ), refused.stderr
