"""The pure parts of sharding: which shard a run is, the plan digest, and the deal."""

from __future__ import annotations

import pytest

from vx.errors import UserError
from vx.ids import TaskId
from vx.shard.deal import deal
from vx.shard.digest import plan_digest
from vx.shard.spec import resolve_shard


def test_the_flag_wins_over_ci_variables_and_github_names_the_run() -> None:
    env = {"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4", "GITHUB_RUN_ID": "77"}
    spec = resolve_shard("2/5", env)
    assert spec is not None
    assert (spec.number, spec.total, spec.run_id) == (2, 5, "github:77.1")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3", "CI_PIPELINE_ID": "9"}, (1, 3, "gitlab:9")),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "2"}, (1, 2, None)),
        ({"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2", "CIRCLE_WORKFLOW_ID": "w"},
         (2, 2, "circleci:w")),
    ],
)  # fmt: skip
def test_gitlab_counts_from_one_and_circleci_from_zero(
    env: dict[str, str], expected: tuple[int, int, str | None]
) -> None:
    spec = resolve_shard(None, env)
    assert spec is not None
    assert (spec.number, spec.total, spec.run_id) == expected


def test_one_ci_node_is_no_sharding_and_no_node_is_none() -> None:
    assert resolve_shard(None, {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1"}) is None
    assert resolve_shard(None, {}) is None


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0"])
def test_a_bad_shard_is_one_line_naming_the_flag(text: str) -> None:
    with pytest.raises(UserError, match="--shard takes K/N"):
        resolve_shard(text, {})


def test_companion_flags_without_a_shard_are_refused() -> None:
    with pytest.raises(UserError, match="add --shard K/N"):
        resolve_shard(None, {}, run_flag="r1")


def test_the_digest_changes_with_a_key_the_shard_count_or_a_flag() -> None:
    tasks = [(TaskId("a", "build"), "0" * 16, True), (TaskId("b", "build"), "1" * 16, True)]
    base = plan_digest(tasks, shards=4, flags=["force=0"])
    assert plan_digest(list(reversed(tasks)), shards=4, flags=["force=0"]) == base
    edited = [tasks[0], (TaskId("b", "build"), "2" * 16, True)]
    assert plan_digest(edited, shards=4, flags=["force=0"]) != base
    assert plan_digest(tasks, shards=3, flags=["force=0"]) != base
    assert plan_digest(tasks, shards=4, flags=["force=1"]) != base


def ids(*names: str) -> list[TaskId]:
    return [TaskId(n, "build") for n in names]


def test_longest_first_onto_the_least_loaded_shard() -> None:
    tasks = ids("a", "b", "c", "d", "e")
    costs = dict(zip(tasks, [50.0, 40.0, 30.0, 20.0, 10.0], strict=True))
    dealt = deal(tasks, costs, {}, 2)
    assert dealt.loads == (80.0, 70.0)
    assert dealt.tasks_of(0) == tuple(ids("a", "d", "e"))
    assert dealt == deal(list(reversed(tasks)), costs, {}, 2), "the order given changes nothing"


def test_a_connected_group_that_fits_stays_on_one_shard() -> None:
    tasks = ids("lib", "app", "x", "y")
    costs = dict.fromkeys(tasks, 10.0)
    dealt = deal(tasks, costs, {TaskId("app", "build"): ids("lib")}, 2)
    assert dealt.owners[TaskId("app", "build")] == dealt.owners[TaskId("lib", "build")]
    assert dealt.loads == (20.0, 20.0)


def test_a_group_too_big_for_one_shard_is_split_near_its_neighbours() -> None:
    chain = ids(*(f"p{i}" for i in range(8)))
    edges = {t: [chain[i - 1]] for i, t in enumerate(chain) if i}
    dealt = deal(chain, dict.fromkeys(chain, 10.0), edges, 2)
    assert dealt.loads == (40.0, 40.0)
    crossing = sum(dealt.owners[t] != dealt.owners[d] for t, ds in edges.items() for d in ds)
    assert crossing < len(edges) // 2
