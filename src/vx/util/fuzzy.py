"""Near-miss suggestions: `did you mean` within two edits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_EDITS = 2


def distance(a: str, b: str, limit: int = MAX_EDITS) -> int:
    """Damerau (optimal string alignment) distance, cut short past `limit`.

    Only the cells within `limit` of the diagonal are computed (any other costs more than
    `limit` edits), so two long names compare in time linear in their length: a
    10 000-character word typed at the prompt must not stall the refusal that echoes it.
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    big = limit + 1
    width = 2 * limit + 1
    # Row i holds columns j = i + k - limit for k in range(width); a missing cell is `big`.
    prev2 = [big] * width
    prev = [j if 0 <= j <= len(b) and j <= limit else big for j in range(-limit, limit + 1)]
    for i in range(1, len(a) + 1):
        ca = a[i - 1]
        cur = [big] * width
        for k in range(width):
            j = i + k - limit
            if j < 0 or j > len(b):
                continue
            if j == 0:
                cur[k] = min(i, big)
                continue
            cb = b[j - 1]
            best = prev[k] + (ca != cb)
            if k + 1 < width:
                best = min(best, prev[k + 1] + 1)
            if k > 0:
                best = min(best, cur[k - 1] + 1)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, prev2[k] + 1)
            cur[k] = min(best, big)
        if min(cur) > limit:
            return big
        prev2, prev = prev, cur
    return prev[len(b) - len(a) + limit]


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
    """`a, b, c` — at most `most` names, each cut to a readable length, then `and N more`."""
    items = [clip(name) for name in names]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f" and {len(items) - most} more"
