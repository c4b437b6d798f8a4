"""What a remote cache client is to vx: fetch and store opaque blobs by cache key.

A client speaks one server's protocol and nothing else: what a blob holds, how it is checked
and how a hit lands on disk belong to `vx.cache.remote.layered`, so every protocol gets the
same digest and archive checks.
"""

from __future__ import annotations

from typing import Protocol


class RemoteError(Exception):
    """The server could not answer (down, refusing, erroring): a miss, never a failed run.

    `unreachable` says no later request of this run can fare better (the connection itself
    failed), so the layer stops asking.
    """

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class Untrusted(Exception):  # noqa: N818  it names what the blob is
    """A blob the server returned that fails its check (signature, digest, shape): a miss."""


class RemoteCache(Protocol):
    """One remote store of blobs keyed by vx cache keys (16 hex digits)."""

    @property
    def label(self) -> str:
        """What notices call it: the protocol and where (never a token)."""

    def fetch(self, key: str) -> bytes | None:
        """The blob stored under `key`, None when there is none.

        Raises RemoteError when the server could not say, Untrusted when what it sent fails
        the protocol's own check (a bad signature).
        """

    def exists(self, key: str) -> bool:
        """The server holds a blob under `key` (an upload of it can be skipped).

        Raises RemoteError when the server could not say.
        """

    def store(self, key: str, blob: bytes, *, duration_ms: float) -> None:
        """Keep `blob` under `key`; raises RemoteError when the server refused it."""
