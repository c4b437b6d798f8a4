"""The cache under faults, with real processes and real files: kill -9 mid-save, a full disk,
two runs sharing one cache directory, and crafted artifacts planted in a real store."""

from __future__ import annotations

import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
import xxhash
import zstandard
from tests.conftest import VX, base_env, git
from tests.e2e.cachews import (
    entry_keys,
    generated,
    hashes,
    query,
    tree_bytes,
)
from tests.e2e.runws import package, tree

if TYPE_CHECKING:
    from pathlib import Path

JSON = ["--format", "json"]
OUTS = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}


def integrity(store: Path) -> str:
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def spawn(args: list[str], cwd: Path, home: Path, **kw: Any) -> subprocess.Popen[bytes]:
    """`vx ARGS` started the way the `vx` fixture runs it, without waiting for it."""
    env = base_env({"HOME": str(home)})
    return subprocess.Popen([sys.executable, str(VX), *args], cwd=cwd, env=env, **kw)


def clone(root: Path, where: Path) -> Path:
    """A fresh checkout of root's commit: no outputs on disk."""
    subprocess.run(["git", "clone", "-q", str(root), str(where)], check=True)
    return where


# ---------------------------------------------------------------------------------------------
# kill -9 during saves

GROUPS = 96  # more groups than kills: a run that finishes before its kill lands is tried again
KILLS = 50
BLOB = 192 * 1024
SAVE_CMD = (
    "mkdir -p dist/sub && cat src/blob.bin src/name.txt > dist/blob.bin"
    " && cp src/name.txt dist/sub/name.txt && ln -s sub/name.txt dist/link"
)


def group(k: int) -> list[str]:
    return [f"g{k:02d}-{j}" for j in range(3)]


def kill_workspace() -> tuple[dict[str, Any], dict[str, dict[str, bytes | str]]]:
    """GROUPS groups of three packages (the third depends on the other two), each build
    writing an incompressible blob; returns the files and each package's expected outputs."""
    rng = random.Random(11)  # noqa: S311  a fixture, not a secret
    files: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
    }
    expected: dict[str, dict[str, bytes | str]] = {}
    build = {"dependsOn": ["^build"], "exec": SAVE_CMD, "cache": OUTS}
    for k in range(GROUPS):
        names = group(k)
        for j, name in enumerate(names):
            deps = tuple(names[:2]) if j == 2 else ()
            base = f"packages/{name}"
            files[f"{base}/package.json"] = package(name, deps)
            files[f"{base}/vx.config.json"] = {"tasks": {"build": build}}
            files[f"{base}/src/name.txt"] = f"{name}\n"
            expected[name] = {"blob.bin": rng.randbytes(BLOB) + f"{name}\n".encode()}
            expected[name]["sub/name.txt"] = f"{name}\n".encode()
            expected[name]["link"] = "sub/name.txt"
    return files, expected


def write_blobs(root: Path, expected: dict[str, dict[str, bytes | str]]) -> None:
    for name, outs in expected.items():
        blob = outs["blob.bin"]
        assert isinstance(blob, bytes)
        (root / "packages" / name / "src/blob.bin").write_bytes(blob[:BLOB])


def temps(store: Path) -> set[str]:
    try:
        return {p.name for p in store.iterdir() if ".tmp-" in p.name}
    except FileNotFoundError:
        return set()


def kill_mid_save(proc: subprocess.Popen[bytes], store: Path, delay_s: float) -> bool:
    """Wait until a save has begun (a new temp in the store), then SIGKILL vx after `delay_s`.

    False when vx finished first: that iteration put no kill point anywhere.
    """
    old = temps(store)
    deadline = time.monotonic() + 120
    while not temps(store) - old:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.wait(timeout=120)
            return False
        time.sleep(0.0005)
    time.sleep(delay_s)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    code = proc.wait(timeout=120)
    if code == 0:
        return False  # vx finished between the poll and the kill
    assert code == -signal.SIGKILL
    return True


