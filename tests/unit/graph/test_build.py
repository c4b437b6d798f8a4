"""Task graph construction: edges for each spec shape, default builds, refusals, exclusion."""

from __future__ import annotations

import pytest
from tests.unit.graph.wsbuild import GROUP, make_ws

from vx.errors import ConfigError, CycleError, ErrorCode, UserError
from vx.graph.build import ExcludeDeps, build_graph, default_build
from vx.ids import TaskId
from vx.workspace.model import CacheSpec, Workspace


def ids(*texts: str) -> list[TaskId]:
    return [TaskId.parse(x) for x in texts]


def edges(ws: Workspace, *roots: str, exclude: ExcludeDeps | None = None) -> dict[str, list[str]]:
    g = build_graph(ws, ids(*roots), exclude=exclude)
    return {str(k): [str(d) for d in v] for k, v in g.deps.items()}


MONO = make_ws(
    {
        "app": {
            "build": ["^build", "codegen"],
            "codegen": [],
            "test": ["build", "lib#lint"],
            "ship": ["//#release"],
        },
        "ui": {"build": ["^build"], "lint": []},
        "lib": {"build": [], "lint": []},
        "mono": {"release": []},
    },
    links={"app": ["ui"], "ui": ["lib"]},
    root="mono",
)


@pytest.mark.parametrize(
    ("roots", "expected"),
    [
        (["lib#build"], {"lib#build": []}),
        (
            ["app#build"],
            {
                "app#build": ["app#codegen", "ui#build"],
                "app#codegen": [],
                "lib#build": [],
                "ui#build": ["lib#build"],
            },
        ),
        (
            ["app#test"],
            {
                "app#build": ["app#codegen", "ui#build"],
                "app#codegen": [],
                "app#test": ["app#build", "lib#lint"],
                "lib#build": [],
                "lib#lint": [],
                "ui#build": ["lib#build"],
            },
        ),
        (["app#ship"], {"app#ship": ["mono#release"], "mono#release": []}),
        (["//#release"], {"mono#release": []}),
        (["ui#lint", "lib#lint"], {"lib#lint": [], "ui#lint": []}),
    ],
)
def test_each_spec_shape_makes_its_edges(roots: list[str], expected: dict[str, list[str]]) -> None:
    assert edges(MONO, *roots) == expected


def test_requested_holds_the_roots_named_by_their_project() -> None:
    g = build_graph(MONO, ids("//#release", "app#build"))
    assert g.requested == frozenset(ids("mono#release", "app#build"))
    assert g.dependents[TaskId("lib", "build")] == (TaskId("ui", "build"),)
    assert g.topo_order() == tuple(
        ids("app#codegen", "lib#build", "mono#release", "ui#build", "app#build")
    )


def test_root_order_does_not_change_the_graph() -> None:
    a = build_graph(MONO, ids("app#test", "ui#lint", "app#ship"))
    b = build_graph(MONO, ids("app#ship", "app#test", "ui#lint", "app#test"))
    assert a == b
    assert list(a.nodes) == sorted(a.nodes)


def test_upstream_build_reaches_a_default_build_keyed_on_its_project() -> None:
    ws = make_ws(
        {"app": {"test": ["^build"]}, "icons": {"lint": []}, "bare": None, "core": {"build": []}},
        links={"app": ["icons", "bare"], "icons": ["core"], "bare": ["core"]},
    )
    assert edges(ws, "app#test") == {
        "app#test": ["bare#build", "icons#build"],
        "bare#build": ["core#build"],
        "core#build": [],
        "icons#build": ["core#build"],
    }
    g = build_graph(ws, ids("app#test"))
    for name in ("icons", "bare"):
        node = g.nodes[TaskId(name, "build")]
        assert node.task == default_build()
        assert node.is_group
        assert node.task.default
        assert node.task.cache_spec == CacheSpec()
    assert g.real_deps(TaskId("app", "test")) == (TaskId("core", "build"),)


def test_anchored_build_of_a_project_without_one_is_its_default_build() -> None:
    ws = make_ws({"app": {"pack": ["lib#build"]}, "lib": {"lint": []}})
    g = build_graph(ws, ids("app#pack"))
    assert g.nodes[TaskId("lib", "build")].task.default


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        ({"app": ["bare"], "bare": ["lib"]}, ["lib#lint"]),
        ({"app": ["bare"], "bare": ["bare2"], "bare2": ["lib", "app"]}, ["lib#lint"]),
        ({"app": ["bare", "ui"], "bare": ["ui"], "ui": ["lib"]}, []),
        ({"app": ["ui", "lib"], "ui": ["lib"]}, ["lib#lint"]),
        ({"app": ["ghost"]}, []),
    ],
)
def test_upstream_passes_through_packages_without_a_config(
    links: dict[str, list[str]], expected: list[str]
) -> None:
    ws = make_ws(
        {
            "app": {"lint": ["^lint"]},
            "bare": None,
            "bare2": None,
            "ui": {"build": []},
            "lib": {"lint": []},
        },
        links=links,
    )
    assert edges(ws, "app#lint")["app#lint"] == expected


