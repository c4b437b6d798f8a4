"""Graph algorithms over ids: stable order, cycle paths, closures, subgraphs, nearest tasks."""

from __future__ import annotations

import pytest

from vx.errors import CycleError, ErrorCode
from vx.graph import algo
from vx.ids import TaskId


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def graph(edges: dict[str, list[str]]) -> dict[TaskId, tuple[TaskId, ...]]:
    """`{"a#x": ["a#y"]}` → deps; every id named on either side becomes a key."""
    out: dict[TaskId, list[TaskId]] = {}
    for src, dsts in edges.items():
        out.setdefault(t(src), []).extend(t(d) for d in dsts)
        for d in dsts:
            out.setdefault(t(d), [])
    return {k: tuple(v) for k, v in out.items()}


@pytest.mark.parametrize(
    ("edges", "order"),
    [
        ({"a#x": []}, ["a#x"]),
        ({"a#test": ["a#build"], "a#build": []}, ["a#build", "a#test"]),
        (
            {"app#build": ["ui#build", "lib#build"], "ui#build": ["lib#build"]},
            ["lib#build", "ui#build", "app#build"],
        ),
        ({"c#x": [], "b#x": [], "a#x": []}, ["a#x", "b#x", "c#x"]),
        (
            {"z#test": ["z#build"], "a#test": ["a#build"], "a#build": [], "z#build": []},
            ["a#build", "a#test", "z#build", "z#test"],
        ),
        (
            {"app#deploy": ["app#build", "app#test"], "app#test": ["app#build"], "b#x": []},
            ["app#build", "app#test", "app#deploy", "b#x"],
        ),
    ],
)
def test_topo_order_puts_deps_first_and_breaks_ties_by_id(
    edges: dict[str, list[str]], order: list[str]
) -> None:
    deps = graph(edges)
    assert [str(x) for x in algo.topo_order(deps)] == order
    shuffled = dict(reversed(list(deps.items())))
    assert algo.topo_order(shuffled) == algo.topo_order(deps)


@pytest.mark.parametrize(
    ("edges", "cycle"),
    [
        ({"a#x": ["a#x"]}, ["a#x"]),
        ({"a#x": ["a#y"], "a#y": ["a#x"]}, ["a#x", "a#y"]),
        ({"c#x": ["a#x"], "a#x": ["b#x"], "b#x": ["c#x"]}, ["a#x", "b#x", "c#x"]),
        ({"b#x": ["c#x"], "c#x": ["a#x"], "a#x": ["b#x"], "d#x": ["a#x"]}, ["a#x", "b#x", "c#x"]),
        ({"a#x": ["b#x"], "b#x": ["c#x"], "c#x": ["b#x"]}, ["b#x", "c#x"]),
        ({"a#x": ["b#x"], "b#x": []}, []),
    ],
)
def test_find_cycle_names_the_ids_in_edge_order_from_the_smallest(
    edges: dict[str, list[str]], cycle: list[str]
) -> None:
    assert [str(x) for x in algo.find_cycle(graph(edges))] == cycle


def test_topo_order_refuses_a_cycle_naming_every_task_on_it() -> None:
    deps = graph({"app#test": ["app#build"], "app#build": ["ui#build"], "ui#build": ["app#test"]})
    with pytest.raises(CycleError) as info:
        algo.topo_order(deps)
    assert info.value.code is ErrorCode.CYCLE
    assert info.value.cycle == ("app#build", "ui#build", "app#test")
    assert info.value.message == (
        "task graph has a cycle: app#build → ui#build → app#test → app#build"
        " — remove one of these dependsOn edges"
    )


def test_a_long_chain_needs_no_recursion() -> None:
    chain = {f"p{i}#build": [f"p{i + 1}#build"] for i in range(5000)}
    deps = graph(chain)
    assert algo.find_cycle(deps) == ()
    order = algo.topo_order(deps)
    assert order[0] == t("p5000#build")
    assert order[-1] == t("p0#build")
    assert len(algo.closure(deps, [t("p0#build")])) == 5001


@pytest.mark.parametrize(
    ("roots", "reached"),
    [
        (["app#build"], ["app#build", "lib#build", "ui#build"]),
        (["ui#build"], ["lib#build", "ui#build"]),
        (["lib#build", "app#lint"], ["app#lint", "lib#build"]),
        ([], []),
    ],
)
def test_closure_holds_the_roots_and_what_they_reach(roots: list[str], reached: list[str]) -> None:
    deps = graph({"app#build": ["ui#build"], "ui#build": ["lib#build"], "app#lint": []})
    assert sorted(str(x) for x in algo.closure(deps, map(t, roots))) == reached


def test_closure_over_dependants_walks_down() -> None:
    deps = graph({"app#build": ["ui#build"], "ui#build": ["lib#build"], "app#lint": []})
    up = algo.reverse(deps)
    assert up[t("lib#build")] == (t("ui#build"),)
    assert sorted(str(x) for x in algo.closure(up, [t("ui#build")])) == ["app#build", "ui#build"]


def test_subgraph_keeps_only_edges_between_kept_ids() -> None:
    deps = graph({"app#build": ["ui#build", "lib#build"], "ui#build": ["lib#build"]})
    sub = algo.subgraph(deps, [t("app#build"), t("lib#build")])
    assert sub == {t("app#build"): (t("lib#build"),), t("lib#build"): ()}


@pytest.mark.parametrize(
    ("through", "nearest"),
    [
        (set(), ["a#ci"]),
        ({"a#ci"}, ["a#lint", "b#build"]),
        ({"a#ci", "b#build"}, ["a#lint", "c#build"]),
        ({"a#ci", "a#lint", "b#build", "c#build"}, []),
    ],
)
def test_nearest_sees_through_the_ids_it_is_told_to(through: set[str], nearest: list[str]) -> None:
    deps = graph(
        {
            "a#deploy": ["a#ci"],
            "a#ci": ["a#lint", "b#build"],
            "b#build": ["c#build"],
            "c#build": [],
        }
    )
    skip = {t(x) for x in through}
    found = algo.nearest(deps, t("a#deploy"), lambda x: x in skip)
    assert [str(x) for x in found] == nearest
