"""Helpers the fault suite shares: a salted workspace whose outputs are known in advance,
waiting on a running vx, and a byte-for-byte picture of a directory tree."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from tests.conftest import VX, base_env, git, make_git_workspace
from tests.e2e.runws import package

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

BLOB = 96 * 1024
SALTED_BUILD = (
    'mkdir -p dist/sub && cat src/blob.bin > dist/blob.bin && echo "$SALT $PKG" > dist/salt.txt'
    " && cp src/name.txt dist/sub/name.txt && ln -s sub/name.txt dist/link"
)
"""A build whose every byte follows from its inputs: the committed blob, the package name
and SALT (an `inputs.env`), so a run with a new SALT misses, runs and saves every task."""


def salted_workspace(root: Path, count: int, *, seed: int = 17) -> dict[str, bytes]:
    """`count` independent packages `k00…` building SALTED_BUILD; returns each one's blob."""
    rng = random.Random(seed)  # noqa: S311  a fixture, not a secret
    files: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
    }
    blobs: dict[str, bytes] = {}
    for i in range(count):
        name = f"k{i:02d}"
        build = {
            "exec": {"command": SALTED_BUILD, "env": {"define": {"PKG": name}}},
            "cache": {
                "inputs": {"files": ["src/**"], "env": ["SALT"]},
                "outputs": {"files": ["dist/**"]},
            },
        }
        base = f"packages/{name}"
        files[f"{base}/package.json"] = package(name)
        files[f"{base}/vx.config.json"] = {"tasks": {"build": build}}
        files[f"{base}/src/name.txt"] = f"{name}\n"
        blobs[name] = rng.randbytes(BLOB)
    make_git_workspace(root, files, commit=False)
    for name, blob in blobs.items():
        (root / "packages" / name / "src/blob.bin").write_bytes(blob)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return blobs


def salted_outputs(blob: bytes, name: str, salt: str) -> dict[str, bytes | str]:
    """What `dist/` holds after SALTED_BUILD, in `tree_bytes`' shape."""
    return {
        "blob.bin": blob,
        "link": "sub/name.txt",
        "salt.txt": f"{salt} {name}\n".encode(),
        "sub/name.txt": f"{name}\n".encode(),
    }


def start(
    args: list[str],
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
    *,
    pipe: bool = False,
    **kw: Any,
) -> subprocess.Popen[bytes]:
    """`vx ARGS` started as `run_vx` runs it (same clean environment, a home of its own),
    without waiting: the fault has to land while it runs. Output is dropped unless `pipe`."""
    sink = subprocess.PIPE if pipe else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, str(VX), *args],
        cwd=cwd,
        env=base_env({"HOME": str(home), **(env or {})}),
        stdout=sink,
        stderr=sink,
        **kw,
    )


def wait_until(
    seen: Callable[[], bool], proc: subprocess.Popen[Any], *, limit_s: float = 60
) -> bool:
    """Poll `seen` until it holds (True) or vx exits first (False); a hang fails the test."""
    deadline = time.monotonic() + limit_s
    while not seen():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "vx neither got there nor exited"
        time.sleep(0.0005)
    return True


def picture(root: Path, skip: Iterable[Path] = ()) -> dict[str, tuple[str, bytes | str]]:
    """Every path under root but `skip`: its kind and its bytes (a file) or target (a link)."""
    skipped = tuple(skip)
    out: dict[str, tuple[str, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skipped):
            continue
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = ("link", str(path.readlink()))
        elif path.is_file():
            out[rel] = ("file", path.read_bytes())
        elif path.is_dir():
            out[rel] = ("dir", b"")
        else:
            out[rel] = ("other", b"")
    return out


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Paths added, removed or altered between two pictures."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