def test_kill_9_during_saves_leaves_only_whole_entries(workspace, tmp_path):
    files, expected = kill_workspace()
    root = workspace(files, commit=False)
    write_blobs(root, expected)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    store = tmp_path / "store"
    home = tmp_path / "home"
    rng = random.Random(5)  # noqa: S311
    kills = tried = 0
    while kills < KILLS and tried < GROUPS:
        targets = [f"{name}#build" for name in group(tried)]
        args = ["run", *targets, "--cache-dir", str(store), "--output-logs=none"]
        proc = spawn(args, root, home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Up to 12 ms into the first save: a quick group's three saves are over in about 25.
        kills += kill_mid_save(proc, store, rng.uniform(0, 0.012))
        tried += 1
    assert kills >= KILLS
    left = temps(store)
    indexed = entry_keys(store)
    on_disk = {p.name.removesuffix(".tar.zst") for p in store.glob("*.tar.zst")}
    print(
        f"kills={kills}/{tried} temps-left={len(left)} unindexed-artifacts={len(on_disk - indexed)}"
    )
    assert integrity(store) == "ok"
    assert indexed <= on_disk  # a row is written only once its artifact is in place

    for attempt in ("first", "second"):
        checkout = clone(root, tmp_path / f"checkout-{attempt}")
        result = spawn(
            ["run", "build", "--all", "--cache-dir", str(store), *JSON],
            checkout,
            home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = result.communicate(timeout=600)
        assert result.returncode == 0, err.decode()
        assert b"unreadable" not in err
        rows = {r["id"]: r for r in json.loads(out)["tasks"]}
        for tid, row in rows.items():
            hit = row["hash"] in indexed
            assert row["status"] == ("cache-hit" if hit else "success"), (attempt, tid)
            if hit:
                assert row["restored"] is True
        for name, outs in expected.items():
            assert tree_bytes(checkout / "packages" / name / "dist") == outs, (attempt, name)
        indexed = entry_keys(store)
        assert indexed == {row["hash"] for row in rows.values()}
    assert integrity(store) == "ok"


# ---------------------------------------------------------------------------------------------
# a full disk


def mount_tmpfs(where: Path, size: str) -> bool:
    """Mount a tmpfs of `size` on `where`; False where this user may not mount."""
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return mounted.returncode == 0


@pytest.fixture(params=["tmpfs", "file-size"])
def small_disk(request, tmp_path):
    """A cache dir that refuses a 3 MB artifact: a 2 MB tmpfs (the file-size limit instead
    where mounting is refused), or RLIMIT_FSIZE on the vx process. Yields the dir, what vx
    must run under, and the errno a save meets."""
    where = tmp_path / "small"
    where.mkdir()
    mounted = request.param == "tmpfs" and mount_tmpfs(where, "2m")
    try:
        if mounted:
            yield where, None, "ENOSPC"
        else:
            yield where, limit_file_size, "EFBIG"
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], check=True)


def limit_file_size() -> None:
    """In vx's child before exec: writes past 2 MB fail with EFBIG rather than kill it.

    The task raises its own soft limit back (`ulimit -S -f unlimited`), so only vx is held.
    """
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, hard))


def test_a_full_disk_fails_the_save_with_one_line_and_the_run_stands(
    workspace, tmp_path, small_disk
):
    where, preexec, reason = small_disk
    command = (
        "ulimit -S -f unlimited; mkdir -p dist && head -c 3000000 /dev/urandom > dist/big.bin"
        " && echo small > dist/small.txt"
    )
    root = workspace(tree({"a": ((), {"build": {"exec": command, "cache": OUTS}})}))
    proc = spawn(
        ["run", "build", "--all", "--cache-dir", str(where), *JSON],
        root,
        tmp_path / "home",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
    )
    out, err = proc.communicate(timeout=300)
    text = err.decode()
    assert proc.returncode == 0, text
    assert statuses_of(out) == {"a#build": "success"}
    assert (root / "packages/a/dist/big.bin").stat().st_size == 3_000_000
    notes = [line for line in text.splitlines() if "cache entry not saved" in line]
    assert len(notes) == 1, text
    assert re.fullmatch(rf"\[vx\] a#build: cache entry not saved: {reason} writing \S+", notes[0])
    assert "Traceback" not in text
    assert [p.name for p in where.iterdir() if ".tmp-" in p.name or p.suffix == ".zst"] == []
    assert integrity(where) == "ok"
    assert entry_keys(where) == set()
    assert len(query(where, "SELECT run_id FROM invocations")) == 1


