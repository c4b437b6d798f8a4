"""The CPU budget: affinity capped by a cgroup quota read from real files."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from vx.util.cpu import cpu_budget

if TYPE_CHECKING:
    from pathlib import Path

CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("files", "quota"),
    [
        ({}, None),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu.max": "50000 100000\n"}, 0.5),
        ({"cpu.max": "200000 100000\n"}, 2.0),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.0),
        ({"cpu.max": "garbage\n"}, None),
    ],
)
def test_quota_caps_the_cores(tmp_path: Path, files: dict[str, str], quota: float | None) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    budget = cpu_budget(tmp_path)
    assert budget.cores == CORES
    assert budget.quota == quota
    expected = CORES if quota is None else max(1, min(CORES, int(quota)))
    assert budget.usable == expected
