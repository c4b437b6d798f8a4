"""A small HTTP/1.1 client for the remote caches: one keep-alive connection, bounded answers.

`http.client` costs a remote run ~19 ms to import (it brings `email` and, for https, `ssl`),
more than a warm run's whole start-up, and parses every response's headers through `email`.
A cache protocol needs only this much of HTTP: a request with a body of known length, and a
response whose body comes by `Content-Length`, in chunks, or up to the connection's end.
`ssl` is imported for an https server only.

An exchange is bounded three ways, since the server may be hostile or broken: by a deadline
for the whole exchange (each read is allowed only what is left of it, so a server that
trickles a byte a second or sends `100 Continue` forever ends on time), by a cap on the
body's size (checked before the body is read and as chunks arrive, so an absurd length is
refused without allocating it), and by refusing a header value holding a control character.
Reading the response itself is `vx.cache.remote.httpwire`'s.
"""

from __future__ import annotations

import io
import socket
import time

from vx.cache.remote.httpwire import HttpError, has_control, read_body, read_head
from vx.util.record import Record

__all__ = ["Connection", "HttpError", "Response", "Tunnel", "has_control"]


class Response(Record):
    """A whole response; header names lower-cased, a repeated header's last value kept."""

    status: int
    headers: dict[str, str]
    body: bytes


class Tunnel(Record):
    """An HTTP proxy to reach the server through: CONNECT for https, absolute-form for http.

    `authorization` is the `Proxy-Authorization` value the proxy's URL implied, if any.
    """

    host: str
    port: int
    authorization: str | None = None


class _Timed(io.RawIOBase):
    """The socket's reads, each allowed only what is left until `deadline` (monotonic)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # a buffer in
        self._sock.settimeout(_left(self.deadline))
        return self._sock.recv_into(buffer)


def _left(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class Connection:
    """One connection to `host:port` (through `tunnel`, if any), opened on first use and kept
    open while the server allows; not safe to share between threads."""

    __slots__ = (
        "_authority",
        "_file",
        "_host",
        "_https",
        "_max_body",
        "_port",
        "_raw",
        "_sock",
        "_timeout",
        "_tunnel",
    )

    def __init__(
        self,
        host: str,
        port: int | None,
        *,
        https: bool,
        timeout: float | None,
        max_body: int = 1 << 62,
        tunnel: Tunnel | None = None,
    ) -> None:
        self._host = host
        self._https = https
        self._port = port or (443 if https else 80)
        self._timeout = timeout
        self._max_body = max_body
        self._tunnel = tunnel
        default = self._port == (443 if https else 80)
        name = f"[{host}]" if ":" in host else host
        self._authority = name if default else f"{name}:{self._port}"
        self._sock: socket.socket | None = None
        self._raw: _Timed | None = None
        self._file: io.BufferedReader | None = None

    @property
    def is_open(self) -> bool:
        return self._sock is not None

    def request(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None = None,
        *,
        deadline: float | None = None,
    ) -> Response:
        """Send one request and read its whole response by `deadline` (monotonic; else within
        the connection's timeout); the connection is closed on any failure, and after a
        response the server said was its last."""
        if any(has_control(value) for value in headers.values()):
            raise HttpError("a request header value holds a control character")
        if deadline is None and self._timeout is not None:
            deadline = time.monotonic() + self._timeout
        try:
            if self._sock is None:
                self._open(deadline)
            assert self._sock is not None  # noqa: S101  opened above
            assert self._raw is not None  # noqa: S101  set with the socket
            self._raw.deadline = deadline
            head = self._head(method, target, headers, body)
            self._sock.settimeout(_left(deadline))
            if body and len(body) <= 65536:
                self._sock.sendall(head + body)
            else:
                self._sock.sendall(head)
                if body:
                    self._sock.sendall(body)
            response, last = self._read(method)
        except TimeoutError:
            self.close()
            raise HttpError("no whole answer before the deadline", late=True) from None
        except (BrokenPipeError, ConnectionResetError) as err:
            self.close()
            raise HttpError(f"the server closed the connection ({err})", closed=True) from None
        except MemoryError:
            self.close()
            raise HttpError("an answer too large to hold in memory", oversize=True) from None
        except BaseException:
            self.close()
            raise
        if last:
            self.close()
        return response

    def close(self) -> None:
        sock, self._sock, self._file, self._raw = self._sock, None, None, None
        if sock is not None:
            sock.close()

    def _head(self, method: str, target: str, headers: dict[str, str], body: bytes | None) -> bytes:
        if self._tunnel is not None and not self._https:
            target = f"http://{self._authority}{target}"  # a proxy's absolute form
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._authority}"]
        if self._tunnel is not None and not self._https and self._tunnel.authorization:
            lines.append(f"Proxy-Authorization: {self._tunnel.authorization}")
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if body is not None or method in ("PUT", "POST"):
            lines.append(f"Content-Length: {len(body or b'')}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _open(self, deadline: float | None) -> None:
        tunnel = self._tunnel
        host, port = (tunnel.host, tunnel.port) if tunnel else (self._host, self._port)
        address = host.encode("ascii") if host.isascii() else host
        sock = socket.create_connection((address, port), timeout=_left(deadline))  # type: ignore[arg-type]
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tunnel is not None and self._https:
                self._connect(sock, tunnel, deadline)
            if self._https:
                from vx.util.tlsroots import client_context

                sock.settimeout(_left(deadline))
                # The system's CAs wherever it keeps them: the binary's OpenSSL may look elsewhere.
                context = client_context()
                sock = context.wrap_socket(sock, server_hostname=self._host)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._raw = _Timed(sock)
        self._file = io.BufferedReader(self._raw, 1 << 16)

    def _connect(self, sock: socket.socket, tunnel: Tunnel, deadline: float | None) -> None:
        """Ask the proxy for a tunnel to the server; TLS then runs inside it, end to end."""
        lines = [f"CONNECT {self._authority_with_port()} HTTP/1.1", f"Host: {self._authority}"]
        if tunnel.authorization:
            lines.append(f"Proxy-Authorization: {tunnel.authorization}")
        sock.settimeout(_left(deadline))
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        raw = _Timed(sock)
        raw.deadline = deadline
        # One byte at a time: nothing the proxy sends after its answer may be buffered away
        # from the TLS handshake that follows.
        reader = io.BufferedReader(raw, 1)
        _, status, _ = read_head(reader)
        if not 200 <= status < 300:
            raise HttpError(f"the proxy refused a tunnel to {self._authority} (HTTP {status})")

    def _authority_with_port(self) -> str:
        name = f"[{self._host}]" if ":" in self._host else self._host
        return f"{name}:{self._port}"

    def _read(self, method: str) -> tuple[Response, bool]:
        """The response to the request just sent, and whether the connection ends with it."""
        reader = self._file
        assert reader is not None  # noqa: S101  set with the socket
        while True:
            version, status, headers = read_head(reader)
            if status >= 200 or status == 101:
                break  # an interim 1xx (100 Continue) is followed by the real answer
        last = version == "HTTP/1.0" or "close" in headers.get("connection", "").lower()
        body, ended = read_body(reader, method, status, headers, self._max_body)
        return Response(status, headers, body), last or ended
