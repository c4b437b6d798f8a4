"""The remote caches' HTTP/1.1 client against a real TCP server on 127.0.0.1 that answers each
request with bytes the test scripts: every way a body may end, a kept-alive connection reused
and one the server dropped, and the ways a response can be broken."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import TYPE_CHECKING

import pytest

from vx.cache.remote.http1 import Connection, HttpError

if TYPE_CHECKING:
    from collections.abc import Iterator

HANG_LIMIT_S = 30.0  # only there so a broken client fails instead of hanging
CLOSE = b""  # a scripted answer that hangs up instead of answering


class ScriptedServer:
    """Answers the n-th request with `answers[n]`; records each request's bytes and which
    connection (by accept order) carried it."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[int, bytes]] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        accepted = 0
        while self.answers:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            accepted += 1
            with conn:
                while self.answers:
                    request = _read_request(conn)
                    if request is None:
                        break
                    self.requests.append((accepted, request))
                    answer = self.answers.pop(0)
                    if answer == CLOSE:
                        break
                    conn.sendall(answer)
                    if b"Connection: close" in answer or not answer.startswith(b"HTTP/1.1"):
                        break

    def close(self) -> None:
        self.listener.close()
        self._thread.join(timeout=HANG_LIMIT_S)


def _read_request(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            want = int(line.split(b":")[1])
            while len(body) < want:
                body += conn.recv(65536)
    return data


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[ScriptedServer] = []

    def start(*answers: bytes) -> tuple[ScriptedServer, Connection]:
        server = ScriptedServer(list(answers))
        servers.append(server)
        return server, Connection("127.0.0.1", server.port, https=False, timeout=HANG_LIMIT_S)

    yield start
    for server in servers:
        server.close()


CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def ok(body: bytes, *extra: bytes) -> bytes:
    head = [b"HTTP/1.1 200 OK", b"Content-Length: %d" % len(body), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (ok(b"hello"), b"hello"),
        (ok(b""), b""),
        (CHUNKED + b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n",
         b"hello, world"),
        (b"HTTP/1.0 200 OK\r\n\r\nuntil the end", b"until the end"),
        (b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"after"), b"after"),
    ],
    ids=["length", "empty", "chunked", "to-close", "continue"],
)  # fmt: skip
def test_each_way_a_body_ends(serve, answer: bytes, body: bytes) -> None:
    server, conn = serve(answer)
    response = conn.request("GET", "/v8/artifacts/k?teamId=t", {"Authorization": "Bearer x"})
    assert (response.status, response.body) == (200, body)
    [(_, request)] = server.requests
    assert request.startswith(b"GET /v8/artifacts/k?teamId=t HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n".encode() in request
    assert b"Authorization: Bearer x\r\n" in request


def test_headers_are_read_lower_cased_and_a_head_has_no_body(serve) -> None:
    _, conn = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nX-Artifact-Tag: abc=\r\n\r\n")
    response = conn.request("HEAD", "/a", {})
    assert response == (200, {"content-length": "99", "x-artifact-tag": "abc="}, b"")


def test_a_kept_alive_connection_carries_the_next_request(serve) -> None:
    server, conn = serve(ok(b"one"), ok(b"two"))
    assert conn.request("GET", "/1", {}).body == b"one"
    assert conn.request("PUT", "/2", {}, b"data").body == b"two"
    assert [n for n, _ in server.requests] == [1, 1]
    assert server.requests[1][1].endswith(b"Content-Length: 4\r\n\r\ndata")


def test_a_response_marked_last_closes_the_connection(serve) -> None:
    server, conn = serve(ok(b"one", b"Connection: close"), ok(b"two"))
    assert conn.request("GET", "/1", {}).body == b"one"
    assert not conn.is_open
    assert conn.request("GET", "/2", {}).body == b"two"
    assert [n for n, _ in server.requests] == [1, 2]


def test_a_server_hanging_up_instead_of_answering_is_closed(serve) -> None:
    _, conn = serve(CLOSE)
    with pytest.raises(HttpError) as caught:
        conn.request("GET", "/", {})
    assert caught.value.closed
    assert not conn.is_open


@pytest.mark.parametrize(
    ("answer", "partial"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nshort", 5),
        (CHUNKED.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n") + b"5\r\nhello\r\n9\r\nabc",
         5),
    ],
    ids=["length", "chunked"],
)  # fmt: skip
def test_a_body_cut_short_says_how_much_came(serve, answer: bytes, partial: int) -> None:
    _, conn = serve(answer)
    with pytest.raises(HttpError) as caught:
        conn.request("GET", "/", {})
    assert caught.value.partial == partial
    assert not conn.is_open


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    ],
    ids=["not-http", "bad-status", "bad-header", "bad-length"],
)
def test_what_is_not_http_is_refused(serve, answer: bytes) -> None:
    _, conn = serve(answer + b"Connection: close")
    with pytest.raises(HttpError) as caught:
        conn.request("GET", "/", {})
    assert not caught.value.closed
    assert caught.value.partial is None
    assert not conn.is_open


