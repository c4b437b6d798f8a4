"""An OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests, decoding each request with
the official `opentelemetry-proto` messages."""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
    reason="opentelemetry-proto is not installed (pip install 'vx-runner[otel]')",
)


class Span(NamedTuple):
    """The parts of one received span the tests look at."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    status: int  # 0 unset, 1 ok, 2 error
    attributes: dict[str, object]


class Receiver:
    """Collects every span posted to `/v1/traces`; `endpoint` is what OTEL_* variables name."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = trace_service.ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.requests += 1
                    receiver.spans.extend(_spans(request))
                answer = trace_service.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def by_name(self, name: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.name == name]


def _spans(request: object) -> Iterator[Span]:
    for resource in request.resource_spans:  # type: ignore[attr-defined]
        for scope in resource.scope_spans:
            for span in scope.spans:
                yield Span(
                    span.name,
                    span.trace_id.hex(),
                    span.span_id.hex(),
                    span.parent_span_id.hex(),
                    span.status.code,
                    {a.key: _value(a.value) for a in span.attributes},
                )


def _value(value: object) -> object:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else None


@contextlib.contextmanager
def receiver() -> Iterator[Receiver]:
    """A receiver serving on a free port until the block ends."""
    made = Receiver()
    thread = threading.Thread(target=made.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield made
    finally:
        made.server.shutdown()
        made.server.server_close()


@contextlib.contextmanager
def silent_port() -> Iterator[str]:
    """An endpoint that accepts connections and never answers: a hung collector."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def closed_port() -> str:
    """An endpoint nothing listens on: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
