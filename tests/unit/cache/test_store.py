"""The artifact store: atomic saves, safe restores, and what crashes and races leave behind."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from vx.cache.archive import CorruptArtifact
from vx.cache.index import open_index
from vx.cache.store import ARTIFACT_SUFFIX, SaveFailed, Store

SRC = Path(__file__).resolve().parents[3] / "src"
KEY = "0123456789abcdef"


def python(code: str, *args: str) -> subprocess.Popen[str]:
    """Run `code` in a fresh interpreter (from `/`, so no stray `vx.py` shadows the package)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd="/",
        env=env,
        stdin=subprocess.PIPE,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "dist").mkdir(parents=True)
    (root / "dist" / "a.js").write_text("console.log(1)\n")
    (root / "dist" / "bin").write_text("#!/bin/sh\n")
    (root / "dist" / "bin").chmod(0o755)
    return root


OUTPUTS = ["dist/a.js", "dist/bin"]


def test_put_then_restore_into_cleaned_outputs(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    assert store.exists(KEY)
    assert [p.name for p in store.directory.iterdir()] == [KEY + ARTIFACT_SUFFIX]
    assert info.size == store.artifact(KEY).stat().st_size
    before = (project / "dist" / "a.js").read_bytes()
    for name in OUTPUTS:
        (project / name).unlink()
    store.restore(KEY, project, info)
    assert (project / "dist" / "a.js").read_bytes() == before
    assert (project / "dist" / "bin").stat().st_mode & 0o777 == 0o755
    assert store.up_to_date(project, info, present=OUTPUTS)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: (p / "dist" / "a.js").write_text("console.log(2)\n"),
        lambda p: (p / "dist" / "a.js").write_text("console.log(1)\n// longer"),
        lambda p: (p / "dist" / "bin").chmod(0o644),
        lambda p: (p / "dist" / "a.js").unlink(),
        lambda p: ((p / "dist" / "a.js").unlink(), (p / "dist" / "a.js").mkdir()),
        lambda p: ((p / "dist" / "a.js").unlink(), (p / "dist" / "a.js").symlink_to("bin")),
    ],
    ids=["content", "size", "mode", "missing", "now-a-dir", "now-a-link"],
)
def test_up_to_date_notices_any_difference(project: Path, tmp_path: Path, change) -> None:
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    assert store.up_to_date(project, info)
    change(project)
    assert not store.up_to_date(project, info)