def test_groups_are_nodes_and_edges_go_through_them() -> None:
    ws = make_ws(
        {
            "app": {
                "ci": [GROUP, "check", "^build"],
                "check": [GROUP, "lint", "test"],
                "lint": [],
                "test": [],
            },
            "lib": {"build": []},
        },
        links={"app": ["lib"]},
    )
    g = build_graph(ws, ids("app#ci"))
    assert g.is_group(TaskId("app", "ci"))
    assert not g.runs(TaskId("app", "check"))
    assert g.runs(TaskId("app", "lint"))
    assert g.real_deps(TaskId("app", "ci")) == tuple(ids("app#lint", "app#test", "lib#build"))
    assert g.run_deps(TaskId("app", "ci")) == g.real_deps(TaskId("app", "ci"))


def test_a_cycle_is_refused_naming_every_task_on_it() -> None:
    ws = make_ws(
        {"app": {"build": ["^build"], "test": ["build"]}, "lib": {"build": ["app#test"]}},
        links={"app": ["lib"]},
    )
    with pytest.raises(CycleError) as info:
        build_graph(ws, ids("app#test"))
    assert info.value.message == (
        "task graph has a cycle: app#build → lib#build → app#test → app#build"
        " — packages/app lists lib in its dependencies;"
        ' packages/lib/vx.config.json: tasks.build.dependsOn lists "app#test";'
        ' packages/app/vx.config.json: tasks.test.dependsOn lists "build";'
        " remove one of these entries"
    )


def test_a_cycle_of_dependson_entries_alone_says_dependson() -> None:
    ws = make_ws({"app": {"build": ["test"], "test": ["build"]}})
    with pytest.raises(CycleError) as info:
        build_graph(ws, ids("app#test"))
    assert info.value.message.endswith("remove one of these dependsOn edges")
    assert 'tasks.test.dependsOn lists "build"' in info.value.message


def test_a_package_cycle_behind_upstream_build_is_a_task_cycle() -> None:
    ws = make_ws({"a": {"build": ["^build"]}, "b": None}, links={"a": ["b"], "b": ["a"]})
    with pytest.raises(CycleError) as info:
        build_graph(ws, ids("a#build"))
    assert info.value.cycle == ("a#build", "b#build")


REFUSALS = make_ws(
    {
        "app": {"build": [], "lint": [], "test": []},
        "ui": {"build": []},
        "empty": {},
    }
)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "uii#build",
            (
                'packages/web/vx.config.json: tasks.go.dependsOn: no project is named uii (in "uii#build");'
                " did you mean ui?"
            ),
        ),
        (
            "zzzzz#build",
            (
                "packages/web/vx.config.json: tasks.go.dependsOn: no project is named zzzzz"
                ' (in "zzzzz#build"); projects: app, empty, ui, web'
            ),
        ),
        (
            "app#tset",
            'packages/web/vx.config.json: tasks.go.dependsOn: app has no task "tset"; did you mean test?',
        ),
        (
            "app#deploy",
            (
                'packages/web/vx.config.json: tasks.go.dependsOn: app has no task "deploy";'
                " app's tasks: build, lint, test"
            ),
        ),
        (
            "empty#gen",
            (
                'packages/web/vx.config.json: tasks.go.dependsOn: empty has no task "gen";'
                " empty declares no tasks"
            ),
        ),
        (
            "deploy",
            (
                'packages/web/vx.config.json: tasks.go.dependsOn: web has no task "deploy";'
                " web's tasks: go"
            ),
        ),
        (
            "//#gen",
            (
                'packages/web/vx.config.json: tasks.go.dependsOn: "//#gen" names the root project,'
                " and this workspace's root is not a project"
            ),
        ),
    ],
)
def test_a_spec_reaching_no_task_names_the_file_and_what_exists(spec: str, message: str) -> None:
    ws = make_ws(
        {
            "app": {"build": [], "lint": [], "test": []},
            "ui": {"build": []},
            "empty": {},
            "web": {"go": [spec]},
        }
    )
    with pytest.raises(UserError) as info:
        build_graph(ws, ids("web#go"))
    assert info.value.code is ErrorCode.UNKNOWN_TASK
    assert info.value.message == message


def test_a_malformed_spec_is_a_config_error_pointing_at_the_entry() -> None:
    ws = make_ws({"web": {"go": ["lint", "^"], "lint": []}})
    with pytest.raises(ConfigError) as info:
        build_graph(ws, ids("web#go"))
    assert info.value.code is ErrorCode.CONFIG
    assert info.value.message == (
        'packages/web/vx.config.json: tasks.go.dependsOn[1]: "^" names no task after ^'
    )


