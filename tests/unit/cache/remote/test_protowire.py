"""The hand-written protobuf wire format: what REAPI servers send and read."""

from __future__ import annotations

import pytest

from vx.cache.remote import protowire as pw


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02")],
)
def test_varints(value: int, encoded: bytes) -> None:
    assert pw.varint(value) == encoded
    assert pw.parse(b"\x08" + encoded) == ({1: [value]} if value else {1: [0]})


def test_a_message_round_trips_and_skips_defaults() -> None:
    nested = pw.message([(1, "abc"), (2, 3)])
    data = pw.message([(1, ""), (2, nested), (3, True), (4, 0), (5, b"\x00\x01")])
    fields = pw.parse(data)
    assert sorted(fields) == [2, 3, 5]
    assert pw.parse(pw.first_bytes(fields, 2)) == {1: [b"abc"], 2: [3]}
    assert pw.first_int(fields, 3) == 1
    assert pw.first_bytes(fields, 5) == b"\x00\x01"
    assert pw.first_int(fields, 9) == 0


def test_a_known_reapi_digest_encodes_as_protoc_would() -> None:
    # Digest{hash: "ab", size_bytes: 2}: field 1 length 2, field 2 varint 2
    assert pw.message([(1, "ab"), (2, 2)]) == b"\x0a\x02ab\x10\x02"


@pytest.mark.parametrize(
    "data", [b"\x0a\x05ab", b"\x08\x80", b"\x0b"], ids=["long", "varint", "group"]
)
def test_bad_bytes_are_a_wire_error(data: bytes) -> None:
    with pytest.raises(pw.WireError):
        pw.parse(data)


def test_unknown_fixed_width_fields_are_skipped() -> None:
    assert pw.parse(b"\x09" + bytes(8) + b"\x15" + bytes(4) + b"\x18\x07") == {
        1: [0],
        2: [0],
        3: [7],
    }
