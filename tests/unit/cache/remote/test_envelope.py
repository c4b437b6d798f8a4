"""The remote envelope: a round trip, and every damaged or hostile blob refused before use."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import tarfile
from typing import TYPE_CHECKING

import pytest
import xxhash
import zstandard

from vx.cache.archive import write_archive
from vx.cache.remote.base import Untrusted
from vx.cache.remote.envelope import ENVELOPE_VERSION, pack, unpack

if TYPE_CHECKING:
    from pathlib import Path

    from vx.cache.manifest import ArtifactInfo

KEY = "0123456789abcdef"


def test_envelope_version_is_pinned() -> None:
    # Bumping it makes every remote entry of an older vx a miss: do it on purpose.
    assert ENVELOPE_VERSION == 1


def artifact(tmp_path: Path) -> tuple[bytes, ArtifactInfo]:
    (tmp_path / "dist").mkdir(exist_ok=True)
    (tmp_path / "dist" / "out.txt").write_text("built\n")
    out = io.BytesIO()
    info = write_archive(out, tmp_path, ["dist", "dist/out.txt"])
    return out.getvalue(), info


def blob(tmp_path: Path, key: str = KEY) -> bytes:
    data, info = artifact(tmp_path)
    return pack(
        key,
        project="a",
        task="build",
        artifact=data,
        info=info,
        log=(("stdout", "hello\n"),),
        duration_ms=12.5,
        cpu_ms=None,
        peak_rss_bytes=1024,
    )


def test_a_packed_entry_unpacks_whole(tmp_path: Path) -> None:
    data, info = artifact(tmp_path)
    got = unpack(blob(tmp_path), KEY)
    assert (got.key, got.project, got.task) == (KEY, "a", "build")
    assert (got.artifact, got.info) == (data, info)
    assert got.log == (("stdout", "hello\n"),)
    assert (got.duration_ms, got.cpu_ms, got.peak_rss_bytes) == (12.5, None, 1024)


def reseal(rest: bytes) -> bytes:
    """A blob whose SHA-256 line matches `rest`: what a forger who knows the format writes."""
    return b"VXR1 " + hashlib.sha256(rest).hexdigest().encode() + b"\n" + rest


def rest_of(header: dict[str, object], art: bytes) -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">I", len(head)) + head + art


def header_of(good: bytes) -> tuple[dict[str, object], bytes]:
    rest = good[70:]
    (length,) = struct.unpack_from(">I", rest)
    return json.loads(rest[4 : 4 + length]), rest[4 + length :]


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda b: b[: len(b) // 2], "its SHA-256 does not match its content"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "its SHA-256 does not match its content"),
        (lambda b: b"VXR2" + b[4:], "not a vx remote entry"),
        (lambda _: b"", "not a vx remote entry"),
        (lambda _: b"<html>500</html>", "not a vx remote entry"),
    ],
    ids=["truncated", "flipped-byte", "other-version", "empty", "error-page"],
)
def test_a_damaged_blob_is_refused(tmp_path: Path, damage: object, why: str) -> None:
    with pytest.raises(Untrusted, match=why):
        unpack(damage(blob(tmp_path)), KEY)  # type: ignore[operator]


def test_an_entry_for_another_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Untrusted, match="it holds the entry for key fedcba9876543210"):
        unpack(blob(tmp_path, "fedcba9876543210"), KEY)


def test_a_resealed_artifact_that_differs_from_its_header_is_refused(tmp_path: Path) -> None:
    header, art = header_of(blob(tmp_path))
    forged = art[:-1] + bytes([art[-1] ^ 1])
    with pytest.raises(Untrusted, match="size or digest differs from its header"):
        unpack(reseal(rest_of(header, forged)), KEY)


def hostile(name: str, *, link: str | None = None) -> bytes:
    out = io.BytesIO()
    compressor = zstandard.ZstdCompressor()
    with (
        compressor.stream_writer(out, closefd=False) as z,
        tarfile.open(fileobj=z, mode="w|", format=tarfile.PAX_FORMAT,
                     pax_headers={"VX.format": "1"}) as tar,
    ):  # fmt: skip
        info = tarfile.TarInfo(name)
        if link is not None:
            info.type, info.linkname = tarfile.SYMTYPE, link
            tar.addfile(info)
        else:
            info.size = 4
            tar.addfile(info, io.BytesIO(b"evil"))
    return out.getvalue()


@pytest.mark.parametrize(
    ("art", "why"),
    [
        (hostile("../escape.txt"), ".."),
        (hostile("/etc/evil"), "outside the project"),
        (hostile("dist/link", link="../../../etc/passwd"), "outside the project"),
    ],
    ids=["dotdot", "absolute", "escaping-symlink"],
)
def test_a_hostile_archive_with_an_honest_header_is_refused(
    tmp_path: Path, art: bytes, why: str
) -> None:
    header, _ = header_of(blob(tmp_path))
    header.update(size=len(art), digest=xxhash.xxh3_64_hexdigest(art), manifest="[]")
    with pytest.raises(Untrusted, match=why):
        unpack(reseal(rest_of(header, art)), KEY)


def test_without_the_archive_read_only_the_envelope_is_checked(tmp_path: Path) -> None:
    """An entry restored at once leaves its archive to the restore's validator: unpack then
    checks the seal, the key and the artifact's digest, and returns the archive unread."""
    header, _ = header_of(blob(tmp_path))
    art = hostile("../escape.txt")
    header.update(size=len(art), digest=xxhash.xxh3_64_hexdigest(art), manifest="[]")
    sealed = reseal(rest_of(header, art))
    assert unpack(sealed, KEY, archive=False).artifact == art
    with pytest.raises(Untrusted, match=r"\.\."):
        unpack(sealed, KEY)
    with pytest.raises(Untrusted, match="does not match its content"):
        unpack(sealed[:-1] + bytes([sealed[-1] ^ 1]), KEY, archive=False)
