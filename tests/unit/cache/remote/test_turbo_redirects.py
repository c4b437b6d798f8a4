"""The Turborepo client's redirects against a real HTTP server on 127.0.0.1 that answers every
GET with the redirect a test gives: a bounded count, and locations it will not follow."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest

from vx.cache.remote.base import RemoteError
from vx.cache.remote.turbo import TurboCache, TurboConfig

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def redirecting() -> Iterator[object]:
    servers: list[ThreadingHTTPServer] = []

    def start(status: int, location: str) -> tuple[TurboCache, list[str]]:
        seen: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append(f"{self.command} {self.path}")
                self.send_response(status)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_GET  # noqa: N815

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        api = f"http://127.0.0.1:{server.server_address[1]}"
        return TurboCache(TurboConfig(api, "tok", "team_x", timeout_s=30)), seen

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_redirect_loop_ends_after_ten_hops(redirecting) -> None:
    client, seen = redirecting(302, "/v8/artifacts/again")
    with pytest.raises(RemoteError, match="GET was redirected more than 10 times"):
        client.fetch("0123456789abcdef")
    assert len(seen) == 11


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("ftp://127.0.0.1/blob", "GET was redirected to a URL that is not http(s)"),
        ("http://127.0.0.1:99999/blob", "GET was redirected to a malformed URL"),
        ("file:///etc/passwd", "GET was redirected to a URL that is not http(s)"),
    ],
)
def test_a_redirect_vx_will_not_follow_is_a_failed_lookup(
    redirecting, location: str, message: str
) -> None:
    client, _ = redirecting(307, location)
    with pytest.raises(RemoteError) as caught:
        client.fetch("0123456789abcdef")
    assert str(caught.value) == message


def test_a_redirect_of_an_upload_is_not_followed(redirecting) -> None:
    client, seen = redirecting(307, "/elsewhere")
    with pytest.raises(RemoteError, match="PUT answered HTTP 307"):
        client.store("0123456789abcdef", b"blob", duration_ms=1.0)
    assert seen == ["PUT /v8/artifacts/0123456789abcdef?teamId=team_x"]
