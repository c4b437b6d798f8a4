"""A client of a Bazel Remote Execution API cache (ActionCache + CAS over gRPC).

BuildGrid, Buildbarn, BuildBuddy and bazel-remote all serve it. An entry is one blob in the
CAS (its SHA-256 is its name) and one ActionResult under a synthetic action digest derived from
the vx key, whose single output file points at the blob. Blobs move over ByteStream in 1 MiB
chunks, so no batch size limit applies; a fetched blob is checked against the digest the
ActionResult names before anyone reads it. The messages are encoded by `protowire`: the only
dependency is `grpcio`, the `vx-runner[reapi]` extra.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

from vx.cache.remote import protowire as pw
from vx.cache.remote.base import RemoteError, Untrusted
from vx.cache.remote.httpwire import shown
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterator

_AC = "/build.bazel.remote.execution.v2.ActionCache/"
_CAS = "/build.bazel.remote.execution.v2.ContentAddressableStorage/"
_BYTESTREAM = "/google.bytestream.ByteStream/"
_CHUNK = 1 << 20
_TIMEOUT_S = 60.0
_OUTPUT = "vx-entry"
_ACTION_SALT = b"vx remote cache entry\0"
_MAX_MESSAGE = 64 << 20


class ReapiConfig(Record):
    """Where the server is: `grpc://host:port` (or `grpcs://` for TLS), and the instance;
    `root_certificates` (PEM) are the CAs a `grpcs://` server's certificate must chain to,
    None for gRPC's own choice."""

    url: str
    instance: str = ""
    timeout_s: float = _TIMEOUT_S
    root_certificates: bytes | None = None


class Digest(Record):
    """A REAPI digest: SHA-256 hex and size."""

    hash: str
    size: int

    @staticmethod
    def of(data: bytes) -> Digest:
        return Digest(hashlib.sha256(data).hexdigest(), len(data))

    def encode(self) -> bytes:
        return pw.message([(1, self.hash), (2, self.size)])

    @staticmethod
    def decode(data: bytes) -> Digest:
        fields = pw.parse(data)
        return Digest(pw.first_bytes(fields, 1).decode(), pw.first_int(fields, 2))


