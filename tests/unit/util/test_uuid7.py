"""UUIDv7 run ids: the RFC's layout, and ids that sort by the time they were made."""

from __future__ import annotations

import uuid

import pytest

from vx.util.uuid7 import uuid7, uuid7_ms

T0 = 1_700_000_000_123_456_789


@pytest.mark.parametrize("ns", [0, T0, T0 + 999_999, (2**48 - 1) * 1_000_000])
def test_layout(ns: int) -> None:
    value = uuid7(now_ns=lambda: ns)
    parsed = uuid.UUID(value)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert uuid7_ms(value) == ns // 1_000_000
    assert str(parsed) == value


@pytest.mark.parametrize("step_ns", [1, 250, 1_000, 1_000_000, 86_400 * 10**9])
def test_ids_sort_by_creation_time(step_ns: int) -> None:
    times = [T0 + i * step_ns for i in range(50)]
    ids = [uuid7(now_ns=lambda t=t: t) for t in times]
    distinct_ticks = len({t * 4096 // 1_000_000 for t in times})
    assert len(set(ids)) == len(ids)
    if distinct_ticks == len(times):
        assert ids == sorted(ids)


def test_randomness_fills_the_rest() -> None:
    zeros = uuid7(now_ns=lambda: T0, random_bytes=lambda n: b"\0" * n)
    ones = uuid7(now_ns=lambda: T0, random_bytes=lambda n: b"\xff" * n)
    assert zeros != ones
    assert uuid.UUID(zeros).int >> 64 == uuid.UUID(ones).int >> 64
