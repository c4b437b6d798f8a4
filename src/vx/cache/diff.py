"""Two component lists of one task compared: what moved between the keys, in key order.

`vx why` prints the whole diff; a cache-miss row names its first change. Both read the
same `Change` values, so the row and the verb never disagree about why a key moved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cache.key import KeyComponent, Kind, canonical
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Sequence


class Change(Record):
    """One component that differs: `old` None when it was added, `new` None when removed.

    `detail` says what moved inside it where vx kept that (a lockfile's packages).
    """

    kind: Kind
    name: str
    old: str | None
    new: str | None
    detail: tuple[str, ...] = ()

    @property
    def how(self) -> str:
        """`changed`, `added` or `removed`."""
        if self.old is None:
            return "added"
        return "removed" if self.new is None else "changed"


def diff_components(old: Sequence[KeyComponent], new: Sequence[KeyComponent]) -> tuple[Change, ...]:
    """Every (kind, name) whose digest differs, is new, or is gone, in the key's own order.

    Forwarded args are named by position, so a reordered argv reads as each moved slot.
    """
    before = {(c.kind, c.name): c.digest for c in old}
    after = {(c.kind, c.name): c.digest for c in new}
    out: list[KeyComponent] = []
    found: dict[tuple[Kind, str], Change] = {}
    for slot in (*before, *(s for s in after if s not in before)):
        was, now = before.get(slot), after.get(slot)
        if was != now:
            found[slot] = Change(slot[0], slot[1], was, now)
            out.append(KeyComponent(slot[0], slot[1], now or was or ""))
    return tuple(found[(c.kind, c.name)] for c in canonical(out))


def unchanged_count(old: Sequence[KeyComponent], new: Sequence[KeyComponent]) -> int:
    """How many components both lists hold with the same digest."""
    before = {(c.kind, c.name): c.digest for c in old}
    return sum(1 for c in new if before.get((c.kind, c.name)) == c.digest)


def own_changes(changes: Sequence[Change]) -> tuple[Change, ...]:
    """The changes that are the task's own inputs: everything but the upstream keys."""
    return tuple(c for c in changes if c.kind is not Kind.UPSTREAM)
