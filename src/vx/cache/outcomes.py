"""Judging one cache key's recorded outcomes: how often it passed and failed, and whether it flaked.

It sits beside the index that records the outcomes so a run can judge the task it just
finished (the row's `flaky` note) and `vx info` its standing list, by the same rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.events import TaskStatus
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable

HISTORY_MS = 30 * 86_400_000
"""How far back flakiness is judged: what a cache typically keeps."""


class KeyRecord(Record):
    """The outcomes on record for one key: passes, failures (failed attempts of a retried
    pass included), and whether they show a flake."""

    passes: int
    failures: int
    flaky: bool


def judge_key(outcomes: Iterable[tuple[str, int]]) -> KeyRecord:
    """`(status, attempts)` of one key, oldest first → its record.

    A key flaked when it failed after it had passed, or when a pass needed a retry; a failure
    on a key that never passed is a break, and the first pass after only failures a recovery.
    """
    passes = failures = 0
    passed = flaky = False
    for status, attempts in outcomes:
        if status == TaskStatus.SUCCESS:
            passes += 1
            failures += max(0, attempts - 1)
            flaky = flaky or attempts > 1
            passed = True
        elif status == TaskStatus.FAILED:
            failures += 1
            flaky = flaky or passed
    return KeyRecord(passes, failures, flaky)


def judge_run(before: Iterable[tuple[str, int]], status: str, attempts: int) -> KeyRecord:
    """The record of a key as a run that just ended on it leaves it, flaky only when this run
    shows it: it failed after the key had passed, it needed a retry to pass, or it passed on
    a key that had already failed after passing.

    A pass on a key whose only flake is an earlier retried pass proves nothing new, so it
    carries no note; `vx info`'s standing list still counts that key.
    """
    before = list(before)
    earlier = judge_key(before)
    record = judge_key([(status, attempts)])
    passes = earlier.passes + record.passes
    failures = earlier.failures + record.failures
    if status == TaskStatus.FAILED:
        flaky = earlier.passes > 0
    elif status == TaskStatus.SUCCESS:
        flaky = attempts > 1 or _failed_after_pass(before)
    else:
        flaky = False
    return KeyRecord(passes, failures, flaky)


def _failed_after_pass(outcomes: Iterable[tuple[str, int]]) -> bool:
    passed = False
    for status, _ in outcomes:
        if status == TaskStatus.SUCCESS:
            passed = True
        elif status == TaskStatus.FAILED and passed:
            return True
    return False
