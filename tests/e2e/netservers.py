"""What stands between vx and a cache server on a company network, started on 127.0.0.1 by
the test: a CA and a server certificate made with the openssl CLI, a TLS front that
terminates TLS for a plain server, a logging HTTP proxy (CONNECT tunnels and absolute-form
requests), a front that redirects downloads to another origin, and servers that answer
too slowly or too much."""

from __future__ import annotations

import contextlib
import http.client
import shutil
import socket
import ssl
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from pathlib import Path


class Certs(NamedTuple):
    ca: Path
    cert: Path
    key: Path


def make_certs(where: Path) -> Certs:
    """A CA of the test's own and a certificate it signed for 127.0.0.1 and localhost."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl CLI is needed to make a test CA; it is not on PATH")
    where.mkdir(parents=True, exist_ok=True)
    ca, ca_key = where / "ca.pem", where / "ca.key"
    cert, key, csr = where / "server.pem", where / "server.key", where / "server.csr"
    ext = where / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    steps = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
         "-days", "2", "-subj", "/CN=vx test CA"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext],
    ]  # fmt: skip
    for step in steps:
        subprocess.run([openssl, *map(str, step)], check=True, capture_output=True)
    return Certs(ca, cert, key)


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides are done, then close both."""
    other = threading.Thread(target=_pipe, args=(b, a), daemon=True)
    other.start()
    _pipe(a, b)
    other.join()
    a.close()
    b.close()


class TlsFront:
    """TLS on 127.0.0.1 in front of a plain TCP server, with the certificate given; `alpn`
    offers protocols (gRPC needs `h2`)."""

    def __init__(self, upstream: tuple[str, int], certs: Certs, alpn: list[str] | None = None):
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certs.cert, certs.key)
        if alpn:
            self.context.set_alpn_protocols(alpn)
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(raw,), daemon=True).start()

    def _one(self, raw: socket.socket) -> None:
        try:
            client = self.context.wrap_socket(raw, server_side=True)
            server = socket.create_connection(self.upstream)
        except OSError:
            raw.close()
            return
        _splice(client, server)

    def close(self) -> None:
        self.listener.close()


def _relay(handler: BaseHTTPRequestHandler, host: str, port: int, path: str) -> None:
    """Send the handler's request to host:port as `path` and its answer back, whole."""
    length = int(handler.headers.get("Content-Length") or 0)
    body = handler.rfile.read(length) if length else None
    headers = {k: v for k, v in handler.headers.items()
               if k.lower() not in ("host", "proxy-authorization", "proxy-connection")}  # fmt: skip
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request(handler.command, path, body=body, headers=headers)
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    handler.send_response(reply.status)
    for k, v in reply.getheaders():
        if k.lower() not in ("content-length", "transfer-encoding", "connection"):
            handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


class Proxy:
    """A logging HTTP proxy: `log` holds each request's method and target as it came
    (`CONNECT host:port`, or `GET http://host:port/path`), and the Proxy-Authorization
    value each carried."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.auth: list[str | None] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_CONNECT(self) -> None:
                proxy.log.append(f"CONNECT {self.path}")
                proxy.auth.append(self.headers.get("Proxy-Authorization"))
                host, _, port = self.path.rpartition(":")
                upstream = socket.create_connection((host.strip("[]"), int(port)))
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                _splice(self.connection, upstream)
                self.close_connection = True

            def _forward(self) -> None:
                proxy.log.append(f"{self.command} {self.path}")
                proxy.auth.append(self.headers.get("Proxy-Authorization"))
                url = urllib.parse.urlsplit(self.path)
                if url.scheme != "http" or url.hostname is None:
                    self.send_error(400, "not an absolute-form request")
                    return
                target = url.path + (f"?{url.query}" if url.query else "")
                _relay(self, url.hostname, url.port or 80, target)

            do_GET = do_PUT = do_HEAD = _forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RedirectFront:
    """A turborepo-remote-cache as a team runs it with a read URL: a GET is sent first to
    the same origin once more (307), then (302) to `cdn`, a server on another port that
    serves the blob itself. HEAD and PUT pass through to the real server. `seen` records
    each hop's path and the Authorization it carried."""

    def __init__(self, upstream: str, storage: Path) -> None:
        host, _, port = upstream.removeprefix("http://").rstrip("/").partition(":")
        self.seen: list[tuple[str, str | None]] = []
        front = self

        class Cdn(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                front.seen.append((f"cdn {self.path}", self.headers.get("Authorization")))
                blob = storage / self.path.lstrip("/")
                if not blob.is_file():
                    self.send_error(404)
                    return
                data = blob.read_bytes()
                self.send_response(200)
                tag = blob.with_name(blob.name + ".tag")
                if tag.is_file():
                    self.send_header("x-artifact-tag", tag.read_text())
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Front(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                front.seen.append((f"api {self.path}", self.headers.get("Authorization")))
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if "hop" not in query:
                    self._redirect(307, f"{self.path}&hop=1")
                    return
                team = (query.get("teamId") or query.get("slug") or [""])[0]
                key = url.path.rsplit("/", 1)[-1]
                self._redirect(302, f"{front.cdn_url}/{team}/{key}")

            def _redirect(self, status: int, location: str) -> None:
                self.send_response(status)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _through(self) -> None:
                _relay(self, host, int(port), self.path)

            do_PUT = do_HEAD = _through  # noqa: N815

        self.cdn = ThreadingHTTPServer(("127.0.0.1", 0), Cdn)
        self.cdn_url = f"http://localhost:{self.cdn.server_address[1]}"
        self.front = ThreadingHTTPServer(("127.0.0.1", 0), Front)
        self.url = f"http://127.0.0.1:{self.front.server_address[1]}"
        for server in (self.cdn, self.front):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def close(self) -> None:
        for server in (self.cdn, self.front):
            server.shutdown()
            server.server_close()


class Hostile:
    """A cache server that answers every GET badly, as `mode` says, on as many connections
    at once as vx opens; HEAD is a miss and PUT succeeds, so uploads go quietly.

    `trickle`: a body promised, then a byte a second. `continue`: `100 Continue` forever.
    `flood`: a chunked body of `flood` bytes. `absurd`: a chunk size no memory holds.
    `escape`: a status line full of terminal escapes.
    """

    def __init__(self, mode: str, *, flood: int = 64 << 20) -> None:
        self.mode, self.flood = mode, flood
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError), conn.makefile("rb") as reader:
            while line := reader.readline():
                method = line.split(b" ", 1)[0]
                length = 0
                while (header := reader.readline()) not in (b"\r\n", b""):
                    if header.lower().startswith(b"content-length:"):
                        length = int(header.split(b":")[1])
                reader.read(length)
                if method != b"GET":
                    status = b"404 Not Found" if method == b"HEAD" else b"200 OK"
                    conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\n\r\n")
                    continue
                self._answer(conn)
                return

    def _answer(self, conn: socket.socket) -> None:
        if self.mode == "trickle":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            while not self.stop.wait(1):
                conn.sendall(b"x")
        elif self.mode == "continue":
            while not self.stop.wait(0.2):
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        elif self.mode == "flood":
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            piece = b"100000\r\n" + bytes(1 << 20) + b"\r\n"
            for _ in range(self.flood >> 20):
                conn.sendall(piece)
            conn.sendall(b"0\r\n\r\n")
        elif self.mode == "absurd":
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"fffffffffffffffffffffff\r\n")  # fmt: skip
        elif self.mode == "escape":
            conn.sendall(b"\x1b[2J\x1b]0;owned\x07 HTTP/1.1 200\r\n\r\n")

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
