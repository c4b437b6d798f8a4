"""SIGKILL of vx at many points of its saves and of its restores.

Whatever instant the kill lands at, the store holds only whole entries (each artifact's bytes
are exactly what the task wrote) and a project's outputs are the whole entry, absent, or the
whole outputs of another build that were there before: never half a restore. Kill points are spread by waiting for the first save temp
or restore staging dir to appear and then sleeping a seeded, varying time.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import subprocess
from typing import TYPE_CHECKING

import pytest
from tests.e2e.cachews import artifact_members, entry_keys, query, tree_bytes
from tests.e2e.test_cache_faults import JSON, clone, integrity, statuses_of, temps
from tests.faults.faultws import salted_outputs, salted_workspace, start, wait_until

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

PACKAGES = 6
KILLS = 32
MAX_TRIES = 160  # a kill lands in about half the runs: room for the slow and the fast


def kill(proc: subprocess.Popen[bytes], delay_s: float) -> bool:
    """SIGKILL vx `delay_s` from now; False when it had already finished (no kill point)."""
    if delay_s:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=delay_s)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=60) == -signal.SIGKILL


def lay_out(where: Path, outputs: dict[str, bytes | str]) -> None:
    """Write a `tree_bytes`-shaped dict back to disk: bytes are files, text a link's target."""
    for rel, content in outputs.items():
        path = where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.symlink_to(content)


def run_args(store: Path, *extra: str) -> list[str]:
    return ["run", "build", "--all", "--cache-dir", str(store), "--output-logs=none", *extra]


def test_a_kill_during_saves_leaves_only_whole_entries(tmp_path):
    root = tmp_path / "ws"
    blobs = salted_workspace(root, PACKAGES)
    store, home = tmp_path / "store", tmp_path / "home"
    rng = random.Random(23)  # noqa: S311  spreads kill points; not a secret
    kills = tries = 0
    while kills < KILLS and tries < MAX_TRIES:
        salt = f"s{tries}"
        before = temps(store)
        proc = start(run_args(store), root, home, {"SALT": salt})
        if wait_until(lambda before=before: bool(temps(store) - before), proc):
            kills += kill(proc, rng.uniform(0, 0.06))
        else:
            proc.wait(timeout=60)
        tries += 1
    print(f"kills during saves: {kills} of {tries} runs")
    assert kills >= KILLS

    # Every row points at an artifact holding exactly the bytes its task wrote for its salt.
    assert integrity(store) == "ok"
    corrupt = []
    rows = query(store, "SELECT key, project FROM entries")
    for key, project in rows:
        path = store / f"{key}.tar.zst"
        members = artifact_members(path) if path.exists() else {}
        salt = (members.get("dist/salt.txt") or b"?").decode().split(" ")[0]
        want = salted_outputs(blobs[project], project, salt)
        got = {
            k.removeprefix("dist/"): v
            for k, v in members.items()
            if v is not None and k.startswith("dist/")
        }
        want_files = {k: v for k, v in want.items() if isinstance(v, bytes)}
        if got != want_files:
            corrupt.append((key, project, salt))
    print(f"entries left by the killed runs: {len(rows)}; corrupt: {len(corrupt)}")
    assert corrupt == []

    # The next run, in a fresh checkout, gives a clean run's bytes for the salts tried.
    for salt in ("s0", f"s{tries - 1}"):
        checkout = clone(root, tmp_path / f"checkout-{salt}")
        proc = start(run_args(store, *JSON), checkout, home, {"SALT": salt}, pipe=True)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
        assert set(statuses_of(out).values()) <= {"success", "cache-hit"}
        for name, blob in blobs.items():
            dist = checkout / "packages" / name / "dist"
            assert tree_bytes(dist) == salted_outputs(blob, name, salt), (salt, name)


def test_a_kill_during_restores_never_leaves_half_an_output(tmp_path):
    root = tmp_path / "ws"
    blobs = salted_workspace(root, PACKAGES)
    store, home = tmp_path / "store", tmp_path / "home"
    salt = {"SALT": "r"}
    first = start(run_args(store), root, home, salt, pipe=True)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    saved = entry_keys(store)
    assert len(saved) == PACKAGES
    want = {name: salted_outputs(blob, name, "r") for name, blob in blobs.items()}
    old = {name: salted_outputs(blob, name, "old") for name, blob in blobs.items()}
    dists = {name: root / "packages" / name / "dist" for name in blobs}

    def staging() -> set[Path]:
        return {
            p
            for d in dists.values()
            for p in d.parent.iterdir()
            if p.name.startswith(".vx-restore-")
        }

    rng = random.Random(29)  # noqa: S311
    kills = tries = 0
    partial: list[tuple[int, str]] = []
    while kills < KILLS and tries < MAX_TRIES:
        stale = tries % 2 == 1  # every other run finds another build's outputs in place
        for name, dist in dists.items():
            shutil.rmtree(dist, ignore_errors=True)
            if stale:
                lay_out(dist, old[name])
        before = staging()  # a killed restore's leftovers are no sign of this one
        proc = start(run_args(store), root, home, salt)
        if wait_until(lambda before=before: bool(staging() - before), proc):
            kills += kill(proc, rng.uniform(0, 0.02))
        else:
            proc.wait(timeout=60)
        tries += 1
        for name, dist in dists.items():
            # Cleaned and not yet restored reads as absent: directories, but no output in them.
            if tree_bytes(dist) not in ({}, want[name], old[name]):
                found = tree_bytes(dist)
                mixed = {k: "new" if v == want[name].get(k) else "old" for k, v in found.items()}
                partial.append((tries, name, "stale" if stale else "absent", mixed))
    print(f"kills during restores: {kills} of {tries} runs; partial restores: {len(partial)}")
    assert kills >= KILLS
    assert partial == []

    # No killed restore damaged an entry: the next run restores every output whole.
    for dist in dists.values():
        shutil.rmtree(dist, ignore_errors=True)
    proc = start(run_args(store, *JSON), root, home, salt, pipe=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert set(statuses_of(out).values()) == {"cache-hit"}
    assert entry_keys(store) == saved
    for name, dist in dists.items():
        assert tree_bytes(dist) == want[name], name
    # ...and what the killed restores left behind is swept by that run.
    assert staging() == set()
