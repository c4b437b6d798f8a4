"""The tar reader a restore uses, against streams `tarfile` writes and streams broken on purpose."""

from __future__ import annotations

import io
import tarfile

import pytest

from vx.cache import tarstream
from vx.cache.tarstream import BadTar, TarStream


def tar_bytes(members: list[tuple[str, bytes | None]], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """A tar of files (bytes) and directories (None), with the global header vx writes."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w|", format=fmt, pax_headers={"VX.format": "1"}) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.mode = 0o640
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def read_all(raw: bytes) -> tuple[dict[str, str], list[tuple[str, bytes, int, bytes]]]:
    stream = TarStream(io.BytesIO(raw).read)
    found = []
    while (header := stream.next()) is not None:
        data = b"".join(stream.data(header.size)) if header.type == tarstream.FILE else b""
        found.append((header.name, header.type, header.mode, data))
    return stream.globals, found


def test_it_reads_what_tarfile_writes_names_long_and_not_ascii() -> None:
    long = "dist/" + "d" * 150 + "/f.js"
    raw = tar_bytes([("dist", None), ("dist/a.js", b"x" * 1000), (long, b"y"), ("dist/é.js", b"")])
    globals_, found = read_all(raw)
    assert globals_["VX.format"] == "1"
    assert found == [
        ("dist", tarstream.DIRECTORY, 0o640, b""),
        ("dist/a.js", tarstream.FILE, 0o640, b"x" * 1000),
        (long, tarstream.FILE, 0o640, b"y"),
        ("dist/é.js", tarstream.FILE, 0o640, b""),
    ]


def test_a_member_not_read_is_skipped_with_its_padding() -> None:
    stream = TarStream(io.BytesIO(tar_bytes([("a", b"1" * 700), ("b", b"2")])).read)
    assert stream.next() is not None
    second = stream.next()
    assert second is not None
    assert (second.name, b"".join(stream.data(second.size))) == ("b", b"2")
    assert stream.next() is None


def test_the_ustar_prefix_field_is_part_of_the_name() -> None:
    name = "p" * 90 + "/" + "n" * 90
    _, found = read_all(tar_bytes([(name, b"z")], fmt=tarfile.USTAR_FORMAT))
    assert [f[0] for f in found] == [name]


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda raw: raw[:100] + b"X" + raw[101:], "checksum"),  # the global header's name
        (lambda raw: raw[: 3 * 512 + 10], "end of data"),  # inside the file's data
        (lambda raw: raw[: 4 * 512], "end of data"),  # no end-of-archive block
        (lambda raw: raw + b"\0" * (2 << 20), "after the end"),
        (lambda raw: raw[:-1] + b"x", "after the end"),
    ],
)
def test_a_broken_stream_is_refused(damage, reason: str) -> None:
    raw = tar_bytes([("a", b"q" * 600)])
    with pytest.raises(BadTar, match=reason):
        read_all(damage(raw))


def test_a_gnu_long_name_is_handed_on_as_a_type_vx_never_writes() -> None:
    raw = tar_bytes([("g" * 150, b"1")], fmt=tarfile.GNU_FORMAT)
    stream = TarStream(io.BytesIO(raw).read)
    header = stream.next()
    assert header is not None
    assert header.type == b"L"


def test_a_global_header_that_renames_members_is_refused() -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT, pax_headers={"path": "x"}):
        pass
    with pytest.raises(BadTar, match="global header"):
        read_all(out.getvalue())