def test_up_to_date_with_an_extra_output_on_disk(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    assert not store.up_to_date(project, info, present=[*OUTPUTS, "dist/stale.js"])


def test_keys_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a cache key"):
        Store(tmp_path).artifact("../../etc/passwd")


def test_the_first_writer_of_a_key_wins(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    first = store.put(KEY, OUTPUTS, project)
    (project / "dist" / "a.js").write_text("different bytes, same key\n")
    second = store.put(KEY, OUTPUTS, project)
    assert second == first
    assert [p.name for p in store.directory.iterdir()] == [KEY + ARTIFACT_SUFFIX]


def test_a_replacing_writer_takes_the_keys_place(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    first = store.put(KEY, OUTPUTS, project)
    (project / "dist" / "a.js").write_text("different bytes, same key\n")
    second = store.put(KEY, OUTPUTS, project, replace=True)
    assert second != first
    assert store.describe(KEY).info == second
    assert [p.name for p in store.directory.iterdir()] == [KEY + ARTIFACT_SUFFIX]


def test_an_unreadable_artifact_under_the_key_is_replaced(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.directory.mkdir()
    store.artifact(KEY).write_bytes(b"not an artifact")
    info = store.put(KEY, OUTPUTS, project)
    assert store.describe(KEY).info == info


def test_a_missing_artifact_is_corrupt_not_blocked(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    store.discard(KEY)
    with pytest.raises(CorruptArtifact, match="missing") as caught:
        store.restore(KEY, project, info)
    assert not caught.value.blocked


def test_a_flipped_byte_restores_nothing(project: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    data = bytearray(store.artifact(KEY).read_bytes())
    data[len(data) // 2] ^= 0x01
    store.artifact(KEY).write_bytes(bytes(data))
    for name in OUTPUTS:
        (project / name).unlink()
    with pytest.raises(CorruptArtifact):
        store.restore(KEY, project, info)
    assert sorted(p.name for p in project.rglob("*")) == ["dist"]


def test_a_hit_renews_an_old_file_time_only(project: Path, tmp_path: Path) -> None:
    now = 1_900_000_000.0
    store = Store(tmp_path / "store", clock=lambda: now)
    info = store.put(KEY, OUTPUTS, project)
    path = store.artifact(KEY)
    os.utime(path, (now - 60, now - 60))
    store.restore(KEY, project, info)
    assert path.stat().st_mtime == now - 60
    os.utime(path, (now - 7200, now - 7200))
    store.restore(KEY, project, info)
    assert path.stat().st_mtime == now


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda p: (p / "dist" / "a.js").unlink(), "ENOENT"),
        (lambda p: ((p / "dist" / "a.js").unlink(), os.mkfifo(p / "dist" / "a.js")), "not a"),
    ],
    ids=["vanished", "fifo"],
)
def test_an_output_that_cannot_be_saved(project: Path, tmp_path: Path, setup, reason) -> None:
    store = Store(tmp_path / "store")
    setup(project)
    with pytest.raises(SaveFailed, match=reason) as caught:
        store.put(KEY, OUTPUTS, project)
    assert caught.value.path == str(project / "dist" / "a.js")
    assert list(store.directory.iterdir()) == []


def test_a_file_size_limit_fails_the_save_and_leaves_no_temp(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "big.bin").write_bytes(random.Random(1).randbytes(1 << 20))  # noqa: S311
    store_dir = tmp_path / "store"
    proc = python(
        """
        import resource, signal, sys
        from pathlib import Path
        from vx.cache.store import SaveFailed, Store
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
        try:
            Store(Path(sys.argv[1])).put("0123456789abcdef", ["big.bin"], Path(sys.argv[2]))
        except SaveFailed as err:
            print(err.reason, err.path, sep="|")
        """,
        str(store_dir),
        str(root),
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == f"EFBIG|{store_dir / (KEY + ARTIFACT_SUFFIX)}"
    assert list(store_dir.iterdir()) == []


def test_a_store_this_user_cannot_write_fails_the_save_by_name() -> None:
    """Root may write anywhere, so as root the saving process drops to nobody first."""
    base = Path(tempfile.mkdtemp(prefix="vx-test-"))  # every user can reach it, unlike tmp_path
    try:
        base.chmod(0o755)
        (base / "p").mkdir()
        (base / "p" / "out.txt").write_text("out")
        (base / "store").mkdir(mode=0o555)
        proc = python(
            """
            import os, sys
            from pathlib import Path
            from vx.cache.store import SaveFailed, Store
            import vx.cache.archive  # loaded lazily by a save; nobody cannot read root's stdlib
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            try:
                Store(Path(sys.argv[1])).put("0123456789abcdef", ["out.txt"], Path(sys.argv[2]))
            except SaveFailed as err:
                print(err)
            """,
            str(base / "store"),
            str(base / "p"),
        )
        out, err = proc.communicate(timeout=60)
        leftovers = list((base / "store").iterdir())
    finally:
        shutil.rmtree(base)
    assert proc.returncode == 0, err
    artifact = base / "store" / (KEY + ARTIFACT_SUFFIX)
    assert out == f"cache entry not saved: EACCES writing {artifact}\n"
    assert leftovers == []


RACE = """
import sys, time
from pathlib import Path
from vx.cache.store import Store
store, root, tag, go = Store(Path(sys.argv[1])), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
root.mkdir(parents=True)
while not go.exists():
    time.sleep(0.001)
for i in range(20):
    (root / "out.txt").write_text(f"{tag} {i}\\n" * 5000)
    info = store.put(f"{i:016x}", ["out.txt"], root)
    print(f"{i:016x}", info.size, info.digest)
"""


def test_two_processes_saving_the_same_keys(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    go = tmp_path / "go"
    procs = [python(RACE, str(store.directory), str(tmp_path / tag), tag, str(go)) for tag in "AB"]
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(sorted(out.split("\n")))
    assert results[0] == results[1]  # each got back what is on disk, whoever wrote it
    names = sorted(p.name for p in store.directory.iterdir())
    assert names == [f"{i:016x}{ARTIFACT_SUFFIX}" for i in range(20)]
    for i in range(20):
        described = store.describe(f"{i:016x}")
        assert f"{described.info.size} {described.info.digest}" in results[0][i + 1]


FORKER = """
import os, random, sys
from pathlib import Path
from vx.cache.index import LogChunk, open_index
from vx.cache.store import Store
from vx.events import Stream

cache, projects = Path(sys.argv[1]), Path(sys.argv[2])


def write(prefix, saves, ready):
    store, index, root = Store(cache), open_index(cache), projects / str(prefix)
    (root / "dist").mkdir(parents=True)
    os.write(ready, b"!")
    for j in range(saves):
        key = f"{prefix:04x}{j:012x}"
        (root / "dist" / "f.bin").write_bytes(random.Random(key).randbytes(64 * 1024))
        (root / "dist" / "g.txt").write_text(key * 100)
        info = store.put(key, ["dist/f.bin", "dist/g.txt"], root)
        log = [LogChunk(Stream.STDOUT, key)]
        index.put_entry(key, project="p", task="t", artifact=info, log=log)


for line in sys.stdin:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            write(*map(int, line.split()), w)
        finally:
            os._exit(1)
    os.close(w)
    os.read(r, 1)
    os.close(r)
    print(pid, flush=True)
    print(os.waitpid(pid, 0)[1], flush=True)
"""


def test_kill_9_during_saves_never_leaves_a_wrong_entry(tmp_path: Path) -> None:
    """Writers (forked from one warm interpreter) are SIGKILLed at random points of their saves."""
    cache = tmp_path / "cache"
    rng = random.Random(9)  # noqa: S311
    forker = python(FORKER, str(cache), str(tmp_path / "projects"))
    assert forker.stdin is not None
    assert forker.stdout is not None
    for iteration in range(60):
        # A writer saves until it is killed; every tenth makes two saves and ends by itself.
        saves = 2 if iteration % 10 == 9 else 10**6
        forker.stdin.write(f"{iteration} {saves}\n")
        forker.stdin.flush()
        pid = int(forker.stdout.readline())
        if iteration % 10 == 9:
            # Every tenth save is let finish, so the survivors are checked however slow the
            # machine is (on a loaded one, 0.1 s may end every save before its rename).
            assert os.WEXITSTATUS(int(forker.stdout.readline())) == 1
            continue
        time.sleep(rng.uniform(0, 0.1))
        os.kill(pid, signal.SIGKILL)
        status = int(forker.stdout.readline())
        assert os.WIFEXITED(status) or os.WTERMSIG(status) == signal.SIGKILL
    forker.stdin.close()
    assert forker.wait(timeout=60) == 0, forker.communicate()
    conn = sqlite3.connect(cache / "cache.db")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    indexed = {key for (key,) in conn.execute("SELECT key FROM entries")}
    conn.close()
    store, index = Store(cache), open_index(cache)
    keys = [p.name.removesuffix(ARTIFACT_SUFFIX) for p in cache.glob("*" + ARTIFACT_SUFFIX)]
    assert indexed <= set(keys)  # a row is written only after its artifact's rename
    entries = [e for e in (index.get_entry(k) for k in keys) if e is not None]
    assert entries
    for entry in entries:
        out = tmp_path / "restored" / entry.key
        out.mkdir(parents=True)
        store.restore(entry.key, out, entry.artifact)
        want = random.Random(entry.key).randbytes(64 * 1024)  # noqa: S311
        assert (out / "dist" / "f.bin").read_bytes() == want
        assert (out / "dist" / "g.txt").read_text() == entry.key * 100
        assert [c.text for c in index.entry_log(entry.key) or ()] == [entry.key]
    for key in keys:
        store.describe(key)  # a row-less artifact is whole too: it was renamed complete
    index.close()


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink-to-dev-zero", "symlink-to-itself"])
def test_anything_but_a_regular_file_in_an_artifacts_place_is_a_miss_never_a_wait(
    project: Path, tmp_path: Path, kind: str
) -> None:
    """A fifo's open would wait for a writer forever; vx opens without blocking instead.

    Run in a child with a deadline, so a regression fails here rather than hanging the suite.
    """
    store = Store(tmp_path / "store")
    info = store.put(KEY, OUTPUTS, project)
    path = store.artifact(KEY)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path.name)
    child = python(
        """
        import sys
        from pathlib import Path
        from vx.cache.archive import CorruptArtifact
        from vx.cache.manifest import ArtifactInfo
        from vx.cache.store import Store
        store = Store(Path(sys.argv[1]))
        info = ArtifactInfo(int(sys.argv[4]), sys.argv[5])
        for call in (
            lambda: store.restore(sys.argv[2], Path(sys.argv[3]), info),
            lambda: store.describe(sys.argv[2]),
            lambda: store.verify(sys.argv[2], info),
        ):
            try:
                call()
            except CorruptArtifact as err:
                print(err.reason)
        """,
        str(store.directory),
        KEY,
        str(project),
        str(info.size),
        info.digest,
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    reasons = out.splitlines()
    assert len(reasons) == 3, out + err
    assert set(reasons) <= {"not a regular file", "unreadable (ELOOP)"}, reasons
    assert [p.name for p in project.iterdir()] == ["dist"]


@pytest.mark.parametrize("durable", [True, False], ids=["synced", "unsynced"])
def test_put_bytes_makes_the_store_and_replaces_what_lies_there(
    tmp_path: Path, project: Path, durable: bool
) -> None:
    """A remote hit's artifact lands in a store not yet made, then over a stale leftover."""
    source = Store(tmp_path / "source")
    info = source.put(KEY, ["dist/a.js", "dist/bin"], project)
    data = source.artifact(KEY).read_bytes()
    store = Store(tmp_path / "not" / "yet" / "made")
    store.put_bytes(KEY, b"a stale leftover", durable=durable)
    store.put_bytes(KEY, data, durable=durable)
    assert sorted(p.name for p in store.directory.iterdir()) == [KEY + ARTIFACT_SUFFIX]
    out = tmp_path / "out"
    out.mkdir()
    store.restore(KEY, out, info)
    assert (out / "dist" / "a.js").read_text() == "console.log(1)\n"
    assert os.access(out / "dist" / "bin", os.X_OK)


def test_put_with_a_syncer_places_the_artifact_and_leaves_its_fsyncs_to_it(
    tmp_path: Path, project: Path
) -> None:
    """The save returns with the artifact whole in place; the syncer's thread finishes the
    fsyncs by `close`, and a file pruned before its turn is passed by."""
    from vx.cache.syncer import Syncer

    store, syncer = Store(tmp_path / "store"), Syncer()
    info = store.put(KEY, ["dist/a.js", "dist/bin"], project, syncer=syncer)
    syncer.add(tmp_path / "store" / "pruned-meanwhile.tar.zst")
    syncer.close()
    syncer.close()  # a second close waits for nothing
    out = tmp_path / "out"
    out.mkdir()
    store.restore(KEY, out, info)
    assert (out / "dist" / "a.js").read_text() == "console.log(1)\n"
    assert sorted(p.name for p in store.directory.iterdir()) == [KEY + ARTIFACT_SUFFIX]
