"""A real gRPC proxy on 127.0.0.1 in front of a REAPI server, breaking what it answers.

The REAPI counterpart of `remoteservers.FaultProxy`: vx's client talks to it over a real
HTTP/2 channel, it forwards every call to BuildGrid as raw bytes (no generated stubs) and
breaks the answers as `mode` says:

- `internal`: every call fails with status INTERNAL (gRPC's HTTP 500).
- `unavailable`: every call fails with status UNAVAILABLE (a server shedding load).
- `truncate`: a ByteStream.Read sends the first half of the blob and ends with status OK.
- `tamper`: a ByteStream.Read has one byte flipped in the blob's middle, length unchanged.
- `forge`: like `tamper`, but the ActionResult is rewritten to name the tampered blob's own
  digest, so the blob passes the CAS digest check and only vx's envelope can catch it.
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from vx.cache.remote import protowire as pw

if TYPE_CHECKING:
    from collections.abc import Iterator

_READ = "/google.bytestream.ByteStream/Read"
_WRITE = "/google.bytestream.ByteStream/Write"
_GET_AC = "/build.bazel.remote.execution.v2.ActionCache/GetActionResult"
MODES = ("internal", "unavailable", "truncate", "tamper", "forge")


def _flip(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]


_FAULT = "injected fault\x1b[2J"
"""What an error status says: a terminal escape a notice must show escaped."""


class GrpcFaultProxy:
    """A gRPC server forwarding to `upstream` (`grpc://host:port`); `broken` counts the
    answers it broke."""

    def __init__(self, upstream: str, mode: str) -> None:
        import grpc

        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode
        self.broken = 0
        self._grpc: Any = grpc
        self._lock = threading.Lock()
        self._forged: dict[str, bytes] = {}  # hash -> tampered blob the forged results name
        self._upstream = grpc.insecure_channel(upstream.removeprefix("grpc://"))
        proxy = self

        class Handler(grpc.GenericRpcHandler):
            def service(self, details: Any) -> Any:
                method = details.method
                if method == _READ:
                    return grpc.unary_stream_rpc_method_handler(proxy._read)
                if method == _WRITE:
                    return grpc.stream_unary_rpc_method_handler(proxy._write)
                return grpc.unary_unary_rpc_method_handler(
                    lambda request, context: proxy._unary(method, request, context)
                )

        self._server = grpc.server(ThreadPoolExecutor(max_workers=8))
        self._server.add_generic_rpc_handlers((Handler(),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.url = f"grpc://127.0.0.1:{port}"

    def close(self) -> None:
        self._server.stop(grace=None)
        self._upstream.close()

    def _refuse(self, context: Any) -> None:
        """Fail the call when the mode fails every call."""
        codes = {"internal": "INTERNAL", "unavailable": "UNAVAILABLE"}
        if self.mode in codes:
            with self._lock:
                self.broken += 1
            context.abort(getattr(self._grpc.StatusCode, codes[self.mode]), _FAULT)

    def _call(self, context: Any, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args, timeout=30)
        except self._grpc.RpcError as err:
            context.abort(err.code(), err.details() or "")

    def _unary(self, method: str, request: bytes, context: Any) -> bytes:
        self._refuse(context)
        reply: bytes = self._call(context, self._upstream.unary_unary(method), request)
        if method == _GET_AC and self.mode == "forge":
            reply = self._forge(reply, context)
        return reply

    def _forge(self, action_result: bytes, context: Any) -> bytes:
        """An ActionResult naming a tampered copy of its blob, filed under that copy's digest."""
        output = pw.parse(pw.first_bytes(pw.parse(action_result), 2))
        digest = pw.parse(pw.first_bytes(output, 2))
        name = f"blobs/{pw.first_bytes(digest, 1).decode()}/{pw.first_int(digest, 2)}"
        read = self._upstream.unary_stream(_READ)
        chunks = self._call(context, lambda *a, **k: list(read(*a, **k)), pw.message([(1, name)]))
        forged = _flip(b"".join(pw.first_bytes(pw.parse(c), 10) for c in chunks))
        sha = hashlib.sha256(forged).hexdigest()
        with self._lock:
            self._forged[sha] = forged
            self.broken += 1
        new_digest = pw.message([(1, sha), (2, len(forged))])
        new_output = pw.message([(1, pw.first_bytes(output, 1)), (2, new_digest)])
        return pw.message([(2, new_output)])

    def _read(self, request: bytes, context: Any) -> Iterator[bytes]:
        self._refuse(context)
        name = pw.first_bytes(pw.parse(request), 1).decode()
        sha = name.split("/")[-2]
        with self._lock:
            forged = self._forged.get(sha)
        if forged is not None:
            yield pw.message([(10, forged)])
            return
        call = self._upstream.unary_stream(_READ)
        chunks = self._call(context, lambda *a, **k: list(call(*a, **k)), request)
        data = b"".join(pw.first_bytes(pw.parse(c), 10) for c in chunks)
        if data and self.mode in ("truncate", "tamper"):
            with self._lock:
                self.broken += 1
            data = data[: len(data) // 2] if self.mode == "truncate" else _flip(data)
        yield pw.message([(10, data)])

    def _write(self, requests: Iterator[bytes], context: Any) -> bytes:
        self._refuse(context)
        reply: bytes = self._call(
            context, self._upstream.stream_unary(_WRITE), iter(list(requests))
        )
        return reply
