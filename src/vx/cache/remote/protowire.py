"""The protobuf wire format, by hand, for the handful of REAPI messages vx sends and reads.

Enough for strings, bytes, integers, booleans and nested messages: fields are written in
number order, and a parsed message is each field number's list of raw values (ints for
varints, bytes for length-delimited fields), so unknown fields are skipped as protobuf does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

Field = tuple[int, "int | str | bytes | bool | None"]

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """Bytes that are not a protobuf message of the shape expected."""


def varint(value: int) -> bytes:
    """A non-negative int (or a negative int64, as protobuf writes it) as a varint."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def message(fields: Iterable[Field]) -> bytes:
    """Encode (number, value) pairs; None and default values (0, "", b"", False) are left out.

    An int or bool is a varint; a str or bytes is length-delimited (a nested message is passed
    as its encoded bytes).
    """
    out = bytearray()
    for number, value in fields:
        if value is None or value == 0 or value in ("", b""):
            continue
        if isinstance(value, (bool, int)):
            out += varint(number << 3 | _VARINT) + varint(int(value))
        else:
            data = value.encode() if isinstance(value, str) else value
            out += varint(number << 3 | _LEN) + varint(len(data)) + data
    return bytes(out)


def parse(data: bytes) -> dict[int, list[int | bytes]]:
    """Each field number's values, in order; WireError for bytes that do not parse."""
    fields: dict[int, list[int | bytes]] = {}
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, kind = key >> 3, key & 7
        value: int | bytes
        if kind == _VARINT:
            value, pos = _read_varint(data, pos)
        elif kind == _LEN:
            length, pos = _read_varint(data, pos)
            if pos + length > end:
                raise WireError("a field runs past the message")
            value, pos = data[pos : pos + length], pos + length
        elif kind == _I64:
            value, pos = int.from_bytes(data[pos : pos + 8], "little"), pos + 8
        elif kind == _I32:
            value, pos = int.from_bytes(data[pos : pos + 4], "little"), pos + 4
        else:
            raise WireError(f"wire type {kind} is not read here")
        if pos > end:
            raise WireError("a field runs past the message")
        fields.setdefault(number, []).append(value)
    return fields


def first_bytes(fields: dict[int, list[int | bytes]], number: int) -> bytes:
    """The field's first length-delimited value, b"" when absent."""
    for value in fields.get(number, ()):
        if isinstance(value, bytes):
            return value
    return b""


def first_int(fields: dict[int, list[int | bytes]], number: int) -> int:
    """The field's first varint, 0 when absent."""
    for value in fields.get(number, ()):
        if isinstance(value, int):
            return value
    return 0


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            break
        byte = data[pos + i]
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos + i + 1
    raise WireError("a varint is cut short or too long")
