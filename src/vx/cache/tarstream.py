"""The tar stream inside an artifact, read block by block under stricter rules than `tarfile`'s.

vx reads only what its own writer (`tarfile` in PAX format) produces: a global header first,
then ustar headers, each maybe preceded by an extended header for a long or non-ASCII name or
target. Reading that by hand costs a restore a fraction of `tarfile`'s per-member work, and
spares it importing `tarfile`, `shutil` and `copy`. Whatever else an archive holds is handed on
for the caller to refuse (a hard link, a device) or refused here (a bad checksum, a truncated
block, an extended record that cannot be parsed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

BLOCK = 512
FILE = b"0"
OLD_FILE = b"\0"
LINK = b"1"
SYMLINK = b"2"
CHAR = b"3"
BLOCK_DEVICE = b"4"
DIRECTORY = b"5"
FIFO = b"6"
CONTIGUOUS = b"7"
_EXTENDED = b"x"
_GLOBAL = b"g"
_ZERO = bytes(BLOCK)
_RECORD = 20 * BLOCK
"""tar pads an archive to a multiple of this; more zeros after the end are no tar vx wrote."""
_USTAR = b"ustar\x0000"
_RECORDS_LIMIT = 1 << 20
"""An extended header longer than this is no header vx wrote."""
_CHUNK = 1 << 20


class BadTar(Exception):  # noqa: N818  it reads as what the archive is
    """The stream is no tar vx could have written; the message says where it broke."""


class Header(Record):
    """One member as its header (and any extended header before it) describes it."""

    name: str
    type: bytes
    mode: int
    size: int
    linkname: str


class TarStream:
    """Members of a tar stream read through `read`, one at a time; `globals` holds the records
    of the global headers seen so far (the artifact's format and meta ride there)."""

    __slots__ = ("_pending", "_read", "_started", "globals")

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read
        self._pending = 0
        self._started = False
        self.globals: dict[str, str] = {}

    def _exact(self, n: int) -> bytes:
        data = self._read(n)
        while len(data) < n:
            more = self._read(n - len(data))
            if not more:
                msg = "unexpected end of data"
                raise BadTar(msg)
            data += more
        return data

    def next(self) -> Header | None:
        """The next member's header, or None at the end-of-archive block (a stream that stops
        without one is cut short); the last member's data is skipped."""
        if self._pending:
            self._skip(self._pending)
        extended: dict[str, str] | None = None
        while True:
            block = self._exact(BLOCK)
            if block == _ZERO:
                self._end()
                return None
            _check_sum(block)
            kind = block[156:157]
            size = _number(block[124:136])
            first, self._started = not self._started, True
            if kind in (_EXTENDED, _GLOBAL):
                # vx writes one global header, first, and at most one extended header before
                # a member: anything more is no archive of ours, and could pile up records.
                if (kind == _GLOBAL and not first) or (kind == _EXTENDED and extended is not None):
                    msg = "a global or extended header where vx writes none"
                    raise BadTar(msg)
                if size > _RECORDS_LIMIT:
                    msg = "an extended header too long"
                    raise BadTar(msg)
                records = _records(self._exact(-(-size // BLOCK) * BLOCK)[:size])
                if kind == _GLOBAL:
                    if records.keys() & {"path", "linkpath", "size"}:
                        msg = "a global header that renames or resizes members"
                        raise BadTar(msg)
                    self.globals = records
                else:
                    extended = records
                continue
            extended = extended or {}
            name = _text(block[0:100])
            if block[257:265] == _USTAR:
                prefix = _text(block[345:500])
                if prefix:
                    name = f"{prefix}/{name}"
            name = extended.get("path", name)
            linkname = extended.get("linkpath", _text(block[157:257]))
            if "size" in extended:
                size = _decimal(extended["size"])
            if kind == OLD_FILE and name.endswith("/"):
                kind = DIRECTORY  # how old writers marked a directory, as `tarfile` reads it
            if kind == DIRECTORY:
                name = name.rstrip("/")
            self._pending = -(-size // BLOCK) * BLOCK if kind in (FILE, OLD_FILE) else 0
            return Header(name, kind, _number(block[100:108]), size, linkname)

    def _end(self) -> None:
        """After the first zero block only zeros may follow, up to the record tar pads to."""
        rest = self._read(_RECORD + 1)
        while rest and len(rest) <= _RECORD:
            more = self._read(_RECORD + 1 - len(rest))
            if not more:
                break
            rest += more
        if len(rest) > _RECORD or rest.strip(b"\0"):
            msg = "data after the end of the archive"
            raise BadTar(msg)

    def data(self, size: int) -> Iterator[bytes]:
        """The current member's `size` bytes, in chunks; its padding is skipped after."""
        padded = self._pending
        self._pending = 0
        yield from self._chunks(size)
        self._skip(padded - size)

    def _skip(self, n: int) -> None:
        for _ in self._chunks(n):
            pass
        self._pending = 0

    def _chunks(self, n: int) -> Iterator[bytes]:
        """The next `n` bytes of the stream, a chunk at a time; BadTar if it ends first."""
        while n:
            chunk = self._read(min(n, _CHUNK))
            if not chunk:
                msg = "unexpected end of data"
                raise BadTar(msg)
            n -= len(chunk)
            yield chunk


def _check_sum(block: bytes) -> None:
    """The header's checksum as tar computes it (the field itself read as spaces), unsigned or,
    as some old writers did, signed."""
    recorded = _number(block[148:156])
    unsigned = sum(block) - sum(block[148:156]) + 256
    if recorded == unsigned:
        return
    high = sum(1 for b in block[:148] if b > 127) + sum(1 for b in block[156:] if b > 127)
    if recorded != unsigned - 256 * high:
        msg = "bad header checksum"
        raise BadTar(msg)


def _number(field: bytes) -> int:
    """A numeric header field: octal text, or base-256 for values octal cannot hold."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        if field[0] == 0xFF:
            value -= 256 ** (len(field) - 1)
        if value < 0:
            msg = "a negative number in a header"
            raise BadTar(msg)
        return value
    text = field.split(b"\0", 1)[0].strip(b" ")
    if text.translate(None, b"01234567"):  # no sign, underscore or prefix `int` would take
        msg = "a header number that is not octal"
        raise BadTar(msg)
    return int(text or b"0", 8)


def _decimal(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        msg = "an extended size that is not a number"
        raise BadTar(msg)
    return int(text)


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _records(raw: bytes) -> dict[str, str]:
    """The `<length> <key>=<value>\\n` records of an extended or global header."""
    records: dict[str, str] = {}
    at = 0
    while at < len(raw):
        if raw[at] == 0:
            break  # padding some writers leave after the last record
        space = raw.find(b" ", at)
        try:
            length = int(raw[at:space])
        except ValueError:
            length = 0
        record = raw[space + 1 : at + length]
        if (
            space < 0
            or length <= space - at
            or at + length > len(raw)
            or not record.endswith(b"\n")
            or b"=" not in record
        ):
            msg = "an extended record that cannot be read"
            raise BadTar(msg)
        key, _, value = record[:-1].partition(b"=")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        at += length
    return records
