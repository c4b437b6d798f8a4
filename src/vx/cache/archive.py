"""The artifact format: a tar stream in one zstd frame, written and read under our own rules."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Self, cast

import xxhash
import zstandard

from vx.cache import tarstream
from vx.cache.manifest import (
    ArtifactInfo,
    CorruptArtifact,
    Kind,
    Recorded,
    Unarchivable,
    normalize,
)
from vx.cache.staging import Blocked, Staging
from vx.cache.tarstream import BadTar, Header, TarStream
from vx.util.record import Record

if TYPE_CHECKING:
    import tarfile
    from collections.abc import Iterable, Mapping

ARTIFACT_FORMAT = 1
"""Bumping it makes every stored artifact unreadable (a miss); `test_archive` pins it."""

_FORMAT_HEADER = "VX.format"
_META_HEADER = "VX.meta"
_CHUNK = 1 << 20
_MAX_LINK_HOPS = 40
_LEVEL = 3


class Described(Record):
    """An artifact read whole: enough to index it again when its row is gone."""

    info: ArtifactInfo
    meta: str


class _Tap:
    """Passes bytes to or from `raw`, hashing and counting every one that goes by."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.hasher = xxhash.xxh3_64()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.raw.write(data)
        self.hasher.update(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        self.raw.flush()

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.hasher.update(data)
        self.size += len(data)
        return data

    def drain(self) -> None:
        while self.read(_CHUNK):
            pass

    def digest(self) -> str:
        return str(self.hasher.hexdigest())


def write_archive(
    out: IO[bytes], root: Path, paths: Iterable[str], *, meta: str = ""
) -> ArtifactInfo:
    """Archive `paths` (relative to `root`, globs already resolved) into `out`.

    A directory adds itself, not its contents. `meta` rides in the archive's header, so a
    later run can index an artifact whose row is gone.
    """
    import tarfile  # only a save writes tar: a restore reads with `tarstream`

    tap = _Tap(out)
    headers = {_FORMAT_HEADER: str(ARTIFACT_FORMAT)}
    if meta:
        headers[_META_HEADER] = meta
    recorded: list[Recorded] = []
    compressor = zstandard.ZstdCompressor(level=_LEVEL)
    with (
        compressor.stream_writer(cast("IO[bytes]", tap), closefd=False) as zw,
        tarfile.open(fileobj=zw, mode="w|", format=tarfile.PAX_FORMAT, pax_headers=headers) as tar,
    ):
        recorded.extend(_add(tar, root, name) for name in sorted({normalize(p) for p in paths}))
    links = {tuple(r.path.split("/")): r.target for r in recorded if r.kind == "link"}
    bad = _escaping(links)
    if bad is not None:
        raise Unarchivable(bad, "symlink resolves outside the project")
    return ArtifactInfo(tap.size, tap.digest(), tuple(recorded))


def _add(tar: tarfile.TarFile, root: Path, name: str) -> Recorded:
    import tarfile

    path = root / name
    st = os.lstat(path)
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.mode = stat.S_IMODE(st.st_mode) & 0o777
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as fh:
            info.size = os.fstat(fh.fileno()).st_size
            tap = _Tap(fh)
            tar.addfile(info, tap)
        return Recorded(name, "file", info.mode, info.size, tap.digest())
    if stat.S_ISDIR(st.st_mode):
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
        return Recorded(name, "dir", info.mode)
    if stat.S_ISLNK(st.st_mode):
        target = _portable_target(root, name, str(path.readlink()))
        info.type = tarfile.SYMTYPE
        info.linkname = target
        info.mode = 0o777
        tar.addfile(info)
        return Recorded(name, "link", target=target)
    raise Unarchivable(name, "not a regular file, directory or symlink")


def _portable_target(root: Path, name: str, target: str) -> str:
    """Absolute targets inside the root become relative: the store serves every checkout."""
    if not target.startswith("/"):
        return target
    for base in (str(root.absolute()), str(root.resolve())):
        if os.path.commonpath([base, target]) == base:
            return os.path.relpath(target, Path(base, name).parent)
    raise Unarchivable(name, f"symlink to {target}, outside the project")


def _escaping(links: dict[tuple[str, ...], str]) -> str | None:
    """The first link whose target, followed through the archive's own links, leaves the root."""
    for where, target in sorted(links.items()):
        stack = list(where[:-1])
        pending = target.split("/")[::-1]
        hops = 0
        escaped = target.startswith("/")
        while pending and not escaped:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                escaped = not stack
                if stack:
                    stack.pop()
                continue
            stack.append(part)
            inner = links.get(tuple(stack))
            if inner is not None:
                hops += 1
                stack.pop()
                escaped = inner.startswith("/") or hops > _MAX_LINK_HOPS
                pending.extend(inner.split("/")[::-1])
        if escaped:
            return "/".join(where)
    return None


def inspect_archive(src: IO[bytes], label: str) -> Described:
    """Read a whole artifact, validating it, and write nothing."""
    return _read(src, label, None, None)


def extract_archive(src: IO[bytes], label: str, root: Path, expected: ArtifactInfo) -> None:
    """Restore an artifact under `root`, or raise CorruptArtifact having changed nothing.

    Members land in a staging dir inside `root`; only once every byte has matched the
    recorded size and digest are they moved into place, so a bad artifact restores nothing.
    """
    try:
        staging = Staging(root, whole=_absent_top(expected.manifest, root))
    except Blocked as err:
        raise CorruptArtifact(label, err.reason, blocked=True) from err
    try:
        described = _read(src, label, staging, {r.path: r for r in expected.manifest})
        check_recorded(described.info, expected, label)
        staging.commit([(r.path, r.mode) for r in described.info.manifest if r.kind == "dir"])
    except Blocked as err:
        raise CorruptArtifact(label, err.reason, blocked=True) from err
    finally:
        staging.close()


def _absent_top(manifest: Iterable[Recorded], root: Path) -> str | None:
    """The one top-level directory every recorded path lies in, when it is not on disk: a
    restore can then stage that directory whole and move it into place with one rename."""
    tops = {r.path.partition("/")[0] for r in manifest}
    if len(tops) != 1:
        return None
    (top,) = tops
    if any(r.path == top and r.kind != "dir" for r in manifest):
        return None
    try:
        os.lstat(root / top)
    except FileNotFoundError:
        return top
    except OSError:
        return None
    return None


def check_recorded(found: ArtifactInfo, expected: ArtifactInfo, label: str) -> None:
    """Raise CorruptArtifact unless an artifact read whole is what its index row says.

    Its bytes (size and digest) and its members, each with its kind, mode, size, digest or
    target: a row whose manifest was emptied or edited describes another entry than its
    artifact, and is as corrupt as an artifact cut short.
    """
    if (found.size, found.digest) != (expected.size, expected.digest):
        raise CorruptArtifact(label, "size or digest differs from the index")
    if set(found.manifest) != set(expected.manifest):
        raise CorruptArtifact(label, "members differ from what the index recorded")


def _read(
    src: IO[bytes],
    label: str,
    staging: Staging | None,
    expect: Mapping[str, Recorded] | None,
) -> Described:
    """Stream an artifact through the validator (and into `staging`), hashing every byte.

    With `expect` (the index's manifest, empty for an entry that recorded nothing), a member
    the index never recorded is refused before a byte of it is written: a stored artifact
    cannot grow into more than its row promised.
    """
    tap = _Tap(src)
    kinds: dict[tuple[str, ...], str] = {}
    recorded: list[Recorded] = []
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(cast("IO[bytes]", tap), closefd=False)
        tar = TarStream(reader.read)
        header = tar.next()
        meta = _meta(tar.globals, label)
        while header is not None:
            recorded.append(_member(tar, header, label, kinds, staging, expect))
            header = tar.next()
        tap.drain()
    except (CorruptArtifact, Blocked):
        raise
    except (BadTar, zstandard.ZstdError, OSError, EOFError, ValueError) as err:
        raise CorruptArtifact(label, f"unreadable ({err})") from err
    links = {tuple(r.path.split("/")): r.target for r in recorded if r.kind == "link"}
    bad = _escaping(links)
    if bad is not None:
        raise CorruptArtifact(label, f"symlink {bad} resolves outside the project")
    return Described(ArtifactInfo(tap.size, tap.digest(), tuple(recorded)), meta)


def _meta(headers: Mapping[str, str], label: str) -> str:
    version = headers.get(_FORMAT_HEADER)
    if version != str(ARTIFACT_FORMAT):
        reason = f"artifact format {version}, this vx reads {ARTIFACT_FORMAT}"
        raise CorruptArtifact(label, reason)
    return headers.get(_META_HEADER, "")


_REFUSED_TYPES = {
    tarstream.LINK: "a hard link",
    tarstream.CHAR: "a device file",
    tarstream.BLOCK_DEVICE: "a device file",
    tarstream.FIFO: "a fifo",
}


def _member(
    tar: TarStream,
    member: Header,
    label: str,
    kinds: dict[tuple[str, ...], str],
    staging: Staging | None,
    expect: Mapping[str, Recorded] | None,
) -> Recorded:
    """Validate one member against the ones before it, then stage it (when restoring)."""
    name = member.name
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if name.startswith("/") or ".." in parts or not parts:
        raise CorruptArtifact(label, f"member {name!r} points outside the project")
    if member.type in (tarstream.FILE, tarstream.OLD_FILE):
        kind: Kind = "file"
    elif member.type == tarstream.DIRECTORY:
        kind = "dir"
    elif member.type == tarstream.SYMLINK:
        kind = "link"
        if not member.linkname or member.linkname.startswith("/"):
            raise CorruptArtifact(label, f"symlink {name!r} has an empty or absolute target")
    else:
        what = _REFUSED_TYPES.get(member.type, f"of tar type {member.type!r}")
        raise CorruptArtifact(label, f"member {name!r} is {what}")
    for depth in range(1, len(parts)):
        above = kinds.setdefault(parts[:depth], "implicit")
        if above in ("file", "link"):
            raise CorruptArtifact(label, f"member {name!r} lies under a {above}")
    before = kinds.get(parts)
    if before is not None and not (before == "implicit" and kind == "dir"):
        raise CorruptArtifact(label, f"member {name!r} appears twice")
    kinds[parts] = kind
    path = "/".join(parts)
    if expect is not None:
        known = expect.get(path)
        size = member.size if kind == "file" else 0
        if known is None or (known.kind, known.size) != (kind, size):
            raise CorruptArtifact(label, f"member {name!r} is not what the index recorded")
    mode = member.mode & 0o777
    if kind == "dir":
        if staging is not None:
            staging.add_dir(parts)
        return Recorded(path, "dir", mode)
    if kind == "link":
        if staging is not None:
            staging.add_link(parts, member.linkname)
        return Recorded(path, "link", target=member.linkname)
    hasher = xxhash.xxh3_64()
    with staging.file(parts, mode) if staging is not None else _Discard() as sink:
        for chunk in tar.data(member.size):
            hasher.update(chunk)
            sink.write(chunk)
    return Recorded(path, "file", mode, member.size, str(hasher.hexdigest()))


class _Discard:
    """Where file bytes go when an artifact is only being read."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def write(self, data: bytes) -> int:
        return len(data)
