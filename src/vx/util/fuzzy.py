"""Near-miss suggestions: `did you mean` within two edits."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_EDITS = 2


def distance(a: str, b: str, limit: int = MAX_EDITS) -> int:
    """Damerau (optimal string alignment) distance, cut short past `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def did_you_mean(word: str, candidates: Iterable[str], limit: int = MAX_EDITS) -> str | None:
    """The nearest candidate within `limit` edits; ties go to the first in sorted order."""
    best: tuple[int, str] | None = None
    for cand in sorted(set(candidates)):
        if cand == word:
            continue
        d = distance(word, cand, limit)
        if d <= limit and (best is None or d < best[0]):
            best = (d, cand)
    return best[1] if best else None


def listing(names: Iterable[str], most: int = 8) -> str:
    """`a, b, c` — at most `most` names, then `and N more`."""
    items = list(names)
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f" and {len(items) - most} more"
