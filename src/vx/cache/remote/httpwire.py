"""Reading one HTTP/1.1 response off a buffered stream, bounded, for the remote caches' client.

Every read is limited (a line's length, the number of headers, a body's size against the
cap, checked before a byte of the body is read), what would make a response mean two things
is refused (two different `Content-Length`s, a chunk size that is not hex), and whatever of
an answer an error message quotes is escaped and clipped: a server's bytes never reach a
terminal. The socket, the deadline and keep-alive belong to `vx.cache.remote.http1`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.text import clip, escape_controls

if TYPE_CHECKING:
    import io

_MAX_LINE = 65536
_MAX_HEADERS = 100
_NO_BODY = (204, 304)
_PIECE = 1 << 20
_HEX = b"0123456789abcdefABCDEF"


class HttpError(Exception):
    """An exchange that failed. `closed`: the server hung up before answering (on a reused
    connection, the request may be sent again); `partial`: the body ended early, after so
    many bytes; `late`: the deadline passed; `oversize`: the body was over the cap (the
    answer was refused, the server may serve the next one well)."""

    def __init__(
        self,
        message: str,
        *,
        closed: bool = False,
        partial: int | None = None,
        late: bool = False,
        oversize: bool = False,
    ) -> None:
        super().__init__(message)
        self.closed = closed
        self.partial = partial
        self.late = late
        self.oversize = oversize


def shown(data: bytes, limit: int = 60) -> str:
    """Bytes a server sent, as a message may quote them: ASCII, controls escaped, clipped."""
    return clip(escape_controls(data[: limit * 4].decode("ascii", "backslashreplace")), limit)


def has_control(value: str) -> bool:
    """A header value that would end its line early (CR, LF) or hold other control bytes."""
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value)


def read_head(reader: io.BufferedIOBase) -> tuple[str, int, dict[str, str]]:
    """A status line and its headers: the version, the status, the headers lower-cased."""
    line = reader.readline(_MAX_LINE + 1)
    if not line:
        raise HttpError("the server closed the connection before answering", closed=True)
    version, status = _status_line(line)
    return version, status, _headers(reader)


def read_body(
    reader: io.BufferedIOBase, method: str, status: int, headers: dict[str, str], cap: int
) -> tuple[bytes, bool]:
    """The body that follows a head, and whether it ran to the connection's end."""
    if method == "HEAD" or status in _NO_BODY or 100 <= status < 200:
        return b"", False
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return _chunked(reader, cap), False
    if "content-length" in headers:
        size = _length(headers["content-length"])
        if size > cap:
            raise HttpError(f"an answer of {size} bytes, {_over(cap)}", oversize=True)
        return _exact(reader, size), False
    return _to_end(reader, cap), True


def _status_line(line: bytes) -> tuple[str, int]:
    parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or len(line) > _MAX_LINE:
        quoted = shown(line.rstrip(b"\r\n"))
        raise HttpError(f"not an HTTP status line: {quoted}")
    if not _is_count(parts[1]) or not 100 <= int(parts[1]) <= 999:
        raise HttpError(f"not an HTTP status: {shown(parts[1].encode('latin-1'), 20)}")
    return parts[0], int(parts[1])


def _headers(reader: io.BufferedIOBase) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS + 1):
        line = reader.readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise HttpError("a response header line too long")
        if line in (b"\r\n", b"\n"):
            return headers
        if not line:
            raise HttpError("the server closed the connection mid-headers", closed=True)
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise HttpError(f"not an HTTP header: {shown(line)}")
        name, value = name.strip().lower(), value.strip()
        if name == "content-length" and headers.get(name, value) != value:
            raise HttpError("two different Content-Length headers")
        headers[name] = value
    raise HttpError(f"more than {_MAX_HEADERS} response headers")


def _length(text: str) -> int:
    if not _is_count(text):
        raise HttpError(f"not a Content-Length: {shown(text.encode('latin-1'), 20)}")
    return int(text)


def _is_count(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _over(cap: int) -> str:
    from vx.util.units import format_bytes

    return f"over the cap of {format_bytes(cap)}"


def _exact(reader: io.BufferedIOBase, n: int) -> bytes:
    data = reader.read(n)
    if len(data) < n:
        raise HttpError(f"a response cut short ({len(data)} of {n} bytes)", partial=len(data))
    return data


def _to_end(reader: io.BufferedIOBase, cap: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while piece := reader.read1(_PIECE):
        got += len(piece)
        if got > cap:
            raise HttpError(f"an answer {_over(cap)}", oversize=True)
        parts.append(piece)
    return b"".join(parts)


def _chunked(reader: io.BufferedIOBase, cap: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while True:
        line = reader.readline(_MAX_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        if not line:
            raise HttpError(f"a response cut short ({got} bytes)", partial=got)
        if not size_text or size_text.strip(_HEX):
            raise HttpError(f"not a chunk size: {shown(size_text or line, 20)}")
        size = int(size_text, 16)
        if size == 0:
            break
        if got + size > cap:
            raise HttpError(
                f"a chunk of 0x{shown(size_text, 20)} bytes, {_over(cap)}", oversize=True
            )
        try:
            parts.append(_exact(reader, size))
        except HttpError:
            raise HttpError(f"a response cut short ({got} bytes)", partial=got) from None
        got += size
        if reader.readline(_MAX_LINE + 1) not in (b"\r\n", b"\n"):
            raise HttpError("a chunk not followed by its line end")
    _headers(reader)  # trailers, if any, end with a blank line
    return b"".join(parts)
