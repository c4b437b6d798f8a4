"""Stage timings for `VX_TIMING=1`: where a run's wall time went, in the order it went there."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class Stopwatch:
    """Marks the end of each stage; `table()` renders the stages and their share of the total."""

    clock: Callable[[], float] = time.perf_counter
    stages: list[tuple[str, float]] = field(default_factory=list)
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()
        self._last = self.started

    def mark(self, stage: str) -> None:
        now = self.clock()
        self.stages.append((stage, now - self._last))
        self._last = now

    def table(self) -> str:
        total = sum(seconds for _, seconds in self.stages) or 1e-9
        width = max((len(name) for name, _ in self.stages), default=5)
        lines = ["[vx] timing"]
        for name, seconds in self.stages:
            share = round(100 * seconds / total)
            lines.append(f"  {name:<{width}}  {seconds * 1000:9.1f}ms  {share:3d}%")
        lines.append(f"  {'total':<{width}}  {total * 1000:9.1f}ms")
        return "\n".join(lines) + "\n"
