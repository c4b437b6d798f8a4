"""`vx.run.remote.download`: which remote hits may keep their outputs remote, and the safety gate."""

from __future__ import annotations

import pytest
from tests.unit.graph.wsbuild import make_ws

from vx.graph.build import build_graph
from vx.ids import TaskId
from vx.run.plan import RunPlan, make_plan
from vx.run.remote.download import Download, deferrable, deferral
from vx.workspace.model import CacheInputs, CacheOutputs, CacheSpec

# lib#build ← app#build; lib#test beside them (it depends on lib#build)
WS = make_ws(
    {"lib": {"build": [], "test": ["build"]}, "app": {"build": ["^build"]}},
    links={"app": ["lib"]},
)
DIST = CacheSpec(CacheInputs(files=("src/**",)), CacheOutputs(files=("dist/**",)))


def plan_with(specs: dict[str, CacheSpec | None], *roots: str) -> RunPlan:
    projects = []
    for p in WS.projects:
        assert p.config is not None
        tasks = {
            name: t._replace(cache_spec=specs.get(f"{p.name}#{name}", DIST))
            for name, t in p.config.tasks.items()
        }
        projects.append(p._replace(config=p.config._replace(tasks=tasks)))
    ws = WS._replace(projects=tuple(projects))
    return make_plan(ws, build_graph(ws, [TaskId.parse(r) for r in roots]))


def names(found: frozenset[TaskId]) -> set[str]:
    return {str(t) for t in found}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Download.ALL, set()),
        (Download.TOPLEVEL, {"lib#build"}),
        (Download.NONE, {"lib#build", "app#build"}),
    ],
)
def test_modes(mode: Download, expected: set[str]) -> None:
    plan = plan_with({}, "app#build")
    assert names(deferrable(plan, mode)) == expected


def test_a_task_whose_outputs_another_task_reads_stays_eager() -> None:
    reads_dist = CacheSpec(CacheInputs(files=("src/**", "dist/**")), CacheOutputs())
    plan = plan_with({"lib#test": reads_dist}, "app#build", "lib#test")
    assert names(deferrable(plan, Download.NONE)) == {"app#build"}


def test_an_uncached_task_reads_its_whole_project() -> None:
    plan = plan_with({"lib#test": None}, "app#build", "lib#test")
    assert names(deferrable(plan, Download.NONE)) == {"app#build"}


def test_a_runtime_input_defers_nothing() -> None:
    probe = CacheSpec(CacheInputs(files=("src/**",), runtime=("node -v",)), CacheOutputs())
    plan = plan_with({"lib#test": probe}, "app#build", "lib#test")
    assert deferrable(plan, Download.NONE) == frozenset()


def test_a_workspace_wide_input_reads_every_project() -> None:
    everything = CacheSpec(CacheInputs(files=(), workspace_files=("**",)), CacheOutputs())
    plan = plan_with({"lib#test": everything}, "app#build", "lib#test")
    assert deferrable(plan, Download.NONE) == frozenset()


def test_the_dry_note_names_what_is_deferred_and_what_is_kept() -> None:
    reads_dist = CacheSpec(CacheInputs(files=("src/**", "dist/**")), CacheOutputs())
    plan = plan_with({"lib#test": reads_dist}, "app#build", "lib#test")
    assert deferral(plan, Download.NONE).note(Download.NONE) == (
        "--download=none: 1 task would keep its outputs remote on a remote hit (app#build);"
        " kept eager: lib#build, which lib#test could read"
    )
    assert deferral(plan, Download.ALL).note(Download.ALL) is None


def test_the_dry_note_names_the_runtime_input_that_stops_deferral() -> None:
    probe = CacheSpec(CacheInputs(files=("src/**",), runtime=("node -v",)), CacheOutputs())
    plan = plan_with({"lib#test": probe}, "app#build", "lib#test")
    assert deferral(plan, Download.TOPLEVEL).note(Download.TOPLEVEL) == (
        "--download=toplevel: nothing keeps its outputs remote — lib#test declares a runtime"
        " input, whose reads vx cannot bound"
    )
