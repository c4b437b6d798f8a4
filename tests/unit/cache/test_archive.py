"""The artifact format: round trips, and every unsafe archive refused with nothing written."""

from __future__ import annotations

import io
import os
import socket
import stat
import tarfile
from pathlib import Path

import pytest
import xxhash
import zstandard

from vx.cache.archive import (
    ARTIFACT_FORMAT,
    ArtifactInfo,
    CorruptArtifact,
    Unarchivable,
    extract_archive,
    inspect_archive,
    write_archive,
)
from vx.cache.manifest import Recorded


def test_artifact_format_version_is_pinned() -> None:
    # Bumping it turns every stored artifact into a miss: do it on purpose, then update here.
    assert ARTIFACT_FORMAT == 1


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes | str]]:
    """Every path under root: its kind, permission bits, and bytes or link target."""
    out: dict[str, tuple[str, int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, str(path.readlink()))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", mode, b"")
            else:
                out[rel] = ("file", mode, path.read_bytes())
    return out


def archive(root: Path, paths: list[str], meta: str = "") -> tuple[bytes, ArtifactInfo]:
    buf = io.BytesIO()
    info = write_archive(buf, root, paths, meta=meta)
    return buf.getvalue(), info


def crafted(members: list[tuple[tarfile.TarInfo, bytes | None]], fmt: int = 1) -> bytes:
    """A tar.zst written by hand, the way a hostile or broken artifact could be."""
    raw = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(raw, closefd=False) as zw:
        headers = {"VX.format": str(fmt)}
        with tarfile.open(
            fileobj=zw, mode="w|", format=tarfile.PAX_FORMAT, pax_headers=headers
        ) as tar:
            for info, data in members:
                if data is not None:
                    info.size = len(data)
                tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def info_of(data: bytes) -> ArtifactInfo:
    """The index row a store holding `data` would have: its bytes and every member as is.

    The manifest is read straight off the tar, unvalidated, so that what refuses a hostile
    member in these tests is the member check, not a manifest that left it out.
    """
    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    recorded: list[Recorded] = []
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        for m in tar:
            path = "/".join(p for p in m.name.split("/") if p not in ("", "."))
            if m.issym():
                recorded.append(Recorded(path, "link", target=m.linkname))
            elif m.isdir():
                recorded.append(Recorded(path, "dir", m.mode & 0o777))
            else:
                body = tar.extractfile(m) if m.isfile() else None
                digest = xxhash.xxh3_64_hexdigest(body.read() if body else b"")
                recorded.append(Recorded(path, "file", m.mode & 0o777, m.size, digest))
    return ArtifactInfo(len(data), xxhash.xxh3_64_hexdigest(data), tuple(recorded))


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    return info


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "dist" / "deep" / "er").mkdir(parents=True)
    (src / "dist" / "empty").mkdir()
    (src / "dist" / "a.txt").write_bytes(b"alpha\n")
    (src / "dist" / "deep" / "er" / "b.bin").write_bytes(bytes(range(256)) * 50)
    (src / "dist" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (src / "dist" / "run.sh").chmod(0o755)
    (src / "dist" / "secret").write_text("s")
    (src / "dist" / "secret").chmod(0o600)
    (src / "dist" / "ünï cödé.txt").write_text("names are bytes")
    (src / "dist" / "link").symlink_to("a.txt")
    (src / "dist" / "dirlink").symlink_to("deep/er")
    (src / "dist" / "up").symlink_to("../dist/a.txt")
    (src / "dist" / "abs").symlink_to(src / "dist" / "a.txt")
    return src


ALL = [
    "dist/a.txt",
    "dist/deep/er/b.bin",
    "dist/run.sh",
    "dist/secret",
    "dist/ünï cödé.txt",
    "dist/link",
    "dist/dirlink",
    "dist/up",
    "dist/abs",
    "dist/empty",
]


def test_round_trip_keeps_files_dirs_symlinks_and_modes(tree: Path, tmp_path: Path) -> None:
    data, info = archive(tree, ALL, meta="the log")
    assert (info.size, info.digest) == (len(data), xxhash.xxh3_64_hexdigest(data))
    out = tmp_path / "out"
    out.mkdir()
    extract_archive(io.BytesIO(data), "a", out, info)
    got = snapshot(out)
    want = {k: v for k, v in snapshot(tree).items() if k.split("/")[0] == "dist"}
    want["dist/abs"] = ("link", 0, "a.txt")  # absolute inside the root: made relative
    assert got == want
    assert got["dist/run.sh"][1] == 0o755
    assert got["dist/secret"][1] == 0o600
    assert [p.name for p in out.iterdir()] == ["dist"]  # no staging dir left behind


def test_archives_are_deterministic_and_describe_themselves(tree: Path) -> None:
    first, info = archive(tree, ALL, meta="m")
    second, _ = archive(tree, [*reversed(ALL), "./dist/a.txt"], meta="m")
    assert first == second
    described = inspect_archive(io.BytesIO(first), "a")
    assert described.meta == "m"
    assert described.info == info
    assert ArtifactInfo.parse_manifest(info.manifest_json()) == info.manifest


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda p: p.joinpath("out").symlink_to("/etc/passwd"), "outside the project"),
        (lambda p: p.joinpath("out").symlink_to("../../x"), "outside the project"),
        (lambda p: os.mkfifo(p / "out"), "not a regular file"),
    ],
    ids=["absolute-outside", "relative-outside", "fifo"],
)
def test_outputs_the_format_will_not_hold(tmp_path: Path, setup, reason: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    setup(root)
    with pytest.raises(Unarchivable, match=reason):
        archive(root, ["out"])


def test_a_socket_output_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p"
    root.mkdir()
    monkeypatch.chdir(root)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock")
        with pytest.raises(Unarchivable, match="not a regular file"):
            archive(root, ["sock"])


HOSTILE = {
    "dot-dot": [(member("../x"), b"evil")],
    "nested-dot-dot": [(member("a/../../x"), b"evil")],
    "absolute": [(member("/tmp/vx-evil-abs"), b"evil")],
    "hard-link": [(member("a"), b"x"), (member("b", tarfile.LNKTYPE, "a"), None)],
    "device": [(member("dev", tarfile.CHRTYPE), None)],
    "fifo": [(member("fifo", tarfile.FIFOTYPE), None)],
    "symlink-absolute": [(member("l", tarfile.SYMTYPE, "/etc"), None)],
    "symlink-empty": [(member("l", tarfile.SYMTYPE, ""), None)],
    "symlink-escapes": [(member("d/l", tarfile.SYMTYPE, "../../outside"), None)],
    "symlink-chain-escapes": [
        (member("a", tarfile.SYMTYPE, "d/b/.."), None),
        (member("d", tarfile.DIRTYPE), None),
        (member("d/b", tarfile.SYMTYPE, ".."), None),
    ],
    "symlink-loop": [
        (member("a", tarfile.SYMTYPE, "b/x"), None),
        (member("b", tarfile.SYMTYPE, "a/y"), None),
    ],
    "write-through-own-symlink": [
        (member("l", tarfile.SYMTYPE, "sub"), None),
        (member("sub", tarfile.DIRTYPE), None),
        (member("l/f", tarfile.REGTYPE), b"through"),
    ],
    "under-a-file": [(member("f"), b"1"), (member("f/g"), b"2")],
    "duplicate": [(member("f"), b"1"), (member("f"), b"2")],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_write_nothing(tmp_path: Path, name: str) -> None:
    data = crafted(HOSTILE[name])
    root = tmp_path / "sandbox" / "p"
    root.mkdir(parents=True)
    (root / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    with pytest.raises(CorruptArtifact) as caught:
        extract_archive(io.BytesIO(data), "art", root, info_of(data))
    assert not caught.value.blocked
    assert snapshot(tmp_path) == before
    assert not Path("/tmp/vx-evil-abs").exists()
    with pytest.raises(CorruptArtifact):
        inspect_archive(io.BytesIO(data), "art")


def test_a_symlink_on_disk_cannot_redirect_the_restore(tmp_path: Path) -> None:
    data = crafted([(member("dist", tarfile.DIRTYPE), None), (member("dist/f"), b"payload")])
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "p"
    root.mkdir()
    (root / "dist").symlink_to(outside)
    before = snapshot(tmp_path)
    with pytest.raises(CorruptArtifact, match="symlink on disk") as caught:
        extract_archive(io.BytesIO(data), "art", root, info_of(data))
    assert caught.value.blocked
    assert list(outside.iterdir()) == []
    assert snapshot(tmp_path) == before


def test_a_symlink_on_disk_at_a_files_path_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    data = crafted([(member("dist/a.txt"), b"restored")])
    victim = tmp_path / "victim.txt"
    victim.write_text("must not change")
    root = tmp_path / "p"
    (root / "dist").mkdir(parents=True)
    (root / "dist" / "a.txt").symlink_to(victim)
    extract_archive(io.BytesIO(data), "art", root, info_of(data))
    assert victim.read_text() == "must not change"
    assert not (root / "dist" / "a.txt").is_symlink()
    assert (root / "dist" / "a.txt").read_bytes() == b"restored"


def test_a_refused_placement_rolls_back_what_it_moved(tmp_path: Path) -> None:
    data = crafted(
        [(member("a/x"), b"new a"), (member("b.txt"), b"new b"), (member("c/y"), b"new c")]
    )
    root = tmp_path / "p"
    root.mkdir()
    (root / "b.txt").write_text("old b")
    (root / "c").symlink_to(tmp_path / "elsewhere")
    before = snapshot(tmp_path)
    with pytest.raises(CorruptArtifact) as caught:
        extract_archive(io.BytesIO(data), "art", root, info_of(data))
    assert caught.value.blocked
    assert snapshot(tmp_path) == before


def test_an_existing_file_is_replaced_and_existing_dirs_are_merged(tmp_path: Path) -> None:
    data = crafted([(member("dist/a"), b"new"), (member("dist/sub/b"), b"b")])
    root = tmp_path / "p"
    (root / "dist").mkdir(parents=True)
    (root / "dist" / "a").write_text("old")
    (root / "dist" / "other").write_text("untouched")
    extract_archive(io.BytesIO(data), "art", root, info_of(data))
    umask = os.umask(0)
    os.umask(umask)
    assert snapshot(root) == {
        "dist": ("dir", 0o777 & ~umask, b""),
        "dist/a": ("file", 0o644, b"new"),
        "dist/other": ("file", 0o666 & ~umask, b"untouched"),
        "dist/sub": ("dir", 0o777 & ~umask, b""),
        "dist/sub/b": ("file", 0o644, b"b"),
    }


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: flip(d, len(d) // 2),
        lambda d: flip(d, len(d) - 1),
        lambda d: d[: len(d) // 2],
        lambda d: d + b"\0",
        lambda _: b"",
    ],
    ids=["flip-middle", "flip-last", "truncated", "trailing-byte", "empty"],
)
def test_damaged_bytes_are_refused_before_anything_moves(
    tree: Path, tmp_path: Path, damage
) -> None:
    data, info = archive(tree, ALL)
    root = tmp_path / "p"
    root.mkdir()
    (root / "keep.txt").write_text("previous state")
    before = snapshot(root)
    with pytest.raises(CorruptArtifact) as caught:
        extract_archive(io.BytesIO(damage(data)), "art", root, info)
    assert not caught.value.blocked
    assert snapshot(root) == before


def test_a_whole_valid_artifact_that_is_not_the_indexed_one_is_refused(tmp_path: Path) -> None:
    data = crafted([(member("f"), b"one")])
    other = crafted([(member("f"), b"two")])
    root = tmp_path / "p"
    root.mkdir()
    with pytest.raises(CorruptArtifact, match="differs from the index"):
        extract_archive(io.BytesIO(other), "art", root, info_of(data))
    assert list(root.iterdir()) == []


def test_a_member_the_index_never_recorded_is_refused_before_it_is_written(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "src" / "f").write_bytes(b"small")
    data, info = archive(root, ["src/f"])
    bigger = crafted([(member("src/f"), b"x" * 100_000)])
    for hostile in (bigger, crafted([(member("src/f"), b"small"), (member("extra"), b"e")])):
        with pytest.raises(CorruptArtifact, match="not what the index recorded"):
            extract_archive(io.BytesIO(hostile), "art", root, info)
    after = snapshot(root)
    assert sorted(after) == ["src", "src/f"]
    assert after["src/f"] == ("file", 0o644, b"small")
    extract_archive(io.BytesIO(data), "art", root, info)


def test_an_artifact_of_another_format_is_refused(tmp_path: Path) -> None:
    data = crafted([(member("f"), b"x")], fmt=ARTIFACT_FORMAT + 1)
    with pytest.raises(CorruptArtifact, match="artifact format"):
        extract_archive(io.BytesIO(data), "art", tmp_path, info_of(data))


def test_a_manifest_emptied_in_the_index_refuses_every_member(tree: Path, tmp_path: Path) -> None:
    data, info = archive(tree, ["dist/a.txt"])
    emptied = ArtifactInfo(info.size, info.digest, ())
    root = tmp_path / "p"
    root.mkdir()
    with pytest.raises(CorruptArtifact, match="not what the index recorded") as caught:
        extract_archive(io.BytesIO(data), "art", root, emptied)
    assert not caught.value.blocked
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("edit", ["drop-one", "other-digest", "other-mode", "other-target"])
def test_a_manifest_that_is_not_the_artifacts_members_is_refused(
    tree: Path, tmp_path: Path, edit: str
) -> None:
    data, info = archive(tree, ["dist/a.txt", "dist/run.sh", "dist/link"])
    rows = list(info.manifest)
    if edit == "drop-one":
        rows.pop()
    else:
        i = {"other-digest": 0, "other-mode": 2, "other-target": 1}[edit]
        r = rows[i]
        rows[i] = Recorded(
            r.path,
            r.kind,
            0o600 if edit == "other-mode" else r.mode,
            r.size,
            "0" * 16 if edit == "other-digest" else r.digest,
            "elsewhere" if edit == "other-target" else r.target,
        )
    root = tmp_path / "p"
    root.mkdir()
    with pytest.raises(CorruptArtifact) as caught:
        extract_archive(
            io.BytesIO(data), "art", root, ArtifactInfo(info.size, info.digest, tuple(rows))
        )
    assert "recorded" in caught.value.reason
    assert list(root.iterdir()) == []


def test_an_artifact_of_no_outputs_reads_back_as_empty(tmp_path: Path) -> None:
    """Outputs that matched no file make an archive of its header alone, which `tarfile`
    itself refuses to read; vx reads it as the empty entry it is, and nothing more."""
    data, info = archive(tmp_path, [], meta="made by a test")
    assert info.manifest == ()
    described = inspect_archive(io.BytesIO(data), "art")
    assert (described.info, described.meta) == (info, "made by a test")
    root = tmp_path / "p"
    root.mkdir()
    extract_archive(io.BytesIO(data), "art", root, info)
    assert list(root.iterdir()) == []
    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    for bad in (raw[:-1] + b"x", raw[:512], raw + b"\0" * (2 << 20)):
        with pytest.raises(CorruptArtifact):
            inspect_archive(io.BytesIO(zstandard.ZstdCompressor().compress(bad)), "art")
