"""The record the shards of one CI run keep in the shared remote cache: the plan digest and
the deal, under a key derived from the run id.

The first shard to look finds nothing and stores its own; every later one compares digests
and refuses to work on a different plan (another commit, other tasks, other flags), and
takes the recorded deal, so shards whose histories differ still split the work one way.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING, Protocol

from vx.errors import ErrorCode, UserError
from vx.ids import TaskId
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.shard.spec import ShardSpec

_FORMAT = 1


class BlobStore(Protocol):
    """The part of a remote cache client the record needs (vx.cache.remote's RemoteCache)."""

    def fetch(self, key: str) -> bytes | None: ...

    def store(self, key: str, blob: bytes, *, duration_ms: float) -> None: ...


class Claim(Record):
    """What the run's record says: the digest, and each task's owner (0-based)."""

    digest: str
    owners: Mapping[TaskId, int]
    first: bool  # this shard wrote the record


def claim_key(run_id: str) -> str:
    """The record's key: 16 hex digits like a task key's, in a space no task key uses."""
    return hashlib.sha256(f"vx-shard-run\0{run_id}".encode()).hexdigest()[:16]


SETTLE_S = 2.0
"""How long a shard that wrote the record waits before reading it back: shards started
together may each find none and write their own, and the remote cache has no conditional
write, so each reads back after the others' writes have landed and all take the one kept."""


def settle(
    store: BlobStore,
    spec: ShardSpec,
    digest: str,
    owners: Mapping[TaskId, int],
    *,
    pause: Callable[[float], None] = time.sleep,
) -> Claim:
    """Record this shard's digest and deal if the run has none yet, else check against it.

    Raises UserError (one line) when the recorded digest differs. The remote client's own
    errors pass through: the caller decides what a server that cannot answer means.
    """
    if spec.run_id is None:
        raise AssertionError("settle is for a run with an id")
    key = claim_key(spec.run_id)
    found = _read(store.fetch(key))
    first = found is None
    if found is None:
        store.store(key, _write(spec.total, digest, owners), duration_ms=0)
        pause(SETTLE_S)
        found = _read(store.fetch(key)) or (spec.total, digest, dict(owners))
    total, recorded, recorded_owners = found
    if recorded != digest or total != spec.total:
        raise UserError(
            ErrorCode.REFUSED,
            f"shard {spec.label} of run {spec.run_id}: this plan's digest is {digest}, but the"
            f" run's shards recorded {recorded} ({total} shards) — every shard must run the"
            " same commit, tasks and flags; re-run them all, or give this one its own"
            " --shard-run",
        )
    return Claim(digest, recorded_owners, first)


def _write(total: int, digest: str, owners: Mapping[TaskId, int]) -> bytes:
    doc = {
        "format": _FORMAT,
        "shards": total,
        "digest": digest,
        "owners": {str(t): s for t, s in sorted(owners.items())},
    }
    return json.dumps(doc, sort_keys=True).encode()


def _read(blob: bytes | None) -> tuple[int, str, dict[TaskId, int]] | None:
    """The record's (shard count, digest, owners); None for none, or one this vx cannot
    read (it is then overwritten: a record nobody can read protects nothing)."""
    if blob is None:
        return None
    try:
        doc = json.loads(blob)
        if doc.get("format") != _FORMAT:
            return None
        owners = {TaskId.parse(t): int(s) for t, s in doc["owners"].items()}
        return int(doc["shards"]), str(doc["digest"]), owners
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
