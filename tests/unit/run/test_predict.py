"""`vx.run.predict`: each task's predicted status, and the forecast of a plan's cost."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from tests.unit.graph.wsbuild import GROUP, make_ws

from vx.events import PlanStatus
from vx.graph.build import ExcludeDeps, build_graph
from vx.ids import TaskId
from vx.run.cachespec import resolve_axes
from vx.run.keys import KeySet
from vx.run.plan import RunPlan, make_plan
from vx.run.predict import predict
from vx.workspace.model import CacheSpec

HIT, MISS, NONE = PlanStatus.HIT_LOCAL, PlanStatus.MISS, PlanStatus.NO_CACHE
GRP, EXCL = PlanStatus.GROUP, PlanStatus.EXCLUDED

# lib#build ← app#build ← app#ci (a group); app#lint uncached, beside app#build
WS = make_ws(
    {
        "lib": {"build": []},
        "app": {"build": ["^build"], "lint": [], "ci": [GROUP, "build", "lint"]},
    },
    links={"app": ["lib"]},
)
CACHED = frozenset({"lib#build", "app#build"})


def plan_of(*roots: str, exclude: ExcludeDeps | None = None) -> tuple[RunPlan, KeySet]:
    ws = WS._replace(
        projects=tuple(
            p._replace(
                config=p.config._replace(
                    tasks={
                        name: t._replace(
                            cache_spec=CacheSpec() if f"{p.name}#{name}" in CACHED else None
                        )
                        for name, t in p.config.tasks.items()
                    },
                ),
            )
            for p in WS.projects
            if p.config is not None
        ),
    )
    plan = make_plan(ws, build_graph(ws, [TaskId.parse(r) for r in roots], exclude=exclude))
    keys = KeySet(MappingProxyType({t: f"key-{t}" for t in plan.order}), MappingProxyType({}))
    return plan, keys


@pytest.mark.parametrize(
    ("spec", "no_cache", "force", "expected"),
    [
        (None, False, False, {"lib#build": HIT, "app#build": MISS, "app#lint": NONE}),
        (None, False, True, {"lib#build": MISS, "app#build": MISS, "app#lint": NONE}),
        ("local:r", False, False, {"lib#build": HIT, "app#build": MISS, "app#lint": NONE}),
        ("local:w", False, False, {"lib#build": MISS, "app#build": MISS, "app#lint": NONE}),
        ("local:", False, False, {"lib#build": NONE, "app#build": NONE, "app#lint": NONE}),
        (None, True, False, {"lib#build": NONE, "app#build": NONE, "app#lint": NONE}),
    ],
    ids=["default", "force", "read-only", "write-only", "local-off", "no-cache"],
)
def test_the_status_follows_the_cache_axes(spec, no_cache, force, expected) -> None:
    plan, keys = plan_of("app#ci")
    axes = resolve_axes(spec, no_cache=no_cache, force=force)
    planned = predict(plan, keys, axes, has_entry=lambda key: key == "key-lib#build", history={})
    assert planned.predictions is not None
    got = {str(t): p.status for t, p in planned.predictions.items()}
    assert got == {**expected, "app#ci": GRP}
    assert planned.keys is keys
    assert planned.axes == axes


def test_an_excluded_dependency_is_keyed_and_excluded() -> None:
    plan, keys = plan_of("app#build", exclude=ExcludeDeps(all=True))
    planned = predict(
        plan,
        keys,
        resolve_axes(None, no_cache=False, force=False),
        has_entry=lambda _key: True,
        history={},
    )
    assert planned.predictions is not None
    got = {str(t): p.status for t, p in planned.predictions.items()}
    assert got == {"lib#build": EXCL, "app#build": HIT}
    assert planned.keys is not None
    assert set(planned.keys.keys) == set(plan.order)


def test_the_forecast_is_the_longest_would_run_chain() -> None:
    plan, keys = plan_of("app#ci")
    history = {
        ("lib", "build"): (100.0, 300.0, 200.0),  # p50 200
        ("app", "build"): (50.0,),
        ("app", "lint"): (400.0, 500.0),  # p50 450
    }
    planned = predict(
        plan,
        keys,
        resolve_axes(None, no_cache=False, force=False),
        has_entry=lambda _key: False,
        history=history,
    )
    assert planned.predictions is not None
    p50 = {str(t): p.p50_ms for t, p in planned.predictions.items()}
    assert p50 == {"lib#build": 200.0, "app#build": 50.0, "app#lint": 450.0, "app#ci": None}
    outlook = planned.forecast
    assert outlook is not None
    assert (outlook.wall_ms, outlook.work_ms, outlook.unknown) == (450.0, 700.0, 0)
    assert [str(t) for t in outlook.critical_path] == ["app#lint"]


def test_hits_weigh_nothing_and_tasks_without_history_are_counted() -> None:
    plan, keys = plan_of("app#ci")
    history = {("lib", "build"): (900.0,), ("app", "build"): (50.0,)}
    planned = predict(
        plan,
        keys,
        resolve_axes(None, no_cache=False, force=False),
        has_entry=lambda key: key == "key-lib#build",
        history=history,
    )
    assert planned.predictions is not None
    assert planned.predictions[TaskId("lib", "build")].p50_ms == 900.0  # a hit keeps its p50
    outlook = planned.forecast
    assert outlook is not None
    assert (outlook.wall_ms, outlook.work_ms, outlook.unknown) == (50.0, 50.0, 1)
    assert [str(t) for t in outlook.critical_path] == ["app#build"]


def test_a_chain_through_dependencies_lists_them_first() -> None:
    plan, keys = plan_of("app#build")
    history = {("lib", "build"): (30.0,), ("app", "build"): (20.0,)}
    planned = predict(
        plan,
        keys,
        resolve_axes(None, no_cache=False, force=False),
        has_entry=lambda _key: False,
        history=history,
    )
    outlook = planned.forecast
    assert outlook is not None
    assert outlook.wall_ms == 50.0
    assert [str(t) for t in outlook.critical_path] == ["lib#build", "app#build"]


def test_no_readable_history_no_forecast() -> None:
    plan, keys = plan_of("app#build")
    planned = predict(
        plan,
        keys,
        resolve_axes(None, no_cache=False, force=False),
        has_entry=lambda _key: False,
        history=None,
    )
    assert planned.forecast is None
    assert planned.predictions is not None
    assert all(p.p50_ms is None for p in planned.predictions.values())
