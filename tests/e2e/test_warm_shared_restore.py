"""A replay that restores many tasks' outputs shares them with a forked child (Linux): the
outputs are the full path's, byte for byte; a bad entry in either share sends the run down the
full path; and a Ctrl-C lands between restores, leaving no staging dir, no half-restored
output and no process behind."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest
from tests.conftest import base_env, vx_argv
from tests.e2e.runws import tree
from tests.e2e.test_warm_path import WARM, rows, twin, vx

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="children are forked on Linux")

PACKAGES = [f"p{n:02d}" for n in range(20)]
SHARED = "in 2 process(es)"
STAGING = ".vx-restore-"
ARGS = ("--concurrency", "2")  # a child is forked only where the run may use two cores


def build(extra: str = "") -> dict[str, object]:
    return {
        "exec": f"mkdir -p dist/nested && cat src/*.txt > dist/out.txt && cp src/index.txt "
        f"dist/nested/copy.txt{extra}",
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }


def warmed(workspace, tmp_path: Path, task: dict[str, object]) -> tuple[Path, Path]:
    ws = workspace(tree({name: ((), {"build": task}) for name in PACKAGES}), name="one/ws")
    home = tmp_path / "one" / "home"
    for _ in range(3):
        vx(ws, home, *ARGS).assert_ok()
    third = vx(ws, home, *ARGS).assert_ok()
    assert WARM in third.err, third
    return ws, home


def dist_digests(ws: Path) -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        dist = ws / "packages" / name / "dist"
        for path in sorted(dist.rglob("*")) if dist.exists() else ():
            rel = str(path.relative_to(ws))
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return out


def remove_outputs(ws: Path) -> None:
    for name in PACKAGES:
        dist = ws / "packages" / name / "dist"
        if dist.exists():
            shutil.rmtree(dist)


def test_a_shared_restore_gives_the_full_paths_outputs(workspace, tmp_path: Path) -> None:
    ws, home = warmed(workspace, tmp_path, build())
    want = dist_digests(ws)
    remove_outputs(ws)
    ws2, home2 = twin(tmp_path, ws, home)
    fast = vx(ws, home, *ARGS).assert_ok()
    full = vx(ws2, home2, *ARGS, warm=False).assert_ok()
    assert WARM in fast.err, fast
    assert SHARED in fast.err, fast
    assert rows(fast) == rows(full)
    assert dist_digests(ws) == dist_digests(ws2) == want
    again = vx(ws, home, *ARGS).assert_ok()  # the snapshot, refreshed, still replays
    assert WARM in again.err, again
    assert dist_digests(ws) == want


def test_bad_entries_in_every_share_send_the_run_down_the_full_path(
    workspace, tmp_path: Path
) -> None:
    ws, home = warmed(workspace, tmp_path, build())
    want = dist_digests(ws)
    remove_outputs(ws)
    store = next((home / ".vx").glob("*/cache"))
    for artifact in sorted(store.glob("*.tar.zst")):
        data = artifact.read_bytes()
        artifact.write_bytes(data[:-8] + bytes(8))  # same length, other bytes
    ws2, home2 = twin(tmp_path, ws, home)
    fast = vx(ws, home, *ARGS).assert_ok()
    full = vx(ws2, home2, *ARGS, warm=False).assert_ok()
    assert WARM not in fast.err, fast
    assert sorted(rows(fast)) == sorted(rows(full))  # tasks ran two at a time: any order
    assert dist_digests(ws) == dist_digests(ws2) == want
    for name in PACKAGES:
        assert not [p for p in (ws / "packages" / name).iterdir() if p.name.startswith(STAGING)]


BIG = 4 * 1024 * 1024
BIG_TASK = build(f" && head -c {BIG} /dev/urandom > dist/big.bin")


def group_gone(pgid: int, within_s: float = 10) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def interrupt_mid_restore(ws: Path, home: Path) -> tuple[int, int]:
    """Start a replay that must restore every output and Ctrl-C its process group once the
    first output is back: vx's exit code and how many packages had their outputs then."""
    proc = subprocess.Popen(
        [*vx_argv(), "run", "build", "--all", *ARGS],
        cwd=ws,
        env=base_env({"HOME": str(home), "VX_TIMING": "1"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    dists = [ws / "packages" / name / "dist" for name in PACKAGES]
    deadline = time.monotonic() + 120
    while not any(d.exists() for d in dists) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.0005)
    with_outputs = sum(d.exists() for d in dists)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    code = proc.wait(timeout=120)
    assert group_gone(proc.pid), "a process of the interrupted run outlived it"
    return code, with_outputs


def test_a_ctrl_c_lands_between_restores_and_leaves_nothing_half_done(
    workspace, tmp_path: Path
) -> None:
    ws, home = warmed(workspace, tmp_path, BIG_TASK)
    want = dist_digests(ws)
    for _ in range(10):
        remove_outputs(ws)
        code, _ = interrupt_mid_restore(ws, home)
        back = [n for n in PACKAGES if (ws / "packages" / n / "dist").exists()]
        if code == 130 and 0 < len(back) < len(PACKAGES):
            break
    else:
        pytest.fail("no Ctrl-C landed while the outputs were being restored")
    for name in PACKAGES:
        pkg = ws / "packages" / name
        assert not [p.name for p in pkg.iterdir() if p.name.startswith(STAGING)], name
    have = dist_digests(ws)
    assert have == {rel: digest for rel, digest in want.items() if rel in have}
    for name in back:  # each output is whole or absent, never part of one
        prefix = f"packages/{name}/dist/"
        assert {r for r in have if r.startswith(prefix)} == {
            r for r in want if r.startswith(prefix)
        }
    vx(ws, home, *ARGS).assert_ok()
    assert dist_digests(ws) == want
