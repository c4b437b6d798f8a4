"""Crafted artifacts planted under a real key of a real store, as a shared cache dir or another
checkout could plant them.

Each case replaces the artifact of `a#build` (and, where the case says so, its index row) and
runs vx. A hostile entry is a miss: the task runs, `dist/` ends up as the task writes it, and
nothing else changes anywhere under the test's tmp dir, inside the project or outside it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
import xxhash
import zstandard
from tests.conftest import git, run_vx
from tests.e2e.cachews import hashes, tree_bytes
from tests.e2e.runws import tree
from tests.e2e.test_cache_faults import OUTS, craft, file_member, link_member, manifest_row
from tests.faults.faultws import changed, picture

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.faults

Member = tuple[tarfile.TarInfo, bytes | None]
PLANTED = b"planted\n"
GENUINE = {"out.txt": b"a\n"}


def dir_member(name: str) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info, None


def typed_member(name: str, kind: bytes, linkname: str = "") -> Member:
    """A member of a type vx never writes: a hard link, a device, a fifo, a contiguous file."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o644
    return info, None


def pax_member(name: str, path: str, data: bytes) -> Member:
    """A file whose pax header renames it: tar readers take `path` over the ustar name."""
    info, _ = file_member(name, data)
    info.pax_headers = {"path": path}
    return info, data


def row(info: tarfile.TarInfo, data: bytes | None) -> list[Any]:
    """The manifest row a matching index would hold, so the index itself vouches for it."""
    if info.type == tarfile.DIRTYPE:
        return [info.name, "d", info.mode]
    if info.type == tarfile.SYMTYPE or data is not None:
        return manifest_row(info, data)
    return [info.name, "f", info.mode, 0, xxhash.xxh3_64_hexdigest(b"")]


def members_case(make: Callable[[Path], list[Member]]) -> Callable[[Path, Path], Planted]:
    """A case built from members; its row matches the crafted bytes exactly."""

    def plant(genuine: Path, outside: Path) -> Planted:
        members = make(outside)
        blob = craft(genuine, members)
        manifest = json.dumps([row(i, d) for i, d in members], separators=(",", ":"))
        return Planted(blob, manifest)

    return plant


class Planted:
    """An artifact's bytes and the row planted beside it (size and digest default to the
    bytes' own, so only the cases about a lying row lie)."""

    def __init__(
        self, blob: bytes | None, manifest: str, *, size: int | None = None, digest: str = ""
    ) -> None:
        self.blob = blob
        self.manifest = manifest
        self.size = len(blob or b"") if size is None else size
        self.digest = digest or xxhash.xxh3_64_hexdigest(blob or b"")


