"""Request resolution: what each word selects, the exact refusals, forwarded args, surfacing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.unit.graph.wsbuild import GROUP, make_ws

from vx.errors import ErrorCode, UserError
from vx.graph.build import ExcludeDeps, build_graph
from vx.graph.select import ScopeKind, forward_targets, resolve_requests, surfaced_tasks
from vx.ids import TaskId

if TYPE_CHECKING:
    from vx.workspace.model import Workspace

WS = make_ws(
    {
        "web": {"build": [], "test": ["build"], "lint": [], "dev": []},
        "api": {"build": [], "test": [], "deploy": ["build"]},
        "docs": {"build.docs": []},
        "bare": None,
        "mono": {"release": []},
    },
    links={"web": ["api", "bare"]},
    root="mono",
)
NO_ROOT = make_ws({"web": {"build": []}, "api": {"build": []}})
ALL = (None, ScopeKind.ALL)


def cwd(name: str) -> tuple[frozenset[str], ScopeKind]:
    return frozenset({name}), ScopeKind.CWD


def filtered(*names: str) -> tuple[frozenset[str], ScopeKind]:
    return frozenset(names), ScopeKind.FILTER


def affected(*names: str) -> tuple[frozenset[str], ScopeKind]:
    return frozenset(names), ScopeKind.AFFECTED


def resolve(
    words: list[str], scope: tuple[frozenset[str] | None, ScopeKind], ws: Workspace = WS
) -> tuple[list[str], list[str]]:
    sel = resolve_requests(ws, words, scope=scope[0], scope_kind=scope[1])
    assert sel.requested == frozenset(sel.roots)
    assert list(sel.roots) == sorted(sel.roots)
    return [str(t) for t in sel.roots], list(sel.undeclared)


@pytest.mark.parametrize(
    ("words", "scope", "roots"),
    [
        (["build"], cwd("web"), ["web#build"]),
        (["build"], ALL, ["api#build", "web#build"]),
        (["test", "build"], ALL, ["api#build", "api#test", "web#build", "web#test"]),
        (["test"], filtered("api", "docs"), ["api#test"]),
        (["build", "deploy"], filtered("api", "web"), ["api#build", "api#deploy", "web#build"]),
        (["api#deploy"], cwd("web"), ["api#deploy"]),
        (["api#deploy", "lint"], cwd("web"), ["api#deploy", "web#lint"]),
        (["//#release"], cwd("web"), ["mono#release"]),
        (["mono#release"], ALL, ["mono#release"]),
        (["build", "build", "web#build"], cwd("web"), ["web#build"]),
        (["build.docs"], ALL, ["docs#build.docs"]),
        ([], ALL, []),
    ],
)
def test_words_select_their_tasks(
    words: list[str], scope: tuple[frozenset[str] | None, ScopeKind], roots: list[str]
) -> None:
    assert resolve(words, scope) == (roots, [])


@pytest.mark.parametrize(
    ("words", "scope", "roots", "undeclared"),
    [
        (["deploy"], affected("web"), [], ["deploy"]),
        (["build", "deploy"], affected("web"), ["web#build"], ["deploy"]),
        (["deploy", "release"], affected("web", "bare"), [], ["deploy", "release"]),
        (["deploy"], affected("api"), ["api#deploy"], []),
    ],
)
def test_a_diff_chosen_scope_judges_names_against_the_whole_workspace(
    words: list[str],
    scope: tuple[frozenset[str] | None, ScopeKind],
    roots: list[str],
    undeclared: list[str],
) -> None:
    assert resolve(words, scope) == (roots, undeclared)


TASKS = "Tasks: build, build.docs, deploy, dev, lint, release, test."
OUTSIDE = "— pass --all, or name one as pkg#task."


@pytest.mark.parametrize(
    ("words", "scope", "message"),
    [
        (["tset"], ALL, "vx run: no projects declare task(s): tset. Did you mean test?"),
        (["zzzzzz"], ALL, f"vx run: no projects declare task(s): zzzzzz. {TASKS}"),
        (
            ["qqqqqq", "zzzzzz"],
            ALL,
            f"vx run: no projects declare task(s): qqqqqq, zzzzzz. {TASKS}",
        ),
        (
            ["tset", "lnit"],
            ALL,
            (
                "vx run: no projects declare task(s): tset, lnit."
                " Did you mean test (for tset)? Did you mean lint (for lnit)?"
            ),
        ),
        (
            ["deploy"],
            cwd("web"),
            f"vx run: no projects declare task(s): deploy. Only projects outside the selection declare deploy {OUTSIDE}",
        ),
        (
            ["build", "deploy", "release"],
            cwd("web"),
            (
                "vx run: no projects declare task(s): deploy, release."
                f" Only projects outside the selection declare deploy, release {OUTSIDE}"
            ),
        ),
        (
            ["deploy", "tset", "zzzzzz"],
            filtered("web", "docs"),
            (
                "vx run: no projects declare task(s): deploy, tset, zzzzzz."
                " Only projects outside the selection declare deploy"
                " — widen the filter, or name one as pkg#task."
                f" Did you mean test (for tset)? {TASKS}"
            ),
        ),
        (
            ["dpeloy"],
            affected("web"),
            "vx run: no projects declare task(s): dpeloy. Did you mean deploy?",
        ),
        (["zzzzzz"], cwd("web"), f"vx run: no projects declare task(s): zzzzzz. {TASKS}"),
        (
            ["web:build"],
            ALL,
            "vx run: no projects declare task(s): web:build. Did you mean web#build?",
        ),
        (
            ["web:build:production"],
            cwd("api"),
            "vx run: no projects declare task(s): web:build:production. Did you mean web#build?",
        ),
        (
            ["zzz#build"],
            ALL,
            (
                "vx run: no projects declare task(s): zzz#build."
                " No project is named zzz; projects: api, bare, docs, mono, web."
            ),
        ),
        (
            ["web#deploy"],
            ALL,
            "vx run: no projects declare task(s): web#deploy. web's tasks: build, dev, lint, test.",
        ),
        (
            ["webb#build"],
            cwd("api"),
            "vx run: no projects declare task(s): webb#build. Did you mean web#build?",
        ),
        (
            ["web#bulid"],
            ALL,
            "vx run: no projects declare task(s): web#bulid. Did you mean web#build?",
        ),
        (
            ["//#relase"],
            ALL,
            "vx run: no projects declare task(s): //#relase. Did you mean //#release?",
        ),
        (
            ["bare#build"],
            ALL,
            "vx run: no projects declare task(s): bare#build. bare declares no tasks.",
        ),
        (
            ["api#lint", "tset"],
            ALL,
            (
                "vx run: no projects declare task(s): api#lint, tset."
                " api's tasks: build, deploy, test. Did you mean test (for tset)?"
            ),
        ),
    ],
)
def test_names_that_match_nowhere_are_refused_in_one_line(
    words: list[str], scope: tuple[frozenset[str] | None, ScopeKind], message: str
) -> None:
    with pytest.raises(UserError) as info:
        resolve(words, scope)
    assert info.value.code is ErrorCode.UNKNOWN_TASK
    assert info.value.message == message
    assert "\n" not in info.value.message


@pytest.mark.parametrize(
    ("ws", "words", "message"),
    [
        (
            NO_ROOT,
            ["//#build"],
            (
                "vx run: no projects declare task(s): //#build."
                " The workspace root is not a project; projects: api, web."
            ),
        ),
        (
            make_ws({"app": {"test": []}, "lib": None}, links={"app": ["lib"]}),
            ["build"],
            "vx run: no projects declare task(s): build. Tasks: test.",
        ),
        (
            make_ws({"app": {}, "lib": None}),
            ["build"],
            (
                "vx run: no projects declare task(s): build."
                " No project declares a task: add one under tasks in a vx.config, or run vx init."
            ),
        ),
        (
            make_ws({"app": None, "lib": None}),
            ["build"],
            (
                "vx run: no projects declare task(s): build. No package declares a vx.config"
                " — run `vx init` to write a vx.config per package from its package.json scripts."
            ),
        ),
    ],
)
def test_refusals_that_depend_on_the_workspace(
    ws: Workspace, words: list[str], message: str
) -> None:
    with pytest.raises(UserError) as info:
        resolve(words, ALL, ws)
    assert info.value.message == message


def test_the_verb_opens_the_refusal() -> None:
    with pytest.raises(UserError) as info:
        resolve_requests(WS, ["tset"], scope=None, scope_kind=ScopeKind.ALL, verb="vx watch")
    assert info.value.message == "vx watch: no projects declare task(s): tset. Did you mean test?"


@pytest.mark.parametrize("word", ["#build", "web#", "#"])
def test_a_malformed_task_id_is_a_usage_error(word: str) -> None:
    with pytest.raises(UserError) as info:
        resolve([word], ALL)
    assert info.value.code is ErrorCode.USAGE
    assert info.value.message == f'vx run: "{word}" names no task: write TASK, PKG#TASK or //#TASK'


GROUPS = make_ws(
    {
        "web": {
            "build": [GROUP, "build.bun", "codegen", "^build"],
            "build.bun": [GROUP, "build.bun.linux", "build.bun.darwin"],
            "build.bun.linux": ["compile"],
            "build.bun.darwin": ["compile"],
            "compile": [],
            "codegen": [],
            "test": ["build"],
            "ci": [GROUP, "test", "lint"],
            "lint": [],
        },
        "api": {"build": [], "ci": [GROUP, "build"]},
    },
    links={"web": ["api"]},
)


@pytest.mark.parametrize(
    ("roots", "args", "targets"),
    [
        (["web#test"], ["--watch"], ["web#test"]),
        (["web#test", "web#ci"], ["--watch"], ["web#test"]),
        (["web#ci"], [], []),
        (["web#build", "api#build"], ["-v"], ["api#build"]),
    ],
)
def test_forwarded_args_reach_only_requested_tasks_with_a_command(
    roots: list[str], args: list[str], targets: list[str]
) -> None:
    g = build_graph(GROUPS, [TaskId.parse(r) for r in roots])
    assert sorted(str(t) for t in forward_targets(g, args)) == targets


@pytest.mark.parametrize(
    ("roots", "message"),
    [
        (["web#ci"], "args after `--` reach no task: web#ci is a group (no command)"),
        (
            ["web#ci", "api#ci"],
            "args after `--` reach no task: api#ci, web#ci are groups (no command)",
        ),
    ],
)
def test_forwarded_args_to_groups_alone_are_refused(roots: list[str], message: str) -> None:
    g = build_graph(GROUPS, [TaskId.parse(r) for r in roots])
    with pytest.raises(UserError) as info:
        forward_targets(g, ["--watch"])
    assert info.value.code is ErrorCode.USAGE
    assert info.value.message == message


@pytest.mark.parametrize(
    ("roots", "exclude", "surfaced"),
    [
        (["web#lint"], None, ["web#lint"]),
        (
            ["web#build"],
            None,
            ["web#build.bun.darwin", "web#build.bun.linux", "web#codegen"],
        ),
        (
            ["web#ci"],
            None,
            ["web#lint", "web#test"],
        ),
        (
            ["web#build", "web#lint"],
            None,
            ["web#build.bun.darwin", "web#build.bun.linux", "web#codegen", "web#lint"],
        ),
        (["api#ci"], None, ["api#build"]),
        (
            ["web#build"],
            ExcludeDeps(names=frozenset({"build.bun"})),
            ["web#codegen"],
        ),
        (
            ["web#build"],
            ExcludeDeps(all=True),
            ["web#build.bun.darwin", "web#build.bun.linux", "web#codegen"],
        ),
    ],
)
def test_a_requested_group_surfaces_the_real_tasks_of_its_project(
    roots: list[str], exclude: ExcludeDeps | None, surfaced: list[str]
) -> None:
    g = build_graph(GROUPS, [TaskId.parse(r) for r in roots], exclude=exclude)
    assert sorted(str(t) for t in surfaced_tasks(g)) == surfaced
    assert g.requested == frozenset(TaskId.parse(r) for r in roots)
