"""Cache eviction: a retention policy → a PrunePlan (pure) → apply it to the index and the store.

The plan is a pure function of the index rows, the directory listing and the clock, so
`--dry-run` names exactly what the real prune then takes. Only names vx writes are looked
at: `<16 hex>.tar.zst` and that name's save temps (`.tmp-` and tempfile's eight characters).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vx.cache.store import ARTIFACT_SUFFIX
from vx.util.atomic import TEMP_MARKER

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vx.cache.index import Index

HOUR_MS = 3_600_000
"""Nothing used (or written) within the hour is taken: a run may be restoring or saving it."""
STAMP_NAME = "retention.stamp"
"""Touched by each retention pass at a run's end, so the next one waits an hour."""

_ARTIFACT = re.compile(r"[0-9a-f]{16}" + re.escape(ARTIFACT_SUFFIX))
_TEMP = re.compile(r"[0-9a-f]{16}" + re.escape(ARTIFACT_SUFFIX + TEMP_MARKER) + r"[a-z0-9_]{8}")


@dataclass(frozen=True, slots=True)
class Policy:
    """What may go: entries unused for `older_than_ms`, then the least recently used until
    the rest fits `max_bytes`. At least one is set; neither is zero."""

    older_than_ms: int | None = None
    max_bytes: int | None = None

    @classmethod
    def of_retention(cls, older_than: str | None, max_size: str | None) -> Policy | None:
        """The policy a workspace's validated `cacheRetention` spells; None when it sets none."""
        from vx.util.units import duration_ms, size_bytes

        age = duration_ms(older_than) if older_than else None
        size = size_bytes(max_size) if max_size else None
        return cls(age, size) if age or size else None

    def __post_init__(self) -> None:
        assert self.older_than_ms is not None or self.max_bytes is not None  # noqa: S101
        assert (self.older_than_ms or 1) > 0  # noqa: S101
        assert (self.max_bytes or 1) > 0  # noqa: S101


@dataclass(frozen=True, slots=True)
class Listing:
    """What the cache holds: index rows `(key, size, last used ms)` and the directory's files
    vx names, `(name, size, mtime ms)`."""

    entries: tuple[tuple[str, int, int], ...]
    files: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class Victim:
    """One thing a prune takes: an entry (row and artifact), a row whose artifact is gone,
    a row-less artifact, or a save temp."""

    name: str
    kind: str  # "entry" | "missing" | "orphan" | "temp"
    bytes: int
    last_used_ms: int


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """What a prune takes, in the order it takes it, and the totals it reports."""

    victims: tuple[Victim, ...]

    def of(self, *kinds: str) -> tuple[Victim, ...]:
        return tuple(v for v in self.victims if v.kind in kinds)

    @property
    def evicted(self) -> int:
        return len(self.of("entry", "missing"))

    @property
    def bytes_freed(self) -> int:
        return sum(v.bytes for v in self.of("entry"))

    @property
    def orphans(self) -> int:
        return len(self.of("orphan", "temp"))

    @property
    def orphan_bytes(self) -> int:
        return sum(v.bytes for v in self.of("orphan", "temp"))


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What a prune did (or, dry, would do): `vx cache prune`'s report."""

    dry_run: bool
    evicted: int
    bytes_freed: int
    orphans: int
    orphan_bytes: int


def is_artifact(name: str) -> bool:
    return _ARTIFACT.fullmatch(name) is not None


def is_temp(name: str) -> bool:
    return _TEMP.fullmatch(name) is not None


