"""Stage timings for `VX_TIMING=1`: where a run's wall time went, in the order it went there."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class Stopwatch:
    """Marks the end of each stage; `table()` renders the stages and their share of the total."""

    __slots__ = ("_last", "clock", "stages", "started")

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.stages: list[tuple[str, float]] = []
        self.started = clock()
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
