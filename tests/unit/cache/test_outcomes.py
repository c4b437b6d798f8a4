"""A key's outcomes judged: the standing verdict `vx info` lists and a finished run's note."""

from __future__ import annotations

import pytest

from vx.cache.outcomes import KeyRecord, judge_key, judge_run

OK, FAIL = "success", "failed"


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], KeyRecord(0, 0, flaky=False)),
        ([(OK, 1), (OK, 1)], KeyRecord(2, 0, flaky=False)),
        ([(FAIL, 1), (FAIL, 1)], KeyRecord(0, 2, flaky=False)),  # a break
        ([(FAIL, 1), (OK, 1)], KeyRecord(1, 1, flaky=False)),  # a recovery
        ([(OK, 1), (FAIL, 1)], KeyRecord(1, 1, flaky=True)),  # red after green
        ([(OK, 3)], KeyRecord(1, 2, flaky=True)),  # a pass that took two retries
        ([(FAIL, 2)], KeyRecord(0, 1, flaky=False)),  # retried and still red: a break
        ([(OK, 1), ("skipped", 1), ("aborted", 1)], KeyRecord(1, 0, flaky=False)),
    ],
)
def test_judge_key(outcomes, expected):
    assert judge_key(outcomes) == expected


@pytest.mark.parametrize(
    ("before", "status", "attempts", "expected"),
    [
        ([], OK, 1, KeyRecord(1, 0, flaky=False)),
        ([], FAIL, 1, KeyRecord(0, 1, flaky=False)),
        ([(OK, 1), (OK, 1)], FAIL, 1, KeyRecord(2, 1, flaky=True)),
        ([], OK, 2, KeyRecord(1, 1, flaky=True)),
        ([(FAIL, 1)], OK, 1, KeyRecord(1, 1, flaky=False)),
        ([(OK, 1), (FAIL, 1)], OK, 1, KeyRecord(2, 1, flaky=True)),
        # an earlier retried pass proves nothing about this plain pass
        ([(OK, 2)], OK, 1, KeyRecord(2, 1, flaky=False)),
        ([(OK, 1)], "aborted", 1, KeyRecord(1, 0, flaky=False)),
    ],
)
def test_judge_run(before, status, attempts, expected):
    assert judge_run(iter(before), status, attempts) == expected
