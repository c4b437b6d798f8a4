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


def header(name: bytes, kind: bytes, size: bytes, *, mode: bytes = b"0000644") -> bytes:
    """One ustar header block with its checksum, fields given as the raw bytes to store."""
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100 : 100 + len(mode)] = mode
    block[124 : 124 + len(size)] = size
    block[156:157] = kind
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def records(**values: str) -> bytes:
    out = b""
    for key, value in values.items():
        body = f" {key}={value}\n".encode()
        n = len(body) + 1
        while len(str(n)) + len(body) != n:
            n += 1
        out += str(n).encode() + body
    return out


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


def pax(kind: bytes, body: bytes) -> bytes:
    return header(b"pax", kind, b"%011o" % len(body)) + padded(body)


END = bytes(1024)
GLOBAL = pax(b"g", records(**{"VX.format": "1"}))


@pytest.mark.parametrize("size", [b"-0000001", b"+0000001", b"0o00001", b"1_0", b"9"])
def test_a_size_that_is_not_plain_octal_is_refused(size: bytes) -> None:
    with pytest.raises(BadTar, match="not octal"):
        read_all(GLOBAL + header(b"f", b"0", size) + END)


def test_a_negative_base_256_size_is_refused() -> None:
    negative = b"\xff" * 12
    with pytest.raises(BadTar, match="negative"):
        read_all(GLOBAL + header(b"f", b"0", negative) + END)


def test_headers_vx_never_writes_in_a_row_are_refused() -> None:
    big = pax(b"x", records(comment="c" * 1000))
    with pytest.raises(BadTar, match="where vx writes none"):
        read_all(GLOBAL + big + big + header(b"f", b"0", b"0") + END)
    with pytest.raises(BadTar, match="where vx writes none"):
        read_all(GLOBAL + GLOBAL + END)
    too_long = header(b"pax", b"x", b"%011o" % ((1 << 20) + 1))
    with pytest.raises(BadTar, match="too long"):
        read_all(GLOBAL + too_long + END)


def test_extended_records_set_the_name_size_and_target() -> None:
    data = b"z" * 700
    raw = (
        GLOBAL
        + pax(b"x", records(path="dist/" + "n" * 200, size="700"))
        + header(b"short", b"0", b"0")
        + padded(data)
        + pax(b"x", records(linkpath="t" * 300))
        + header(b"dist/l", b"2", b"0")
        + END
    )
    stream = TarStream(io.BytesIO(raw).read)
    first = stream.next()
    assert first is not None
    assert (first.name, first.size, b"".join(stream.data(first.size))) == (
        "dist/" + "n" * 200,
        700,
        data,
    )
    link = stream.next()
    assert link is not None
    assert (link.name, link.linkname) == ("dist/l", "t" * 300)
    assert stream.next() is None


@pytest.mark.parametrize(
    "body",
    [b"99 path=abc\n", b"x path=abc\n", b"9 pathabc\n", b"12 path=abc!"],
)
def test_an_extended_record_that_cannot_be_read_is_refused(body: bytes) -> None:
    with pytest.raises(BadTar, match="cannot be read"):
        read_all(GLOBAL + pax(b"x", body) + header(b"f", b"0", b"0") + END)


def test_an_extended_size_in_other_digits_is_refused() -> None:
    with pytest.raises(BadTar, match="not a number"):
        read_all(GLOBAL + pax(b"x", records(size="\u0663")) + header(b"f", b"0", b"0") + END)


def test_an_old_style_entry_ending_in_a_slash_is_a_directory() -> None:
    _, found = read_all(GLOBAL + header(b"dist/sub/", b"\0", b"0") + END)
    assert [(f[0], f[1]) for f in found] == [("dist/sub", tarstream.DIRECTORY)]


def test_one_record_of_padding_is_the_most_after_the_end() -> None:
    body = GLOBAL + header(b"f", b"0", b"0") + bytes(512)
    assert read_all(body + bytes(20 * 512))[1]
    with pytest.raises(BadTar, match="after the end"):
        read_all(body + bytes(20 * 512 + 1))
