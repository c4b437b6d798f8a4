"""A small HTTP/1.1 client for the remote caches: one keep-alive connection, whole bodies.

`http.client` costs a remote run ~19 ms to import (it brings `email` and, for https, `ssl`),
more than a warm run's whole start-up, and parses every response's headers through `email`.
A cache protocol needs only this much of HTTP: a request with a body of known length, and a
response whose body comes by `Content-Length`, in chunks, or up to the connection's end.
`ssl` is imported for an https server only.
"""

from __future__ import annotations

import io
import socket

from vx.util.record import Record

_MAX_LINE = 65536
_MAX_HEADERS = 100
_NO_BODY = (204, 304)


class HttpError(Exception):
    """An exchange that failed. `closed`: the server hung up before answering (on a reused
    connection, the request may be sent again); `partial`: the body ended early, after so
    many bytes."""

    def __init__(self, message: str, *, closed: bool = False, partial: int | None = None) -> None:
        super().__init__(message)
        self.closed = closed
        self.partial = partial


class Response(Record):
    """A whole response; header names lower-cased, a repeated header's last value kept."""

    status: int
    headers: dict[str, str]
    body: bytes


class Connection:
    """One connection to `host:port`, opened on first use and kept open while the server
    allows; not safe to share between threads."""

    __slots__ = ("_authority", "_file", "_host", "_https", "_port", "_sock", "_timeout")

    def __init__(self, host: str, port: int | None, *, https: bool, timeout: float) -> None:
        self._host = host
        self._https = https
        self._port = port or (443 if https else 80)
        self._timeout = timeout
        default = self._port == (443 if https else 80)
        name = f"[{host}]" if ":" in host else host
        self._authority = name if default else f"{name}:{self._port}"
        self._sock: socket.socket | None = None
        self._file: io.BufferedReader | None = None

    @property
    def is_open(self) -> bool:
        return self._sock is not None

    def request(
        self, method: str, target: str, headers: dict[str, str], body: bytes | None = None
    ) -> Response:
        """Send one request and read its whole response; the connection is closed on any
        failure, and after a response the server said was its last."""
        if self._sock is None:
            self._open()
        assert self._sock is not None  # noqa: S101  opened above
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._authority}"]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if body is not None or method in ("PUT", "POST"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            if body and len(body) <= 65536:
                self._sock.sendall(head + body)
            else:
                self._sock.sendall(head)
                if body:
                    self._sock.sendall(body)
            response, last = self._read(method)
        except (BrokenPipeError, ConnectionResetError) as err:
            self.close()
            raise HttpError(f"the server closed the connection ({err})", closed=True) from None
        except BaseException:
            self.close()
            raise
        if last:
            self.close()
        return response

    def close(self) -> None:
        sock, self._sock, self._file = self._sock, None, None
        if sock is not None:
            sock.close()

    def _open(self) -> None:
        host = self._host.encode("ascii") if self._host.isascii() else self._host
        sock = socket.create_connection((host, self._port), timeout=self._timeout)  # type: ignore[arg-type]
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._https:
                from vx.util.tlsroots import client_context

                # The system's CAs wherever it keeps them: the binary's OpenSSL may look elsewhere.
                context = client_context()
                sock = context.wrap_socket(sock, server_hostname=self._host)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._file = io.BufferedReader(socket.SocketIO(sock, "rb"), 1 << 16)

    def _read(self, method: str) -> tuple[Response, bool]:
        """The response to the request just sent, and whether the connection ends with it."""
        reader = self._file
        assert reader is not None  # noqa: S101  set with the socket
        while True:
            line = reader.readline(_MAX_LINE + 1)
            if not line:
                raise HttpError("the server closed the connection before answering", closed=True)
            version, status = _status_line(line)
            headers = _headers(reader)
            if status >= 200 or status == 101:
                break  # an interim 1xx (100 Continue) is followed by the real answer
        last = version == "HTTP/1.0" or "close" in headers.get("connection", "").lower()
        if method == "HEAD" or status in _NO_BODY or 100 <= status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = _chunked(reader)
        elif "content-length" in headers:
            body = _exact(reader, _length(headers["content-length"]))
        else:
            body, last = reader.read(), True
        return Response(status, headers, body), last


def _status_line(line: bytes) -> tuple[str, int]:
    parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or len(line) > _MAX_LINE:
        raise HttpError(f"not an HTTP status line: {line[:80]!r}")
    try:
        status = int(parts[1])
    except ValueError:
        raise HttpError(f"not an HTTP status: {parts[1][:20]!r}") from None
    if not 100 <= status <= 999:
        raise HttpError(f"not an HTTP status: {status}")
    return parts[0], status


def _headers(reader: io.BufferedReader) -> dict[str, str]:
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
            raise HttpError(f"not an HTTP header: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    raise HttpError(f"more than {_MAX_HEADERS} response headers")


def _length(text: str) -> int:
    if not text.isdigit():
        raise HttpError(f"not a Content-Length: {text[:20]!r}")
    return int(text)


def _exact(reader: io.BufferedReader, n: int) -> bytes:
    data = reader.read(n)
    if len(data) < n:
        raise HttpError(f"a response cut short ({len(data)} of {n} bytes)", partial=len(data))
    return data


def _chunked(reader: io.BufferedReader) -> bytes:
    parts: list[bytes] = []
    got = 0
    while True:
        line = reader.readline(_MAX_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            if not line:
                raise HttpError(f"a response cut short ({got} bytes)", partial=got) from None
            raise HttpError(f"not a chunk size: {line[:20]!r}") from None
        if size == 0:
            break
        try:
            parts.append(_exact(reader, size))
        except HttpError:
            raise HttpError(f"a response cut short ({got} bytes)", partial=got) from None
        got += size
        if reader.readline(_MAX_LINE + 1) not in (b"\r\n", b"\n"):
            raise HttpError("a chunk not followed by its line end")
    _headers(reader)  # trailers, if any, end with a blank line
    return b"".join(parts)
