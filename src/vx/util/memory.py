"""How much memory this process may use: the machine's total, capped by a cgroup limit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class MemoryBudget:
    """`usable` is what a run may plan for; `cgroup_limit` is None when no limit binds."""

    usable: int
    total: int
    cgroup_limit: int | None


def memory_budget(
    meminfo: Path = Path("/proc/meminfo"), cgroup_root: Path = Path("/sys/fs/cgroup")
) -> MemoryBudget | None:
    """The machine's MemTotal, capped by cgroup v2 `memory.max` (or v1's limit); None when
    the kernel does not say."""
    total = _meminfo_total(meminfo)
    if total is None:
        return None
    limit = _cgroup_limit(cgroup_root)
    if limit is not None and limit >= total:
        limit = None
    return MemoryBudget(limit if limit is not None else total, total, limit)


def _meminfo_total(path: Path) -> int | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        if name == "MemTotal":
            words = rest.split()
            if words and words[0].isdigit():
                return int(words[0]) * 1024
    return None


def _cgroup_limit(root: Path) -> int | None:
    for path in (root / "memory.max", root / "memory" / "memory.limit_in_bytes"):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            return int(text)
    return None