def test_nothing_listening_is_an_os_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    conn = Connection("127.0.0.1", port, https=False, timeout=HANG_LIMIT_S)
    with pytest.raises(ConnectionRefusedError):
        conn.request("GET", "/", {})


class Trickle:
    """A server that answers every connection with `head`, then `drip` over and over, a
    piece every `every` seconds, until the test ends: a server too slow to ever finish."""

    def __init__(self, head: bytes, drip: bytes, every: float = 0.05) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.head, self.drip, self.every = head, drip, every
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.listener.accept()
            with conn:
                _read_request(conn)
                conn.sendall(self.head)
                while not self.stop.wait(self.every):
                    conn.sendall(self.drip)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.mark.parametrize(
    ("head", "drip"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"x"),
        (b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
        (b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a"),
    ],
    ids=["body", "endless-continue", "header"],
)
def test_a_trickling_server_ends_at_the_deadline(head: bytes, drip: bytes) -> None:
    server = Trickle(head, drip)
    try:
        conn = Connection("127.0.0.1", server.port, https=False, timeout=0.5)
        with pytest.raises(HttpError) as caught:
            conn.request("GET", "/", {})
    finally:
        server.close()
    assert caught.value.late
    assert str(caught.value) == "no whole answer before the deadline"
    assert not conn.is_open


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\n",
         "an answer of 1000000000000000 bytes, over the cap of 1.0 KB"),
        (CHUNKED + b"ffffffffffffffffffffffff\r\n",
         "a chunk of 0xfffffffffffffffffff… bytes, over the cap of 1.0 KB"),
        (CHUNKED + b"200\r\n" + b"a" * 512 + b"\r\n201\r\n",
         "a chunk of 0x201 bytes, over the cap of 1.0 KB"),
        (b"HTTP/1.0 200 OK\r\n\r\n" + b"a" * 2000, "an answer over the cap of 1.0 KB"),
        (CHUNKED + b"-5\r\n", "not a chunk size: -5"),
    ],
    ids=["length", "absurd-chunk", "chunks-add-up", "to-close", "negative-chunk"],
)  # fmt: skip
def test_a_body_over_the_cap_is_refused_before_it_is_read(answer: bytes, message: str) -> None:
    server = ScriptedServer([answer + b"Connection: close"])
    try:
        conn = Connection("127.0.0.1", server.port, https=False, timeout=HANG_LIMIT_S,
                          max_body=1024)  # fmt: skip
        with pytest.raises(HttpError) as caught:
            conn.request("GET", "/", {})
    finally:
        server.close()
    assert str(caught.value) == message
    assert not conn.is_open


def test_two_different_content_lengths_are_refused(serve) -> None:
    _, conn = serve(ok(b"hello", b"Content-Length: 7") + b"xx", ok(b"again", b"Content-Length: 5"))
    with pytest.raises(HttpError, match=r"^two different Content-Length headers$"):
        conn.request("GET", "/", {})
    assert conn.request("GET", "/", {}).body == b"again", "the same length twice is one length"


def test_an_odd_answer_is_quoted_escaped_and_clipped(serve) -> None:
    _, conn = serve(b"\x1b]0;pwned\x07\x9b" + b"A" * 500 + b"\r\n\r\n")
    with pytest.raises(HttpError) as caught:
        conn.request("GET", "/", {})
    text = str(caught.value)
    assert text.startswith("not an HTTP status line: \\x1b]0;pwned\\x07\\x9bAAA")
    assert text.endswith("…")
    assert text.isprintable()
    assert len(text) < 120


@pytest.mark.parametrize("value", ["tok\r\nX-Evil: 1", "tok\n", "tok\x00", "tok\x7f"])
def test_a_header_value_with_a_control_character_is_never_sent(serve, value: str) -> None:
    server, conn = serve(ok(b"unused"))
    with pytest.raises(HttpError, match=r"^a request header value holds a control character$"):
        conn.request("GET", "/", {"Authorization": f"Bearer {value}"})
    assert server.requests == []
