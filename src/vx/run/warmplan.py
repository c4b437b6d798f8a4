"""The stored plan: `vx run --dry=json` answered from the last identical plan while it still holds.

A plan reads the same things a run's keys read, plus the cache's index (which entries it
holds, and the history the forecast comes from). After a full `--dry=json` this module keeps
what it printed beside the warm path's snapshots, with the warm path's own proof
(`vx.run.warm.proof`: fingerprints of every path the plan read, `git status`, the variables
and refs) and a fingerprint of the index's files. The next plan of the same shape that finds
all of it unchanged prints the stored bytes; any doubt falls back to the full plan, which
would print the same.

The index files are fingerprinted without their ctime: opening the index for reading, as
every plan does, touches its write-ahead log's ctime and nothing else, while every write to
the index (an entry, a history row) moves a file's mtime or size.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from vx.run.warm import (
    keep_snapshot,
    proof,
    read_snapshot,
    shape_of,
    snapshot_path,
    stats_hold,
)
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.run.prepare import PlanWitness, RunOptions

PLAN_VERSION = 1
"""Bumping it orphans every stored plan (the next full plan stores a new one)."""

_INDEX_FILES = ("", "cache.db", "cache.db-wal")  # vx.cache.index.INDEX_NAME, unimported
# As the warm path's: a write in the same tick as the plan's read keeps the mtime.
_RACY_NS = 50_000_000
_COARSE_RACY_NS = 2_000_000_000  # file systems that keep whole seconds (FAT keeps two)


class StoredPlan(Record):
    """What a full plan of this shape printed: its notes (stderr lines) and its document."""

    notes: tuple[str, ...]
    out: str


def storable(options: RunOptions) -> bool:
    """Plans the stored answer may stand in for: those the warm path may replay, named on
    the command line (a picker asks a person), without `VX_TIMING` (it reports the full
    plan's phases) or `--download` (its note reads the plan, outside the proof)."""
    return (
        options.warm
        and not options.frozen
        and options.shard is None
        and bool(options.tasks)
        and not options.timing
        and options.download == "all"
    )


def _env(options: RunOptions) -> Mapping[str, str]:
    return os.environ if options.env is None else options.env


def _shape(options: RunOptions, env: Mapping[str, str]) -> tuple[object, ...]:
    return ("plan", PLAN_VERSION, shape_of(options, env))


def _path(shape: tuple[object, ...], env: Mapping[str, str]) -> Path:
    """Beside the warm path's snapshots, in a directory of their own: the one thing a plan
    keeps, apart from every run's cache, history and snapshots."""
    path = snapshot_path(shape, env)
    return path.parent / "plans" / path.name


def _index_fingerprint(store: str) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for name in _INDEX_FILES:
        try:
            st = os.stat(os.path.join(store, name))
        except (FileNotFoundError, NotADirectoryError):
            out.append(())
            continue
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return out


def replay_plan(options: RunOptions) -> StoredPlan | None:
    """The stored answer for this plan, or None when it cannot be proven to still hold."""
    if not storable(options):
        return None
    env = _env(options)
    shape = _shape(options, env)
    snap = read_snapshot(_path(shape, env), shape)
    if snap is None:
        return None
    try:
        return _proven(snap, env)
    except (OSError, KeyError, ValueError, TypeError, IndexError):
        return None


def _proven(snap: dict[str, object], env: Mapping[str, str]) -> StoredPlan | None:
    """`git status` starts first and is read last, the fingerprints checked while git runs."""
    from vx.git import status_output

    status = status_output(Path(str(snap["root"])), env)
    try:
        held = stats_hold(snap, env) and _index_fingerprint(str(snap["store"])) == snap["index"]
    finally:
        raw = status()  # always: no git is left behind when a check fails first
    if not held or raw is None or raw != snap["status"]:
        return None
    notes, out = snap["notes"], snap["out"]
    if not isinstance(notes, list) or not isinstance(out, str):
        return None
    return StoredPlan(tuple(str(n) for n in notes), out)


def remember_plan(seen: PlanWitness, printed: StoredPlan) -> None:
    """After a full plan: keep what it printed when its proof can be kept, else drop the old
    one. Never fails the plan: a plan that cannot be stored only means the next is full."""
    options = seen.options
    if not storable(options):
        return
    keep_snapshot(_path(_shape(options, seen.env), seen.env), lambda: _snapshot(seen, printed))


def _snapshot(seen: PlanWitness, printed: StoredPlan) -> dict[str, object] | None:
    """The stored plan with its proof over every keyed task, None when none can be kept."""
    proven = proof(seen, list(seen.keys.components))
    if proven is None or seen.git.status.raw is None:
        return None
    store = str(seen.store)
    index = _index_fingerprint(store)
    if _racy(index, seen.started_ns):
        return None  # the index changed as the plan read it: a later write could hide
    return {
        **proven,
        "shape": _shape(seen.options, seen.env),
        "status": seen.git.status.raw,  # whole: a restore's staging dir may be an input
        "store": store,
        "index": index,
        "notes": list(printed.notes),
        "out": printed.out,
    }


def _racy(index: list[tuple[int, ...]], started_ns: int) -> bool:
    """An index file written so close to the plan's start that a later write could leave its
    mtime as it was; on a file system that keeps whole seconds, "close" is two seconds."""
    present = [fp[0] for fp in index if fp]
    coarse = all(mtime % 1_000_000_000 == 0 for mtime in present)
    margin = _COARSE_RACY_NS if coarse else _RACY_NS
    return any(mtime >= started_ns - margin for mtime in present)
