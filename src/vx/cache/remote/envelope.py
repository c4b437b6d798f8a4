"""The blob vx keeps in a remote cache: an entry's artifact with what its index row holds.

    VXR1 <sha256 of the rest, 64 hex>\\n
    <4-byte big-endian length of the header> <header: JSON> <artifact: the .tar.zst bytes>

The header names the key, the task, the artifact's size, xxh3 digest and manifest, and the
log a hit replays. `unpack` checks the SHA-256 before it reads anything else, then the key,
then the artifact's size and digest against the header, and only then reads the archive
through the same validator a local restore uses (absolute paths, `..`, escaping symlinks,
members the manifest does not list): what it returns may be stored and restored as a local
entry is. An entry restored at once may skip that last read, since the restore makes it.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct

import xxhash

from vx.cache.manifest import ArtifactInfo, CorruptArtifact
from vx.cache.remote.base import Untrusted
from vx.util.record import Record

ENVELOPE_VERSION = 1
"""Bumping it makes every remote blob of an older vx a miss (its magic differs)."""

_MAGIC = f"VXR{ENVELOPE_VERSION} ".encode()
_HEAD = len(_MAGIC) + 64 + 1
_LEN = struct.Struct(">I")
_MAX_HEADER = 64 << 20


class Unpacked(Record):
    """A remote entry that passed every check: its artifact bytes and its row's fields."""

    key: str
    project: str
    task: str
    artifact: bytes
    info: ArtifactInfo
    log: tuple[tuple[str, str], ...]
    duration_ms: float
    cpu_ms: float | None
    peak_rss_bytes: int | None


def pack(
    key: str,
    *,
    project: str,
    task: str,
    artifact: bytes,
    info: ArtifactInfo,
    log: tuple[tuple[str, str], ...],
    duration_ms: float,
    cpu_ms: float | None,
    peak_rss_bytes: int | None,
) -> bytes:
    """The blob for one entry; `info` is what the artifact holds (as the index recorded it)."""
    header = json.dumps(
        {
            "key": key,
            "project": project,
            "task": task,
            "size": info.size,
            "digest": info.digest,
            "manifest": info.manifest_json(),
            "log": [list(chunk) for chunk in log],
            "durationMs": duration_ms,
            "cpuMs": cpu_ms,
            "peakRssBytes": peak_rss_bytes,
        },
        separators=(",", ":"),
    ).encode()
    rest = _LEN.pack(len(header)) + header + artifact
    return _MAGIC + hashlib.sha256(rest).hexdigest().encode() + b"\n" + rest


def unpack(blob: bytes, key: str, *, archive: bool = True) -> Unpacked:
    """The entry in `blob`, checked whole; Untrusted (with why) for anything else.

    `archive=False` leaves out the read of the archive itself, for an entry restored at once:
    the restore reads it through the same validator, member by member, before anything it
    holds is moved into place, so reading it here too would only decompress it twice.
    """
    if len(blob) < _HEAD + _LEN.size or not blob.startswith(_MAGIC) or blob[_HEAD - 1] != 0x0A:
        raise Untrusted("not a vx remote entry (or one from another vx version)")
    rest = memoryview(blob)[_HEAD:]
    if hashlib.sha256(rest).hexdigest().encode() != blob[len(_MAGIC) : _HEAD - 1]:
        raise Untrusted("its SHA-256 does not match its content")
    (length,) = _LEN.unpack_from(rest)
    if length > min(_MAX_HEADER, len(rest) - _LEN.size):
        raise Untrusted("its header is cut short")
    try:
        head = json.loads(bytes(rest[_LEN.size : _LEN.size + length]))
        unpacked = _fields(head, bytes(rest[_LEN.size + length :]))
    except (ValueError, TypeError, KeyError) as err:
        raise Untrusted(f"its header is malformed ({err})") from None
    if unpacked.key != key:
        raise Untrusted(f"it holds the entry for key {unpacked.key}")
    artifact, info = unpacked.artifact, unpacked.info
    if len(artifact) != info.size or xxhash.xxh3_64_hexdigest(artifact) != info.digest:
        raise Untrusted("its artifact's size or digest differs from its header")
    if archive:
        _validate(artifact, info, key)
    return unpacked


def _fields(head: dict[str, object], artifact: bytes) -> Unpacked:
    if not isinstance(head, dict):
        raise TypeError("a header is an object")
    log = tuple((str(s), str(t)) for s, t in head["log"])  # type: ignore[attr-defined]
    return Unpacked(
        key=str(head["key"]),
        project=str(head["project"]),
        task=str(head["task"]),
        artifact=artifact,
        info=ArtifactInfo(
            _int(head["size"]),
            str(head["digest"]),
            ArtifactInfo.parse_manifest(str(head["manifest"])),
        ),
        log=log,
        duration_ms=float(head["durationMs"]),  # type: ignore[arg-type]
        cpu_ms=None if head["cpuMs"] is None else float(head["cpuMs"]),  # type: ignore[arg-type]
        peak_rss_bytes=None if head["peakRssBytes"] is None else _int(head["peakRssBytes"]),
    )


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"expected a count, got {value!r}")
    return value


def _validate(artifact: bytes, info: ArtifactInfo, key: str) -> None:
    """Read the archive through the local restore's validator, writing nothing."""
    from vx.cache.archive import check_recorded, inspect_archive

    label = f"remote artifact {key}"
    try:
        found = inspect_archive(io.BytesIO(artifact), label)
        check_recorded(found.info, info, label)
    except CorruptArtifact as err:
        raise Untrusted(err.reason) from None
