"""Critical-path priorities: estimated costs, and the longest chain each task heads."""

from __future__ import annotations

import pytest

from vx.graph import algo
from vx.graph.critical import UNKNOWN_MS, estimate_costs, longest_remaining
from vx.ids import TaskId


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def graph(edges: dict[str, list[str]]) -> dict[TaskId, tuple[TaskId, ...]]:
    """`{"b#x": ["a#x"]}`: b#x depends on a#x; every id named on either side is a key."""
    out: dict[TaskId, list[TaskId]] = {}
    for src, dsts in edges.items():
        out.setdefault(t(src), []).extend(t(d) for d in dsts)
        for d in dsts:
            out.setdefault(t(d), [])
    return {k: tuple(v) for k, v in out.items()}


@pytest.mark.parametrize(
    ("edges", "costs", "expected"),
    [
        ({}, {}, {}),
        ({"a#x": []}, {"a#x": 7}, {"a#x": 7}),
        # a chain: each task carries everything after it
        (
            {"a#x": [], "b#x": ["a#x"], "c#x": ["b#x"]},
            {"a#x": 1, "b#x": 2, "c#x": 3},
            {"a#x": 6, "b#x": 5, "c#x": 3},
        ),
        # a diamond: the costlier branch decides, not the sum of both
        (
            {"a#x": [], "b#x": ["a#x"], "c#x": ["a#x"], "d#x": ["b#x", "c#x"]},
            {"a#x": 1, "b#x": 5, "c#x": 2, "d#x": 1},
            {"a#x": 7, "b#x": 6, "c#x": 3, "d#x": 1},
        ),
        # a node without a cost (group, restore) passes its chain through at no cost
        (
            {"a#x": [], "a#all": ["a#x"], "b#x": ["a#all"]},
            {"a#x": 2, "b#x": 3},
            {"a#x": 5, "a#all": 3, "b#x": 3},
        ),
        # a leaf beside a long chain: the chain's head outranks the leaf
        (
            {"a#lint": [], "b#build": [], "c#build": ["b#build"], "d#build": ["c#build"]},
            {"a#lint": 50, "b#build": 20, "c#build": 20, "d#build": 20},
            {"a#lint": 50, "b#build": 60, "c#build": 40, "d#build": 20},
        ),
        # one slow task outranks a longer chain of quick ones
        (
            {"a#x": [], "b#x": ["a#x"], "c#x": ["b#x"], "z#slow": []},
            {"a#x": 1, "b#x": 1, "c#x": 1, "z#slow": 10},
            {"a#x": 3, "b#x": 2, "c#x": 1, "z#slow": 10},
        ),
        # a shared dependency takes its longest dependant's chain
        (
            {"a#x": [], "b#x": ["a#x"], "c#x": ["a#x"], "d#x": ["c#x"]},
            {"a#x": 1, "b#x": 9, "c#x": 4, "d#x": 4},
            {"a#x": 10, "b#x": 9, "c#x": 8, "d#x": 4},
        ),
    ],
)
def test_longest_remaining(edges, costs, expected) -> None:
    deps = graph(edges)
    order = algo.topo_order(deps)
    got = longest_remaining(order, deps, {t(k): float(v) for k, v in costs.items()})
    assert got == {t(k): float(v) for k, v in expected.items()}


def test_a_long_chain_meets_no_recursion_limit() -> None:
    n = 5000
    deps = {t(f"p{i:05d}#x"): ((t(f"p{i - 1:05d}#x"),) if i else ()) for i in range(n)}
    order = algo.topo_order(deps)
    got = longest_remaining(order, deps, dict.fromkeys(deps, 1.0))
    assert got[t("p00000#x")] == n


@pytest.mark.parametrize(
    ("executing", "known", "expected"),
    [
        ([], {}, {}),
        # every duration recorded: used as is
        (["a#build", "b#test"], {"a#build": 30, "b#test": 4}, {"a#build": 30, "b#test": 4}),
        # nothing recorded: one constant, so chains weigh by their length
        (["a#build", "b#test"], {}, {"a#build": UNKNOWN_MS, "b#test": UNKNOWN_MS}),
        # unknown: the median of the same name (odd count) ...
        (
            ["a#build", "b#build", "c#build", "d#build", "e#lint"],
            {"a#build": 10, "b#build": 40, "c#build": 90, "e#lint": 1},
            {"a#build": 10, "b#build": 40, "c#build": 90, "d#build": 40, "e#lint": 1},
        ),
        # ... (even count: the mean of the middle two) ...
        (
            ["a#build", "b#build", "c#build"],
            {"a#build": 10, "b#build": 30},
            {"a#build": 10, "b#build": 30, "c#build": 20},
        ),
        # ... else the median of the whole run
        (
            ["a#build", "b#lint", "c#test", "d#gen"],
            {"a#build": 100, "b#lint": 2, "c#test": 6},
            {"a#build": 100, "b#lint": 2, "c#test": 6, "d#gen": 6},
        ),
        # a recorded duration of a task that does not execute this run counts for nothing
        (
            ["a#build", "b#test"],
            {"a#build": 8, "z#test": 1000},
            {"a#build": 8, "b#test": 8},
        ),
        # a zero is a duration like any other
        (["a#x", "b#x"], {"a#x": 0}, {"a#x": 0, "b#x": 0}),
    ],
)
def test_estimate_costs(executing, known, expected) -> None:
    got = estimate_costs([t(e) for e in executing], {t(k): float(v) for k, v in known.items()})
    assert got == {t(k): float(v) for k, v in expected.items()}
    assert list(got) == [t(e) for e in executing]