@pytest.mark.parametrize("root", ["app#nope", "ghost#build", "//#build"])
def test_a_root_that_is_no_task_is_refused(root: str) -> None:
    with pytest.raises(UserError) as info:
        build_graph(REFUSALS, ids(root))
    assert info.value.code is ErrorCode.UNKNOWN_TASK
    assert info.value.message == f"{root} is not a task of this workspace"


PIPELINE = make_ws(
    {
        "app": {
            "test": ["gen", "lint"],
            "gen": ["build"],
            "build": ["^build"],
            "lint": [],
            "ci": [GROUP, "test", "lint"],
        },
        "lib": {"build": ["tool#build"]},
        "tool": {"build": []},
    },
    links={"app": ["lib"]},
)


@pytest.mark.parametrize(
    ("roots", "exclude", "excluded"),
    [
        (["app#test"], None, []),
        (["app#test"], ExcludeDeps(), []),
        (
            ["app#test"],
            ExcludeDeps(all=True),
            ["app#build", "app#gen", "app#lint", "lib#build", "tool#build"],
        ),
        (
            ["app#test", "app#build"],
            ExcludeDeps(all=True),
            ["app#gen", "app#lint", "lib#build", "tool#build"],
        ),
        (["app#ci"], ExcludeDeps(all=True), ["app#build", "app#gen", "lib#build", "tool#build"]),
        (["app#test"], ExcludeDeps(names=frozenset({"lint"})), ["app#lint"]),
        (
            ["app#test"],
            ExcludeDeps(names=frozenset({"gen"})),
            ["app#build", "app#gen", "lib#build", "tool#build"],
        ),
        (["app#test", "app#build"], ExcludeDeps(names=frozenset({"gen"})), ["app#gen"]),
        (["app#test", "app#gen"], ExcludeDeps(names=frozenset({"gen"})), []),
        (
            ["app#test"],
            ExcludeDeps(names=frozenset({"build"})),
            ["app#build", "lib#build", "tool#build"],
        ),
    ],
)
def test_exclusion_keeps_dropped_tasks_as_nodes_that_do_not_run(
    roots: list[str], exclude: ExcludeDeps | None, excluded: list[str]
) -> None:
    full = build_graph(PIPELINE, ids(*roots))
    g = build_graph(PIPELINE, ids(*roots), exclude=exclude)
    assert g.deps == full.deps
    assert sorted(str(x) for x in g.excluded) == excluded
    assert all(not g.runs(x) for x in g.excluded)


def test_order_holds_through_a_dropped_task() -> None:
    g = build_graph(
        PIPELINE, ids("app#test", "app#build"), exclude=ExcludeDeps(names=frozenset({"gen"}))
    )
    test, build = TaskId("app", "test"), TaskId("app", "build")
    assert g.run_deps(test) == (build, TaskId("app", "lint"))
    order = g.topo_order()
    assert order.index(build) < order.index(TaskId("app", "gen")) < order.index(test)


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            {"gne"},
            '--exclude-dependencies: no project declares a task named "gne"; did you mean gen?',
        ),
        (
            {"lint", "deploy-prod"},
            (
                '--exclude-dependencies: no project declares a task named "deploy-prod";'
                " tasks: build, ci, gen, lint, test"
            ),
        ),
    ],
)
def test_excluded_names_must_be_declared_somewhere(names: set[str], message: str) -> None:
    with pytest.raises(UserError) as info:
        build_graph(PIPELINE, ids("app#test"), exclude=ExcludeDeps(names=frozenset(names)))
    assert info.value.code is ErrorCode.USAGE
    assert info.value.message == message


def test_subgraph_keeps_requested_and_excluded_within_it() -> None:
    g = build_graph(PIPELINE, ids("app#test"), exclude=ExcludeDeps(names=frozenset({"lint"})))
    sub = g.subgraph(g.upstream(ids("app#gen")) | {TaskId("app", "lint")})
    assert sorted(str(x) for x in sub.nodes) == [
        "app#build",
        "app#gen",
        "app#lint",
        "lib#build",
        "tool#build",
    ]
    assert sub.requested == frozenset()
    assert sub.excluded == frozenset(ids("app#lint"))
    assert g.downstream(ids("lib#build")) == frozenset(
        ids("lib#build", "app#build", "app#gen", "app#test")
    )


def test_a_wide_workspace_builds_without_recursion() -> None:
    n = 1000
    projects: dict[str, dict[str, list[str]] | None] = {
        f"p{i:04}": {"build": ["^build"], "test": ["build"], "lint": []} for i in range(n)
    }
    links = {f"p{i:04}": [f"p{i + 1:04}", f"p{i + 2:04}"] for i in range(n - 2)}
    ws = make_ws(projects, links=links)
    roots = [TaskId(name, t) for name in projects for t in ("test", "lint")]
    g = build_graph(ws, roots)
    assert len(g) == 3 * n
    order = g.topo_order()
    assert order.index(TaskId(f"p{n - 1:04}", "build")) < order.index(TaskId("p0000", "build"))
