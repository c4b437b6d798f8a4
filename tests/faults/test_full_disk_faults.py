"""A full disk under the cache dir changes nothing about a run's verdict.

The cache dir sits on a small tmpfs filled to several levels (from 100% full before the run
starts to a little room left), or, where this user may not mount, under RLIMIT_FSIZE limits
of several sizes. A cold and a warm run at each level must end as a run on a roomy disk does:
the same exit code, the same tasks passed and failed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tests.e2e.runws import tree
from tests.e2e.test_cache_faults import JSON, OUTS, mount_tmpfs
from tests.faults.faultws import start

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.faults

BIG = "ulimit -S -f unlimited; mkdir -p dist && head -c 400000 /dev/urandom > dist/big.bin"
TASKS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "big": ((), {"build": {"exec": BIG, "cache": OUTS}}),
    "small": ((), {"build": {"exec": "mkdir -p dist && echo s > dist/s.txt", "cache": OUTS}}),
    "after-big": (
        ("big",),
        {"build": {"dependsOn": ["^build"], "exec": "test -s ../big/dist/big.bin", "cache": {}}},
    ),
    "broken": ((), {"build": {"exec": "echo nope; exit 4", "cache": OUTS}}),
    "uncached": ((), {"build": {"exec": "echo plain"}}),
}
FREE_BYTES = [0, 4096, 32 * 1024, 160 * 1024, 700 * 1024]
FSIZE_LIMITS = [0, 4096, 64 * 1024, 256 * 1024, 1024 * 1024]


def verdict(code: int, out: bytes, err: str) -> tuple[Any, ...]:
    """Exit code and each task's pass or fail: what a user or CI acts on."""
    if "Traceback" in err:
        return ("stack", err[-300:])
    try:
        rows = json.loads(out)["tasks"]
    except (ValueError, KeyError):
        return ("no record", code, err[-300:])
    return code, tuple(sorted((r["id"], r["status"] in ("success", "cache-hit")) for r in rows))


def run(root: Path, home: Path, cache: Path, preexec: Callable[[], None] | None = None):
    args = ["run", "build", "--all", "--continue", "--cache-dir", str(cache), *JSON]
    proc = start(args, root, home, pipe=True, preexec_fn=preexec)
    out, err = proc.communicate(timeout=120)
    return verdict(proc.returncode, out, err.decode())


def fill(where: Path, leave: int) -> None:
    """Fill the file system under `where` until `leave` bytes are left."""
    room = os.statvfs(where)
    free = room.f_bavail * room.f_frsize
    (where / "filler").write_bytes(bytes(max(0, free - leave)))


def file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    return apply


def test_a_full_disk_never_changes_a_verdict(workspace, tmp_path):
    root = workspace(tree(TASKS))
    home = tmp_path / "home"
    roomy = run(root, home, tmp_path / "roomy")
    assert roomy[0] == 1, roomy  # `broken` fails; the rest pass
    assert dict(roomy[1]) == {f"{p}#build": p != "broken" for p in TASKS}

    small = tmp_path / "small"
    small.mkdir()
    mounted = mount_tmpfs(small, "1m")
    changed: list[str] = []
    tries = 0
    try:
        levels = FREE_BYTES if mounted else FSIZE_LIMITS
        for level in levels:
            for path in small.iterdir():
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            for name in TASKS:
                shutil.rmtree(root / "packages" / name / "dist", ignore_errors=True)
            cache = small / "cache"
            if mounted:
                fill(small, level)
                preexec = None
            else:
                preexec = file_size_limit(level)
            for attempt in ("cold", "warm"):
                got = run(root, home, cache, preexec)
                tries += 1
                if got != roomy:
                    changed.append(f"{level} bytes, {attempt}: {got}")
    finally:
        if mounted:
            subprocess.run(["umount", str(small)], check=True)
    how = "tmpfs" if mounted else "RLIMIT_FSIZE"
    print(f"full disk ({how}): {tries} runs; verdicts changed: {len(changed)} {changed}")
    assert changed == []