def list_cache(store: Path, index: Index | None) -> Listing:
    """The rows the index holds and the files vx writes in `store` (nothing else is listed)."""
    entries = tuple(index.retention_rows()) if index is not None else ()
    files: list[tuple[str, int, int]] = []
    try:
        paths = list(store.iterdir())
    except FileNotFoundError:
        paths = []
    for path in paths:
        if not (is_artifact(path.name) or is_temp(path.name)):
            continue
        with contextlib.suppress(FileNotFoundError):
            st = path.lstat()
            files.append((path.name, st.st_size, st.st_mtime_ns // 1_000_000))
    return Listing(entries, tuple(sorted(files)))


def orphans(listing: Listing, now_ms: int) -> tuple[Victim, ...]:
    """Row-less artifacts and save temps over an hour old (what `vx info` counts); a row-less
    artifact's last use is its file time plus an hour, as a hit renews older file times."""
    keyed = {key for key, _, _ in listing.entries}
    found: list[Victim] = []
    for name, size, mtime in listing.files:
        if now_ms - mtime <= HOUR_MS:
            continue
        if is_temp(name):
            found.append(Victim(name, "temp", size, mtime))
        elif name.removesuffix(ARTIFACT_SUFFIX) not in keyed:
            found.append(Victim(name, "orphan", size, mtime + HOUR_MS))
    return tuple(found)


def plan_prune(listing: Listing, policy: Policy, now_ms: int) -> PrunePlan:
    """Apply `policy` to what the cache holds now; pure, so a dry run and a real one agree.

    A row whose artifact is gone is dropped (unless used within the hour) and counts toward
    neither the size nor the freed total. Row-less artifacts face the policy as entries do;
    temps over an hour old always go.
    """
    on_disk = {name for name, _, _ in listing.files}
    victims: list[Victim] = []
    pool: list[Victim] = []
    for key, size, used in listing.entries:
        if key + ARTIFACT_SUFFIX in on_disk:
            pool.append(Victim(key, "entry", size, used))
        elif now_ms - used > HOUR_MS:
            victims.append(Victim(key, "missing", 0, used))
    loose = orphans(listing, now_ms)
    pool += [v for v in loose if v.kind == "orphan"]
    victims += [v for v in loose if v.kind == "temp"]
    pool.sort(key=lambda v: (v.last_used_ms, v.name))
    keep: list[Victim] = []
    for v in pool:
        old = policy.older_than_ms is not None and v.last_used_ms < now_ms - policy.older_than_ms
        (victims if old else keep).append(v)
    if policy.max_bytes is not None:
        total = sum(v.bytes for v in keep)
        for v in keep:
            if total <= policy.max_bytes:
                break
            victims.append(v)
            total -= v.bytes
    return PrunePlan(tuple(victims))


def apply_prune(plan: PrunePlan, store: Path, index: Index | None) -> PruneResult:
    """Take what `plan` names. An entry used or saved since the plan keeps its row and bytes;
    a row-less artifact that gained a row meanwhile is left alone.

    Rows go before their artifacts: a run that looks an entry up after this finds no row (a
    miss); one that looked it up before either has the file open already (POSIX keeps an
    unlinked open file readable) or finds it gone when it opens it, which is a miss too.
    """
    entries = plan.of("entry", "missing")
    gone = index.drop_unused((v.name, v.last_used_ms) for v in entries) if index else set()
    evicted = freed = 0
    for v in entries:
        if v.name not in gone:
            continue
        evicted += 1
        if v.kind == "entry":
            freed += v.bytes
            _unlink(store / (v.name + ARTIFACT_SUFFIX))
    loose = plan.of("orphan", "temp")
    keyed = (
        set(index.entry_digests([v.name.removesuffix(ARTIFACT_SUFFIX) for v in loose]))
        if index is not None and loose
        else set()
    )
    reaped = reaped_bytes = 0
    for v in loose:
        if v.kind == "orphan" and v.name.removesuffix(ARTIFACT_SUFFIX) in keyed:
            continue
        if _unlink(store / v.name):
            reaped += 1
            reaped_bytes += v.bytes
    return PruneResult(
        dry_run=False, evicted=evicted, bytes_freed=freed, orphans=reaped, orphan_bytes=reaped_bytes
    )


def dry_result(plan: PrunePlan, *, dry_run: bool = True) -> PruneResult:
    """What `plan` would take, as a report (`dry_run=False`: a cache with nothing to take)."""
    return PruneResult(
        dry_run=dry_run,
        evicted=plan.evicted,
        bytes_freed=plan.bytes_freed,
        orphans=plan.orphans,
        orphan_bytes=plan.orphan_bytes,
    )


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def now_ms(clock: Callable[[], float] = time.time) -> int:
    return int(clock() * 1000)


def retention_due(
    store: Path,
    policy: Policy,
    index: Index | None,
    *,
    clock: Callable[[], float] = time.time,
) -> bool:
    """Whether a run's end should prune: the index is over the policy, or the last pass (the
    stamp's file time) was over an hour ago, so row-less files are swept at most hourly."""
    current = now_ms(clock)
    try:
        stamped = (store / STAMP_NAME).stat().st_mtime_ns // 1_000_000
    except OSError:
        stamped = None
    if stamped is None or current - stamped > HOUR_MS:
        return True
    if index is None:
        return False
    if policy.max_bytes is not None and index.stats().bytes > policy.max_bytes:
        return True
    oldest = index.oldest_use_ms()
    return (
        policy.older_than_ms is not None
        and oldest is not None
        and oldest < current - policy.older_than_ms
    )


def apply_retention(
    store: Path, policy: Policy, index: Index, *, clock: Callable[[], float] = time.time
) -> PruneResult:
    """A run's end: prune under the workspace's `cacheRetention` and stamp the time."""
    from vx.util.atomic import write_atomic

    result = apply_prune(plan_prune(list_cache(store, index), policy, now_ms(clock)), store, index)
    write_atomic(store / STAMP_NAME, b"")
    return result