def genuine_case(
    *, manifest: str | None = None, cut: int = 0, size_delta: int = 0, digest: str = ""
) -> Callable[[Path, Path], Planted]:
    """The genuine artifact, cut short or described by a lying or rotten row."""

    def plant(genuine: Path, outside: Path) -> Planted:
        blob = genuine.read_bytes()
        if cut:
            blob = blob[: len(blob) // cut]
        good = json.dumps([["out.txt", "f", 0o644, 2, xxhash.xxh3_64_hexdigest(b"a\n")]])
        planted = Planted(blob, good.replace("out.txt", "dist/out.txt"), digest=digest)
        planted.size += size_delta
        if manifest is not None:
            planted.manifest = manifest
        return planted

    return plant


def raw_case(data: bytes) -> Callable[[Path, Path], Planted]:
    """Bytes that are no artifact at all, with a row that vouches for them."""
    manifest = json.dumps([["dist/out.txt", "f", 0o644, 8, xxhash.xxh3_64_hexdigest(PLANTED)]])
    return lambda _genuine, _outside: Planted(data, manifest)


def tar_cut_short(genuine: Path, outside: Path) -> Planted:
    """A whole zstd frame around a tar whose file member ends early."""
    good = craft(genuine, [file_member("dist/out.txt", PLANTED * 64)])
    raw = zstandard.ZstdDecompressor().decompress(good, max_output_size=1 << 20)
    cut = raw.index(PLANTED * 64) + 100  # tar pads to 10 kB: cut inside the data, not the padding
    blob = zstandard.ZstdCompressor().compress(raw[:cut])
    manifest = json.dumps([row(*file_member("dist/out.txt", PLANTED * 64))])
    return Planted(blob, manifest)


F = file_member
L = link_member
CASES: dict[str, Callable[[Path, Path], Planted]] = {
    # paths that leave the project
    "absolute-path": members_case(lambda o: [F(str(o / "abs.txt"), PLANTED)]),
    "dot-dot": members_case(lambda _: [F("../x.txt", PLANTED)]),
    "dot-dot-inside-dist": members_case(lambda _: [F("dist/../../../../outside/y", PLANTED)]),
    "dot-slash-dot-dot": members_case(lambda _: [F("./../z.txt", PLANTED)]),
    "long-then-dot-dot": members_case(lambda _: [F("dist/" + "x" * 150 + "/../../../w", PLANTED)]),
    "pax-path-override": members_case(
        lambda _: [pax_member("dist/ok.txt", "../../pax.txt", PLANTED)]
    ),
    # member types vx never writes
    "hard-link-out": members_case(
        lambda _: [typed_member("dist/h", tarfile.LNKTYPE, "../../../package.json")]
    ),
    "hard-link-in": members_case(
        lambda _: [
            F("dist/out.txt", PLANTED),
            typed_member("dist/h", tarfile.LNKTYPE, "dist/out.txt"),
        ]
    ),
    "char-device": members_case(lambda _: [typed_member("dist/null", tarfile.CHRTYPE)]),
    "block-device": members_case(lambda _: [typed_member("dist/sda", tarfile.BLKTYPE)]),
    "fifo-member": members_case(lambda _: [typed_member("dist/pipe", tarfile.FIFOTYPE)]),
    "contiguous-file": members_case(lambda _: [typed_member("dist/c", tarfile.CONTTYPE)]),
    # symlinks that escape, alone or as a way through
    "symlink-escaping": members_case(lambda _: [L("dist/up", "../../../../outside")]),
    "symlink-absolute": members_case(lambda o: [L("dist/abs", str(o))]),
    "symlink-chain-escaping": members_case(
        lambda _: [L("dist/a", "b/x"), L("dist/b", "../../../..")]
    ),
    "symlink-then-file-into-src": members_case(
        lambda _: [L("dist/l", "../src"), F("dist/l/index.txt", PLANTED)]
    ),
    "symlink-then-file-outside": members_case(
        lambda _: [L("dist/o", "../../../../outside"), F("dist/o/x.txt", PLANTED)]
    ),
    "symlink-dot-dot-then-config": members_case(
        lambda _: [L("dist/up", ".."), F("dist/up/vx.config.json", PLANTED)]
    ),
    "dist-itself-a-symlink": members_case(
        lambda _: [L("dist", "../../../outside"), F("dist/x.txt", PLANTED)]
    ),
    # members the task's outputs would not match
    "outside-outputs-src": members_case(lambda _: [F("src/index.txt", PLANTED)]),
    "outside-outputs-config": members_case(
        lambda _: [F("dist/out.txt", PLANTED), F("vx.config.json", b'{"tasks": {}}\n')]
    ),
    "outside-outputs-manifest": members_case(lambda _: [F("package.json", PLANTED)]),
    "outside-outputs-sibling-dir": members_case(lambda _: [F("dist2/x.txt", PLANTED)]),
    # names and duplicates
    "huge-name": members_case(lambda _: [F("dist/" + "n" * 5000, PLANTED)]),
    "huge-link-target": members_case(lambda _: [L("dist/l", "t/" * 3000)]),
    "duplicate-file": members_case(
        lambda _: [F("dist/out.txt", b"a\n"), F("dist/out.txt", PLANTED)]
    ),
    "file-then-dir": members_case(lambda _: [F("dist/x", PLANTED), dir_member("dist/x")]),
    "file-under-file": members_case(lambda _: [F("dist/x", PLANTED), F("dist/x/y", PLANTED)]),
    # broken streams and lying rows
    "truncated-zstd": genuine_case(cut=2),
    "truncated-tar": tar_cut_short,
    "not-zstd": raw_case(b"\x00garbage, not an artifact\n" * 40),
    "zstd-of-garbage": raw_case(zstandard.ZstdCompressor().compress(b"not a tar\n" * 200)),
    "empty-artifact": raw_case(b""),
    "wrong-size": genuine_case(size_delta=1),
    "wrong-digest": genuine_case(digest="0123456789abcdef"),
    "empty-manifest-list": genuine_case(manifest="[]"),
    "empty-manifest-object": genuine_case(manifest="{}"),
    "manifest-not-json": genuine_case(manifest='[["dist/out.txt"'),
    # a fifo where the artifact should be: opening it must not hang vx, which holds the run lock
    "fifo-artifact": lambda genuine, outside: Planted(
        None, genuine_case()(genuine, outside).manifest
    ),
}


@pytest.fixture
def planted_store(workspace, tmp_path):
    """A workspace whose `a#build` has one genuine entry; yields (root, store, key, genuine)."""
    build = {"exec": "mkdir -p dist && cp src/index.txt dist/out.txt", "cache": OUTS}
    root = workspace(tree({"a": ((), {"build": build})}))
    store = tmp_path / "store"
    first = run_vx(
        ["run", "build", "--all", "--cache-dir", str(store), "--output-logs=hash-only"],
        root,
        home=tmp_path / "home",
    )
    key = hashes(first.assert_ok().out)["a#build"]
    genuine = tmp_path / "genuine.tar.zst"
    shutil.copyfile(store / f"{key}.tar.zst", genuine)
    return root, store, key, genuine


def plant(root: Path, store: Path, key: str, planted: Planted, home: Path) -> None:
    """Write the artifact (or a fifo, for a None blob) and point the key's row at it."""
    for _ in range(2):
        with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
            cur = conn.execute(
                "UPDATE entries SET size = ?, digest = ?, manifest = ? WHERE key = ?",
                (planted.size, planted.digest, planted.manifest, key),
            )
        if cur.rowcount == 1:
            break
        # The last case left no row (a save refused, say): make the genuine entry again.
        run_vx(["run", "build", "--all", "--cache-dir", str(store)], root, home=home).assert_ok()
    assert cur.rowcount == 1
    artifact = store / f"{key}.tar.zst"
    artifact.unlink(missing_ok=True)
    if planted.blob is None:
        os.mkfifo(artifact)
    else:
        artifact.write_bytes(planted.blob)


def try_cases(names: list[str], planted_store, tmp_path) -> None:
    root, store, key, genuine = planted_store
    home = tmp_path / "home"
    outside = tmp_path / "outside"
    dist = root / "packages/a/dist"
    skip = (store, home, root / ".git", dist, genuine)
    failures: dict[str, str] = {}
    escapes = 0
    for name in names:
        plant(root, store, key, CASES[name](genuine, outside), home)
        shutil.rmtree(dist, ignore_errors=True)
        before = picture(tmp_path, skip)
        try:
            r = run_vx(
                ["run", "build", "--all", "--cache-dir", str(store), "--format=json"],
                root,
                home=home,
                timeout=20,
            )
        except subprocess.TimeoutExpired:
            failures[name] = "vx hung"
            continue
        after = picture(tmp_path, skip)
        moved = changed(before, after)
        escapes += any(not p.startswith("ws/") for p in moved)
        if moved:
            failures[name] = f"wrote outside dist/: {moved[:3]}"
            git(root, "reset", "-q", "--hard")
            git(root, "clean", "-q", "-fd")
            shutil.rmtree(outside, ignore_errors=True)
            for path in tmp_path.glob("*.txt"):
                path.unlink()
        elif "Traceback" in r.err or r.code != 0:
            failures[name] = f"exit {r.code}: {r.err[-300:]}"
        elif {t["id"]: t["status"] for t in r.json()["tasks"]} != {"a#build": "success"}:
            failures[name] = f"taken as a hit: {r.json()['tasks']}"
        elif tree_bytes(dist) != GENUINE:
            failures[name] = f"dist/ is {tree_bytes(dist)}"
    print(f"hostile archives tried: {len(names)}; escapes: {escapes}; failed: {sorted(failures)}")
    assert escapes == 0, failures
    assert failures == {}


NAMES = sorted(CASES)
HALF = len(NAMES) // 2


def test_the_control_a_well_formed_planted_entry_is_taken(planted_store, tmp_path):
    """The planting itself works: vx restores a crafted artifact that breaks no rule."""
    root, store, key, genuine = planted_store
    home = tmp_path / "home"
    plant(
        root,
        store,
        key,
        members_case(lambda _: [F("dist/out.txt", PLANTED)])(genuine, tmp_path),
        home,
    )
    shutil.rmtree(root / "packages/a/dist")
    r = run_vx(
        ["run", "build", "--all", "--cache-dir", str(store), "--format=json"], root, home=home
    )
    assert r.assert_ok().json()["tasks"][0]["status"] == "cache-hit"
    assert tree_bytes(root / "packages/a/dist") == {"out.txt": PLANTED}


def test_hostile_archives_first_half(planted_store, tmp_path):
    try_cases(NAMES[:HALF], planted_store, tmp_path)


def test_hostile_archives_second_half(planted_store, tmp_path):
    try_cases(NAMES[HALF:], planted_store, tmp_path)
