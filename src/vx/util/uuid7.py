"""UUIDv7 run ids (RFC 9562): they sort by creation time, so file names and rows sort by age."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_VERSION = 7
_VARIANT = 0b10


def uuid7(
    *,
    now_ns: Callable[[], int] = time.time_ns,
    random_bytes: Callable[[int], bytes] = os.urandom,
) -> str:
    """A UUIDv7 in its canonical text: 48 bits of Unix milliseconds, then 12 bits of
    sub-millisecond time.

    The sub-millisecond field (RFC 9562 method 3) keeps ids made in one millisecond in order.
    Formatted here rather than through `uuid.UUID`, whose module costs every run an import.
    """
    ns = now_ns()
    ms, rest = divmod(ns, 1_000_000)
    sub_ms = rest * 4096 // 1_000_000
    rand = int.from_bytes(random_bytes(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80
    value |= _VERSION << 76
    value |= sub_ms << 64
    value |= _VARIANT << 62
    value |= rand
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid7_ms(value: str) -> int:
    """The Unix time in milliseconds a UUIDv7 was made at."""
    return int(value.replace("-", "")[:12], 16)
