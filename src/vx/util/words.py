"""How a duration and a failed exit read: the same words in a terminal row and a run report."""

from __future__ import annotations

import math
import signal


def format_duration(ms: float) -> str:
    """`4ms` under a second, `5.20s` under a minute, then `1m 3s`, and `2h 5m` past an hour."""
    ms = max(ms, 0.0)
    if ms < 999.5:
        return f"{math.floor(ms + 0.5)}ms"
    if ms < 59_995:
        return f"{ms / 1000:.2f}s"
    seconds = math.floor(ms / 1000 + 0.5)
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60}m"


def exit_detail(exit_code: int | None, *, reason: str | None, timed_out: bool) -> str:
    """What a failure's label holds in parentheses: `exit 1`, `exit 137, 128 + SIGKILL`, …

    A negative code is the signal a child died of, read as the shell would report it.
    """
    code = exit_code
    if code is not None and code < 0:
        code = 128 - code
    parts: list[str] = []
    if reason:
        parts.append(reason)
    elif timed_out:
        parts.append("timed out")
    if code is not None:
        exit_text = f"exit {code}"
        if code > 128 and not timed_out:
            exit_text += f", 128 + {_signal_name(code - 128)}"
        parts.append(exit_text)
    return ", ".join(parts)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
