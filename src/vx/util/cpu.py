"""How many CPUs this process may use: its affinity, capped by a cgroup CPU quota."""

from __future__ import annotations

import math
import os
from pathlib import Path

from vx.util.record import Record


class CpuBudget(Record):
    """The default worker count and where it comes from (`vx info` shows both)."""

    usable: int
    cores: int
    quota: float | None


def cpu_budget(cgroup_root: Path = Path("/sys/fs/cgroup")) -> CpuBudget:
    """The cores we may run on, capped by the cgroup v2 (or v1) quota when one binds."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _quota(cgroup_root)
    count = cores if quota is None else max(1, min(cores, math.floor(quota)))
    return CpuBudget(usable=count, cores=cores, quota=quota)


def _quota(root: Path) -> float | None:
    try:
        text = (root / "cpu.max").read_text().split()
    except OSError:
        text = []
    if len(text) == 2 and text[0] != "max":
        return _ratio(text[0], text[1])
    try:
        quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
        period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return q / p


def workers(amount: int | str | None, cpus: int) -> int:
    """How many tasks execute at once: a count, a share of `cpus` (`"50%"`), or all of them."""
    if amount is None:
        return max(1, cpus)
    if isinstance(amount, str):
        text = amount.strip()
        share = int(text[:-1]) if text.endswith("%") else None
        if share is None:
            return max(1, int(text))
        return max(1, round(cpus * share / 100))
    return max(1, amount)