def test_a_full_disk_at_the_index_write_fails_only_that_save(workspace, tmp_path):
    """The artifact fits to the last page and the index row does not: one line, and the run
    stands; once there is room again the same entry saves and restores."""
    command = "mkdir -p dist && cp src/blob.bin dist/blob.bin"
    root = workspace(tree({"a": ((), {"build": {"exec": command, "cache": OUTS}})}), commit=False)
    pkg = root / "packages/a"
    blob = random.Random(3).randbytes(600_000)  # noqa: S311  a fixture, not a secret
    (pkg / "src/blob.bin").write_bytes(blob)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    home = tmp_path / "home"

    def run(cache: Path, *extra: str) -> tuple[int, bytes, str]:
        args = ["run", "build", "--all", "--cache-dir", str(cache), *JSON, *extra]
        proc = spawn(args, root, home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=300)
        return proc.returncode, out, err.decode()

    probe = tmp_path / "probe"
    assert run(probe)[0] == 0
    (artifact,) = probe.glob("*.tar.zst")
    shutil.rmtree(pkg / "dist")

    small = tmp_path / "small"
    small.mkdir()
    assert mount_tmpfs(small, "2m"), "filling a disk to the page needs a tmpfs: run as root"
    try:
        assert run(small, "--no-cache")[0] == 0  # the index and its tables, before the disk fills
        with closing(sqlite3.connect(small / "cache.db")) as reader:
            reader.execute("SELECT count(*) FROM entries").fetchone()  # -wal and -shm exist now
            room = os.statvfs(small)
            pages = -(-artifact.stat().st_size // room.f_frsize)
            (small / "filler").write_bytes(bytes((room.f_bavail - pages) * room.f_frsize))
            code, out, err = run(small)
        assert code == 0, err
        assert statuses_of(out) == {"a#build": "success"}
        notes = [line for line in err.splitlines() if "not saved" in line]
        assert notes == ["[vx] a#build: cache entry not saved: database or disk is full"], err
        assert "Traceback" not in err
        assert "locked" not in err
        assert integrity(small) == "ok"
        assert entry_keys(small) == set()

        (small / "filler").unlink()
        code, out, err = run(small)
        assert code == 0, err
        assert "not saved" not in err
        (key,) = entry_keys(small)
        shutil.rmtree(pkg / "dist")
        code, out, err = run(small)
        assert code == 0, err
        assert statuses_of(out) == {"a#build": "cache-hit"}
        assert (pkg / "dist/blob.bin").read_bytes() == blob
        assert (small / f"{key}.tar.zst").read_bytes() == artifact.read_bytes()
    finally:
        subprocess.run(["umount", str(small)], check=True)


def statuses_of(out: bytes) -> dict[str, str]:
    return {row["id"]: row["status"] for row in json.loads(out)["tasks"]}


# ---------------------------------------------------------------------------------------------
# two runs, one cache directory


def test_two_concurrent_runs_on_one_cache_dir_lose_nothing(workspace, tmp_path):
    files, _ = generated(200)
    a = workspace(files, name="a")
    b_files = dict(files)
    for i in range(100, 200):
        b_files[f"packages/pkg-{i}/src/index.js"] = f"export const id = {i}; // b\n"
    b = workspace(b_files, name="b")
    store = tmp_path / "store"
    home = tmp_path / "home"
    args = ["run", "build", "--all", "--cache-dir", str(store), *JSON]

    procs = [spawn(args, ws, home, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for ws in (a, b)]
    results = [p.communicate(timeout=600) for p in procs]
    keys: dict[str, set[str]] = {}
    for name, proc, (out, err) in zip("ab", procs, results, strict=True):
        text = err.decode()
        assert proc.returncode == 0, text
        assert "database is locked" not in text
        assert "not saved" not in text
        assert "Traceback" not in text
        doc = json.loads(out)
        assert {r["status"] for r in doc["tasks"]} <= {"success", "cache-hit"}
        assert len(doc["tasks"]) == 200
        keys[name] = {r["hash"] for r in doc["tasks"]}
    assert len(keys["a"] & keys["b"]) == 100  # pkg-000..099 are the same in both
    assert entry_keys(store) == keys["a"] | keys["b"]
    assert len(entry_keys(store)) == 300
    assert integrity(store) == "ok"
    assert len(query(store, "SELECT run_id FROM invocations")) == 2
    assert query(store, "SELECT count(*) FROM runs") == [(400,)]

    for ws in (a, b):
        shutil.rmtree(ws / "packages/pkg-150/dist")
    again = [spawn(args, ws, home, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for ws in (a, b)]
    for proc in again:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
        assert "database is locked" not in err.decode()
        assert set(statuses_of(out).values()) == {"cache-hit"}
    assert (a / "packages/pkg-150/dist/bundle.js").read_text() != (
        b / "packages/pkg-150/dist/bundle.js"
    ).read_text()


# ---------------------------------------------------------------------------------------------
# crafted artifacts


def craft(genuine: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """A `.tar.zst` in vx's own format (its headers copied from a genuine artifact)."""
    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(genuine.read_bytes())).read()
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        headers = dict(tar.pax_headers)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers=headers) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return zstandard.ZstdCompressor(level=3).compress(buf.getvalue())


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    return info, data


def link_member(name: str, target: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
    return info, None


def manifest_row(info: tarfile.TarInfo, data: bytes | None) -> list[Any]:
    if info.type == tarfile.SYMTYPE:
        return [info.name, "l", info.linkname]
    assert data is not None
    return [info.name, "f", info.mode, len(data), xxhash.xxh3_64_hexdigest(data)]


def paths_outside(tmp_path: Path, root: Path, store: Path) -> set[str]:
    """Every path under tmp_path but the store, git's own files and the task's outputs."""
    skip = (store, root / ".git", root / "packages/a/dist")
    return {
        p.relative_to(tmp_path).as_posix()
        for p in tmp_path.rglob("*")
        if not any(p == s or s in p.parents for s in skip)
    }


PLANTED = b"planted\n"


@pytest.mark.parametrize("crafted", ["benign", "dot-dot", "absolute", "escaping-symlink"])
def test_a_crafted_artifact_is_a_miss_that_writes_nothing_outside(workspace, tmp_path, crafted):
    build = {"exec": "mkdir -p dist && cp src/index.txt dist/out.txt", "cache": OUTS}
    root = workspace(tree({"a": ((), {"build": build})}))
    store, home = tmp_path / "store", tmp_path / "home"
    pkg = root / "packages/a"
    args = ["run", "build", "--all", "--cache-dir", str(store)]

    def run(*extra: str) -> tuple[int, str, str]:
        proc = spawn([*args, *extra], root, home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out.decode(), err.decode()

    code, out, _ = run("--output-logs=hash-only")
    assert code == 0
    key = hashes(out)["a#build"]
    artifact = store / f"{key}.tar.zst"
    members = [file_member("dist/out.txt", PLANTED)]
    outside = tmp_path / "outside"
    if crafted == "dot-dot":
        members.append(file_member("../x", b"escaped\n"))
    elif crafted == "absolute":
        members.append(file_member(str(outside), b"escaped\n"))
    elif crafted == "escaping-symlink":
        members.append(link_member("dist/up", "../../../../outside"))
    blob = craft(artifact, members)
    artifact.write_bytes(blob)
    manifest = json.dumps([manifest_row(i, d) for i, d in members], separators=(",", ":"))
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        conn.execute(
            "UPDATE entries SET size = ?, digest = ?, manifest = ? WHERE key = ?",
            (len(blob), xxhash.xxh3_64_hexdigest(blob), manifest, key),
        )
    shutil.rmtree(pkg / "dist")
    before = paths_outside(tmp_path, root, store)

    code, out, err = run(*JSON)
    assert code == 0, err
    row = {r["id"]: r for r in json.loads(out)["tasks"]}["a#build"]
    assert row["hash"] == key
    if crafted == "benign":  # the control: vx takes a well-formed planted artifact
        assert row["status"] == "cache-hit"
        assert (pkg / "dist/out.txt").read_bytes() == PLANTED
        return
    assert row["status"] == "success"
    assert f"[vx] a#build: cache entry {key} is unreadable; running it" in err.splitlines()
    assert tree_bytes(pkg / "dist") == {"out.txt": b"a\n"}
    assert paths_outside(tmp_path, root, store) == before
    assert not outside.exists()
    assert not (root / "packages/x").exists()

    shutil.rmtree(pkg / "dist")
    code, out, err = run(*JSON)
    assert code == 0, err
    assert {r["id"]: r["status"] for r in json.loads(out)["tasks"]} == {"a#build": "cache-hit"}
    assert tree_bytes(pkg / "dist") == {"out.txt": b"a\n"}
