"""The stored form of a task's log: its chunks packed into blocks, each block one `entry_log` row.

A test suite's log can be hundreds of megabytes with no outputs beside it, so a log is kept
compressed (zstd, like artifacts) and its bytes count towards the cache's size. It is written
and read a block at a time: saving never builds a second copy of the log, and a replay holds
one block, never the whole log. A small block is kept as it is, so a run replaying short logs
(most runs) never loads `zstandard`.

A block is a one-byte form (`_RAW`, `_ZSTD`) and a payload; the payload is a run of records,
each a stream byte, a four-byte little-endian length and that many UTF-8 bytes.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from vx.events import Stream

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

BLOCK_BYTES = 1 << 20
"""Payload bytes a block gathers before it is closed: a replay's memory is about this."""
_PIECE_CHARS = 1 << 18
"""A chunk longer than this is stored as several records, so no record outgrows a block."""
_COMPRESS_FROM = 4096
"""A smaller block is stored raw: compressing it saves little and would load zstd."""
_LEVEL = 3
_RAW, _ZSTD = 0, 1
_HEADER = struct.Struct("<BI")
_CODES = {Stream.STDOUT: 0, Stream.STDERR: 1}
_STREAMS = {code: stream for stream, code in _CODES.items()}


class RottenLogError(ValueError):
    """A stored block is not one vx wrote: the entry it belongs to is a miss."""


def pack(chunks: Iterable[tuple[Stream, str]]) -> Iterator[bytes]:
    """The blocks to store for `chunks`, in order; none for an empty log."""
    payload = bytearray()
    for stream, text in chunks:
        code = _CODES[stream]
        for start in range(0, len(text), _PIECE_CHARS):
            data = text[start : start + _PIECE_CHARS].encode("utf-8", "surrogatepass")
            payload += _HEADER.pack(code, len(data))
            payload += data
            if len(payload) >= BLOCK_BYTES:
                yield _seal(payload)
                payload = bytearray()
    if payload:
        yield _seal(payload)


def _seal(payload: bytearray) -> bytes:
    if len(payload) < _COMPRESS_FROM:
        return bytes([_RAW]) + payload
    import zstandard

    return bytes([_ZSTD]) + zstandard.ZstdCompressor(level=_LEVEL).compress(bytes(payload))


def unpack(block: object) -> Iterator[tuple[Stream, str]]:
    """The chunks one stored block holds; raises RottenLogError when it is not a block vx wrote."""
    if not isinstance(block, bytes) or not block:
        raise RottenLogError("not a log block")
    payload = _payload(block)
    view = memoryview(payload)
    at = 0
    while at < len(payload):
        if at + _HEADER.size > len(payload):
            raise RottenLogError("a record cut short")
        code, size = _HEADER.unpack_from(payload, at)
        at += _HEADER.size
        stream = _STREAMS.get(code)
        if stream is None or at + size > len(payload):
            raise RottenLogError("a record vx did not write")
        try:
            text = str(view[at : at + size], "utf-8", "surrogatepass")
        except UnicodeDecodeError as err:
            raise RottenLogError(str(err)) from err
        at += size
        yield stream, text


def _payload(block: bytes) -> bytes:
    if block[0] == _RAW:
        return block[1:]
    if block[0] != _ZSTD:
        raise RottenLogError("an unknown block form")
    import zstandard

    try:
        # vx writes each frame with its size in the header; a frame claiming more than a
        # block's worth is not one of ours, and is refused before anything is allocated.
        size = zstandard.frame_content_size(block[1:])
        if not 0 <= size <= _MAX_PAYLOAD:
            raise RottenLogError("a block larger than vx writes")
        return zstandard.ZstdDecompressor().decompress(block[1:])
    except zstandard.ZstdError as err:
        raise RottenLogError(str(err)) from err


_MAX_PAYLOAD = BLOCK_BYTES + _HEADER.size + 4 * _PIECE_CHARS
