"""`vx info`'s flaky list: keys judged one by one, then summed per task, most failures first."""

from __future__ import annotations

from vx.history.flaky import FlakyTask, flaky_tasks

OK, FAIL = "success", "failed"


def test_flaky_tasks_sum_their_flaky_keys_only():
    rows = [
        ("a", "test", "k1", OK, 1),
        ("a", "test", "k1", FAIL, 1),  # k1 flaked
        ("a", "test", "k2", FAIL, 1),  # k2 is a break: not counted
        ("a", "test", "k3", OK, 2),  # a retried pass
        ("b", "e2e", "k4", OK, 1),
        ("b", "e2e", "k4", FAIL, 1),
        ("b", "e2e", "k4", FAIL, 1),
        ("b", "e2e", "k4", FAIL, 1),
        ("c", "lint", "k5", FAIL, 1),
        ("c", "lint", "k5", OK, 1),  # a recovery
    ]
    assert flaky_tasks(rows) == (
        FlakyTask("b", "e2e", keys=1, passes=1, failures=3),
        FlakyTask("a", "test", keys=2, passes=2, failures=2),
    )
    assert flaky_tasks(rows)[0].task_id == "b#e2e"


def test_ties_order_by_id():
    rows = [(p, "t", "k", s, 1) for p in ("z", "m") for s in (OK, FAIL)]
    assert [f.task_id for f in flaky_tasks(rows)] == ["m#t", "z#t"]
