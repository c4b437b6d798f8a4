"""Durations (`30d`) and sizes (`10G`) as the workspace config and `vx cache prune` spell them."""

from __future__ import annotations

import re

DURATION = re.compile(r"(?P<n>[1-9][0-9]*)(?P<unit>[sSmMhHdD])")
SIZE = re.compile(r"(?P<n>[1-9][0-9]*)(?:(?P<unit>[kKmMgGtT])[bB]?|[bB])")
DURATION_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SIZE_BYTES = {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

_ZERO = re.compile(r"0+(?:[sSmMhHdD]|[kKmMgGtT]?[bB]?)")
_BYTE_STEPS = ("B", "KB", "MB", "GB", "TB")


def duration_ms(text: str) -> int | None:
    """`30d` in milliseconds; None for anything that is not a positive duration."""
    found = DURATION.fullmatch(text.strip())
    if found is None:
        return None
    return int(found["n"]) * DURATION_MS[found["unit"].lower()]


def size_bytes(text: str) -> int | None:
    """`10G` (or `10GB`, `500m`, `4096B`) in bytes; None for anything else, a bare number too.

    A bare number is refused rather than read as bytes: `10` meaning ten bytes would make a
    size cap evict nearly everything, which nobody asks for on purpose.
    """
    found = SIZE.fullmatch(text.strip())
    if found is None:
        return None
    return int(found["n"]) * SIZE_BYTES[(found["unit"] or "b").lower()]


def is_zero(text: str) -> bool:
    """`0d`, `0`, `0G`: a bound of nothing, which a caller refuses by name."""
    return _ZERO.fullmatch(text.strip()) is not None


def format_bytes(count: int) -> str:
    """`1.3 GB`, `320 MB`, `0 B`: powers of 1024, one decimal below ten."""
    value = float(count)
    for step in _BYTE_STEPS:
        if value < 1024 or step == _BYTE_STEPS[-1]:
            if step == "B":
                return f"{int(value)} B"
            return f"{value:.1f} {step}" if value < 10 else f"{value:.0f} {step}"
        value /= 1024
    raise AssertionError("unreachable: the last step returns")
