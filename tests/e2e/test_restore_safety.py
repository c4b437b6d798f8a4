"""A restore writes only what the task declares and the entry recorded, and no restore hangs
or leaves debris: planted entries, edited index rows, things in an artifact's place, and a vx
killed mid-restore, each done to a real store by the test itself."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
import xxhash
from tests.conftest import VX, base_env, run_vx
from tests.e2e.cachews import query, tree_bytes
from tests.e2e.runws import tree
from tests.e2e.test_cache_faults import craft, file_member, manifest_row

if TYPE_CHECKING:
    from pathlib import Path

HASH_ONLY = ["--output-logs=hash-only"]
BUILD = "mkdir -p dist && cp src/index.txt dist/out.txt"
WARM = "warm replay"
STAGING = ".vx-restore-"


class Bench:
    """One package `a` in a real git workspace, its store and home, and vx run on it.

    `warm=False` turns the warm path off for every run, so the full path is what is tried.
    """

    def __init__(
        self, workspace: Any, tmp_path: Path, task: dict[str, Any], *, warm: bool = True
    ) -> None:
        self.root = workspace(tree({"a": ((), {"build": task})}))
        self.pkg = self.root / "packages/a"
        self.store = tmp_path / "store"
        self.home = tmp_path / "home"
        self.env = {"VX_TIMING": "1", **({} if warm else {"VX_WARM": "0"})}

    def args(self, *extra: str) -> list[str]:
        return ["run", "build", "--all", "--cache-dir", str(self.store), *extra]

    def spawn(self) -> subprocess.Popen[bytes]:
        """The run `status` makes (the same invocation, so the same warm snapshot), started
        without waiting for it, its output dropped."""
        return subprocess.Popen(
            [sys.executable, str(VX), *self.args(*HASH_ONLY)],
            cwd=self.root,
            env=base_env({"HOME": str(self.home), **self.env}),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def run(self, timeout: float = 120) -> tuple[str, str, str]:
        """One run: the task's outcome word (`success`, `up-to-date`, `restored-local`), its
        key, and what vx said on stderr. Pretty output, so the warm path may answer."""
        result = run_vx(
            self.args(*HASH_ONLY), self.root, env=self.env, home=self.home, timeout=timeout
        )
        assert "Traceback" not in result.assert_ok().err
        (row,) = [line.split() for line in result.out.splitlines() if " a#build " in line]
        outcome, _, key = row
        return outcome, key, result.err

    def key(self) -> str:
        return self.run()[1]

    def status(self, timeout: float = 120) -> tuple[str, str]:
        outcome, _, err = self.run(timeout)
        return outcome, err

    def manifest(self, key: str) -> list[Any] | None:
        rows = query(self.store, "SELECT manifest FROM entries WHERE key = ?", key)
        return json.loads(rows[0][0]) if rows else None

    def edit_row(self, key: str, **values: object) -> None:
        sets = ", ".join(f"{name} = ?" for name in values)
        with closing(sqlite3.connect(self.store / "cache.db")) as conn, conn:
            conn.execute(f"UPDATE entries SET {sets} WHERE key = ?", (*values.values(), key))  # noqa: S608


# ---------------------------------------------------------------------------------------------
# a planted entry holding more than the task declares


EVIL_CONFIG = json.dumps({"tasks": {"build": {"exec": "touch ../../pwned"}}})

PLANTS: dict[str, tuple[dict[str, Any], dict[str, bytes]]] = {
    # a task's outputs → the members planted besides a declared `dist/out.txt`, by path
    "sources-and-config": (
        {"files": ["dist/**"]},
        {"src/index.txt": b"planted source\n", "vx.config.json": EVIL_CONFIG.encode()},
    ),
    "a-negated-path": (
        {"files": ["dist/**", "!dist/keep/**"]},
        {"dist/keep/notes.txt": b"planted over a path the outputs take back\n"},
    ),
    "beside-workspace-files": (
        {"files": ["dist/**"], "workspaceFiles": ["out/a.txt"]},
        {"package.json": b'{"name": "root", "scripts": {"postinstall": "planted"}}\n'},
    ),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_entry_with_undeclared_members_is_a_miss_that_writes_nothing(
    workspace, tmp_path, plant
):
    outputs, planted = PLANTS[plant]
    build = {"exec": BUILD, "cache": {"inputs": {"files": ["src/**"]}, "outputs": outputs}}
    bench = Bench(workspace, tmp_path, build)
    notes = bench.pkg / "dist/keep/notes.txt"
    if plant == "a-negated-path":  # the outputs leave it alone: the user's own file
        notes.parent.mkdir(parents=True)
        notes.write_text("the user's own notes\n")
    key = bench.key()
    # Paths in the artifact are relative to where the task's outputs are archived from.
    base = bench.root if "workspaceFiles" in outputs else bench.pkg
    prefix = "" if base == bench.pkg else "packages/a/"
    artifact = bench.store / f"{key}.tar.zst"
    members = [file_member(f"{prefix}dist/out.txt", b"planted output\n")]
    members += [file_member(path, data) for path, data in sorted(planted.items())]
    blob = craft(artifact, members)
    artifact.write_bytes(blob)
    bench.edit_row(
        key,
        size=len(blob),
        digest=xxhash.xxh3_64_hexdigest(blob),
        manifest=json.dumps([manifest_row(i, d) for i, d in members], separators=(",", ":")),
    )
    before = {path: (base / path).read_bytes() for path in planted}
    (bench.pkg / "dist/out.txt").unlink()

    status, err = bench.status()
    assert status == "success"
    assert f"[vx] a#build: cache entry {key} is unreadable; running it" in err.splitlines()
    assert {path: (base / path).read_bytes() for path in planted} == before
    assert (bench.pkg / "dist/out.txt").read_text() == "a\n"
    assert not (bench.root / "pwned").exists()
    # The planted row went; the run saved its own in its place.
    saved = {row[0] for row in bench.manifest(key) or []}
    assert saved == {f"{prefix}dist/out.txt"}

    (bench.pkg / "dist/out.txt").unlink()
    assert bench.status()[0] == "restored-local"
    assert (bench.pkg / "dist/out.txt").read_text() == "a\n"
    if plant == "a-negated-path":
        assert notes.read_text() == "the user's own notes\n"


# ---------------------------------------------------------------------------------------------
# an index row whose manifest is not its artifact's


OUTS = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}


@pytest.mark.parametrize("path", ["full", "warm"])
@pytest.mark.parametrize("manifest", ["[]", "{}", "not json", "another member", "a digest off"])
def test_a_row_whose_manifest_is_not_its_artifacts_is_a_miss_and_the_task_runs(
    workspace, tmp_path, manifest, path
):
    bench = Bench(workspace, tmp_path, {"exec": BUILD, "cache": OUTS}, warm=path == "warm")
    key = bench.key()
    if path == "warm":
        assert bench.status()[0] == "up-to-date"  # all up to date: a snapshot
    (row,) = bench.manifest(key) or []
    text = {
        "[]": "[]",
        "{}": "{}",
        "not json": "[[not json",
        "another member": json.dumps([["dist/other.txt", *row[1:]]]),
        "a digest off": json.dumps([[*row[:4], "0" * 16]]),
    }[manifest]
    bench.edit_row(key, manifest=text)
    (bench.pkg / "dist/out.txt").unlink()

    status, err = bench.status()
    assert status == "success"
    assert WARM not in err  # the warm path, finding the entry bad, gave way to the full path
    assert tree_bytes(bench.pkg / "dist") == {"out.txt": b"a\n"}
    assert bench.manifest(key) == [row]  # dropped, and saved again by the run

    (bench.pkg / "dist/out.txt").unlink()
    assert bench.status()[0] == "restored-local"
    assert tree_bytes(bench.pkg / "dist") == {"out.txt": b"a\n"}


@pytest.mark.parametrize("declared", ["no outputs", "outputs that match nothing"])
def test_an_entry_that_legitimately_recorded_nothing_stays_a_hit(workspace, tmp_path, declared):
    """A cached task with no outputs, or whose outputs matched no file, saved an empty
    manifest: that is its whole entry, and it hits on every run."""
    outputs = {} if declared == "no outputs" else {"outputs": {"files": ["dist/**"]}}
    task = {"exec": "echo checked", "cache": {"inputs": {"files": ["src/**"]}, **outputs}}
    bench = Bench(workspace, tmp_path, task)
    key = bench.key()
    assert bench.manifest(key) == []
    for _ in range(2):
        status, err = bench.status()
        assert status == "up-to-date", err
        assert bench.manifest(key) == []
    assert not (bench.pkg / "dist").exists()
    if outputs:
        (bench.pkg / "dist").mkdir()
        (bench.pkg / "dist/stray.txt").write_text("not the task's\n")
        assert bench.status()[0] == "restored-local"
        assert tree_bytes(bench.pkg / "dist") == {}
        assert bench.manifest(key) == []


# ---------------------------------------------------------------------------------------------
# something other than a file where an artifact should be


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink to /dev/zero"])
def test_a_non_file_in_an_artifacts_place_is_a_miss_not_a_hang(workspace, tmp_path, kind):
    bench = Bench(workspace, tmp_path, {"exec": BUILD, "cache": OUTS})
    key = bench.key()
    artifact = bench.store / f"{key}.tar.zst"
    artifact.unlink()
    if kind == "fifo":
        os.mkfifo(artifact)
    elif kind == "directory":
        artifact.mkdir()
    else:
        artifact.symlink_to("/dev/zero")
    (bench.pkg / "dist/out.txt").unlink()

    # A hang fails here (TimeoutExpired) instead of holding the suite.
    status, err = bench.status(timeout=60)
    assert status == "success"
    assert f"[vx] a#build: cache entry {key} is unreadable; running it" in err.splitlines()
    assert tree_bytes(bench.pkg / "dist") == {"out.txt": b"a\n"}
    assert artifact.is_file()  # the bad one was removed, so the run's own save landed
    (bench.pkg / "dist/out.txt").unlink()
    assert bench.status(timeout=60)[0] == "restored-local"


# ---------------------------------------------------------------------------------------------
# a restore killed mid-way


BIG = 48 * 1024 * 1024
BIG_BUILD = f"mkdir -p dist && head -c {BIG} /dev/urandom > dist/big.bin && cp src/index.txt dist/"


def leftovers(where: Path) -> list[str]:
    return sorted(p.name for p in where.iterdir() if p.name.startswith(STAGING))


def kill_mid_restore(bench: Bench, rng: random.Random) -> bool:
    """Start a run that must restore, SIGKILL it once its staging dir exists; True when the
    kill left that dir behind (False: vx finished or cleaned up first)."""
    proc = bench.spawn()
    deadline = time.monotonic() + 120
    while not leftovers(bench.pkg):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.wait(timeout=120)
            return False
        time.sleep(0.0005)
    time.sleep(rng.uniform(0, 0.02))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=120)
    return bool(leftovers(bench.pkg))


@pytest.mark.parametrize("path", ["full", "warm"])
def test_a_restore_killed_mid_way_leaves_nothing_the_next_run_keeps(workspace, tmp_path, path):
    bench = Bench(workspace, tmp_path, {"exec": BIG_BUILD, "cache": OUTS}, warm=path == "warm")
    bench.key()
    want = tree_bytes(bench.pkg / "dist")
    assert len(want["big.bin"]) == BIG
    if path == "warm":
        assert bench.status()[0] == "up-to-date"  # all up to date: the next restore replays
    rng = random.Random(3)  # noqa: S311  a fixture, not a secret
    for _ in range(10):
        for name in ("big.bin", "index.txt"):
            (bench.pkg / "dist" / name).unlink(missing_ok=True)
        if kill_mid_restore(bench, rng):
            break
    else:
        pytest.fail("no kill landed while a restore was staging")
    assert leftovers(bench.pkg)

    status, err = bench.status()
    assert status == "restored-local"
    assert (WARM in err) == (path == "warm"), err
    assert leftovers(bench.pkg) == []
    assert tree_bytes(bench.pkg / "dist") == want