class ReapiCache:
    """A `RemoteCache` over one REAPI endpoint; one gRPC channel, safe across threads."""

    def __init__(self, config: ReapiConfig) -> None:
        import grpc

        scheme, sep, target = config.url.partition("://")
        if not sep or scheme not in ("grpc", "grpcs") or not target:
            msg = f"not a grpc:// or grpcs:// URL: {config.url}"
            raise ValueError(msg)
        options = [
            ("grpc.max_receive_message_length", _MAX_MESSAGE),
            ("grpc.max_send_message_length", _MAX_MESSAGE),
        ]
        if scheme == "grpcs":
            creds = grpc.ssl_channel_credentials(root_certificates=config.root_certificates)
            self._channel = grpc.secure_channel(target, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._grpc: Any = grpc
        self._config = config
        self._prefix = f"{config.instance}/" if config.instance else ""
        self.label = f"REAPI cache at {scheme}://{target}"

    def exists(self, key: str) -> bool:
        return self._action_result(key) is not None

    def fetch(self, key: str) -> bytes | None:
        found = self._action_result(key)
        if found is None:
            return None
        digest = _entry_digest(found)
        if digest is None:
            raise Untrusted("its ActionResult names no vx entry")
        data = b"".join(self._read(digest))
        if Digest.of(data) != digest:
            raise Untrusted("the CAS blob does not match its digest")
        return data

    def store(self, key: str, blob: bytes, *, duration_ms: float) -> None:
        del duration_ms  # an ActionResult's metadata is optional; vx's envelope carries it
        digest = Digest.of(blob)
        if self._missing(digest):
            self._write(digest, blob)
        output = pw.message([(1, _OUTPUT), (2, digest.encode())])
        result = pw.message([(2, output)])
        request = pw.message([(1, self._config.instance), (2, _action(key).encode()), (3, result)])
        self._unary(_AC + "UpdateActionResult", request)

    def read_blob(self, digest: Digest) -> bytes:
        """One CAS blob, checked against its digest (remote execution reads inputs this way)."""
        data = b"".join(self._read(digest))
        if Digest.of(data) != digest:
            raise Untrusted(f"the CAS blob {digest.hash} does not match its digest")
        return data

    def write_blob(self, blob: bytes) -> Digest:
        """Put one blob in the CAS unless the server already holds it; its digest."""
        digest = Digest.of(blob)
        if self._missing(digest):
            self._write(digest, blob)
        return digest

    def missing(self, digests: list[Digest]) -> set[Digest]:
        """Which of the digests the CAS lacks, asked in one FindMissingBlobs."""
        request = pw.message([(1, self._config.instance), *((2, d.encode()) for d in digests)])
        reply = pw.parse(self._unary(_CAS + "FindMissingBlobs", request))
        return {Digest.decode(raw) for raw in reply.get(2, ()) if isinstance(raw, bytes)}

    def call(self, method: str, request: bytes, timeout_s: float | None = None) -> bytes:
        """One unary call on this channel (`/pkg.Service/Method`); RemoteError when it fails."""
        call = self._channel.unary_unary(method)
        try:
            reply: bytes = call(request, timeout=timeout_s or self._config.timeout_s)
        except self._grpc.RpcError as err:
            raise self._error(method.rpartition("/")[2], err) from None
        return reply

    def stream(self, method: str, request: bytes) -> Any:
        """A server-streaming call with no deadline; the caller iterates and may cancel it."""
        return self._channel.unary_stream(method)(request)

    @property
    def instance(self) -> str:
        return self._config.instance

    def _action_result(self, key: str) -> bytes | None:
        request = pw.message([(1, self._config.instance), (2, _action(key).encode())])
        try:
            return self._unary(_AC + "GetActionResult", request)
        except _NotFound:
            return None

    def _missing(self, digest: Digest) -> bool:
        request = pw.message([(1, self._config.instance), (2, digest.encode())])
        reply = pw.parse(self._unary(_CAS + "FindMissingBlobs", request))
        return bool(reply.get(2))

    def _read(self, digest: Digest) -> Iterator[bytes]:
        name = f"{self._prefix}blobs/{digest.hash}/{digest.size}"
        call = self._channel.unary_stream(_BYTESTREAM + "Read")
        try:
            for reply in call(pw.message([(1, name)]), timeout=self._config.timeout_s):
                yield pw.first_bytes(pw.parse(reply), 10)
        except self._grpc.RpcError as err:
            raise self._error("ByteStream.Read", err) from None

    def _write(self, digest: Digest, blob: bytes) -> None:
        name = f"{self._prefix}uploads/{uuid.uuid4()}/blobs/{digest.hash}/{digest.size}"

        def chunks() -> Iterator[bytes]:
            offset = 0
            while True:
                piece = blob[offset : offset + _CHUNK]
                last = offset + len(piece) >= len(blob)
                yield pw.message(
                    [(1, name if offset == 0 else ""), (2, offset), (3, last), (10, piece)]
                )
                offset += len(piece)
                if last:
                    return

        call = self._channel.stream_unary(_BYTESTREAM + "Write")
        try:
            reply = call(chunks(), timeout=self._config.timeout_s)
        except self._grpc.RpcError as err:
            raise self._error("ByteStream.Write", err) from None
        committed = pw.first_int(pw.parse(reply), 1)
        if committed != digest.size:
            raise RemoteError(f"ByteStream.Write committed {committed} of {digest.size} bytes")

    def _unary(self, method: str, request: bytes) -> bytes:
        call = self._channel.unary_unary(method)
        try:
            reply: bytes = call(request, timeout=self._config.timeout_s)
        except self._grpc.RpcError as err:
            if err.code() == self._grpc.StatusCode.NOT_FOUND:
                raise _NotFound from None
            raise self._error(method.rpartition("/")[2], err) from None
        return reply

    def _error(self, what: str, err: Any) -> RemoteError:
        code = err.code()
        down = code in (
            self._grpc.StatusCode.UNAVAILABLE,
            self._grpc.StatusCode.UNAUTHENTICATED,
            self._grpc.StatusCode.PERMISSION_DENIED,
        )
        details = shown(str(err.details()).encode("utf-8", "backslashreplace"), 200)
        return RemoteError(f"{what} failed: {code.name}: {details}", unreachable=down)


class _NotFound(Exception):  # noqa: N818  a control-flow signal, never raised out of this module
    pass


def _action(key: str) -> Digest:
    """The action digest an entry is filed under: no real Action, only a stable name for it."""
    return Digest.of(_ACTION_SALT + key.encode())


def _entry_digest(action_result: bytes) -> Digest | None:
    try:
        fields = pw.parse(action_result)
        for raw in fields.get(2, ()):
            if isinstance(raw, bytes):
                output = pw.parse(raw)
                if pw.first_bytes(output, 1) == _OUTPUT.encode():
                    return Digest.decode(pw.first_bytes(output, 2))
    except (pw.WireError, UnicodeDecodeError):
        return None
    return None
