"""The stage table VX_TIMING prints, from an injected clock."""

from __future__ import annotations

from vx.util.stopwatch import Stopwatch


def test_stages_and_total() -> None:
    ticks = iter([0.0, 0.010, 0.040, 0.050])
    watch = Stopwatch(clock=lambda: next(ticks))
    watch.mark("load")
    watch.mark("run")
    watch.mark("record")
    assert watch.table() == (
        "[vx] timing\n"
        "  load         10.0ms   20%\n"
        "  run          30.0ms   60%\n"
        "  record       10.0ms   20%\n"
        "  total        50.0ms\n"
    )
