"""Reading a large bun.lock costs memory in proportion to the file, however its text is laid out.

bun.lock is JSON with trailing commas, which vx strips before parsing; a long string in it
(8 MB on one line here) once cost the stripping step about 130 bytes of memory per character
and time growing faster than the text: over a gigabyte for this file. The peak of the whole
`vx run` is measured by the kernel (`wait4`), never timed.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from tests.conftest import VX, base_env, make_git_workspace

if TYPE_CHECKING:
    from pathlib import Path

LONG = 8_000_000
CEILING = 400 * 2**20  # a few copies of the file and the interpreter, with room to spare


def _bun_lock() -> str:
    patched = "x" * LONG  # a long value in a section vx keeps whole (patches, overrides)
    return (
        '{\n  "lockfileVersion": 1,\n  "workspaces": {\n'
        '    "": { "name": "root", },\n'
        '    "packages/a": { "name": "a", "dependencies": { "ms": "2.1.3", }, },\n  },\n'
        f'  "patchedDependencies": {{ "ms@2.1.3": "{patched}", }},\n'
        '  "packages": {\n    "a": ["a@workspace:packages/a"],\n'
        '    "ms": ["ms@2.1.3", "", {}, "sha512-abc=="],\n  },\n}\n'
    )


def test_a_bun_lock_with_a_long_line_is_read_in_memory_proportional_to_it(
    tmp_path: Path,
) -> None:
    files = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        "packages/a/package.json": {"name": "a", "dependencies": {"ms": "2.1.3"}},
        "packages/a/vx.config.json": {"tasks": {"build": {"exec": "echo built", "cache": {}}}},
        "bun.lock": _bun_lock(),
    }
    root = make_git_workspace(tmp_path / "ws", files)
    env = base_env({"HOME": str(tmp_path / "home")})
    # A fresh parent, so the peak it reports is this run's alone.
    measure = (
        "import resource, subprocess, sys;"
        " done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
        " print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    argv = [sys.executable, "-c", measure, sys.executable, str(VX), "run", "build", "--all"]
    done = subprocess.run(
        argv, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert "Traceback" not in done.stderr, done.stderr
    code, peak_kb = done.stdout.split()
    assert code == "0", done.stderr
    assert int(peak_kb) * 1024 < CEILING, f"peak RSS {int(peak_kb) // 1024} MB"
