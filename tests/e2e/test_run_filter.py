"""`--filter` end to end: every DSL form through `vx run` and `vx show`, and every refusal's words.

The workspace has scopes, tags, nested dirs, a cross-project dependsOn edge (e2e#test needs
web#build), a root project and a member reached through a symlink.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, write_tree
from tests.e2e.runws import package

if TYPE_CHECKING:
    from pathlib import Path

BUILD = {"build": {"exec": "echo build"}}
ALL = {"//", "@acme/ui", "@acme/core", "lib", "sub", "web", "docs", "e2e", "kit"}
SHARED = {"@acme/ui", "@acme/core"}


def member(name: str, deps: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "package.json": package(name, deps),
        "vx.config.json": {"tags": list(tags), "tasks": BUILD},
    }


MEMBERS = {
    "packages/ui": member("@acme/ui", ("@acme/core",), ("scope:shared",)),
    "packages/core": member("@acme/core", (), ("scope:shared",)),
    "packages/lib": member("lib"),
    "packages/lib/sub": member("sub", ("lib",)),
    "apps/web": member("web", ("@acme/ui",), ("scope:web",)),
    "apps/docs": member("docs", ("lib",)),
    "apps/e2e": member("e2e"),
    "vendor/kit": member("kit"),
}


def files() -> dict[str, Any]:
    out: dict[str, Any] = {
        "package.json": {
            "name": "root",
            "private": True,
            "workspaces": ["apps/*", "packages/*", "packages/lib/sub"],
        },
        "vx.config.json": {"tasks": BUILD},
    }
    for rel, parts in MEMBERS.items():
        for name, content in parts.items():
            out[f"{rel}/{name}"] = content
        out[f"{rel}/src/index.txt"] = f"{rel}\n"
    out["apps/e2e/vx.config.json"] = {
        "tasks": {**BUILD, "test": {"dependsOn": ["web#build"], "exec": "echo e2e"}}
    }
    return out


@pytest.fixture
def ws(workspace) -> Path:
    root = workspace(files(), commit=False)
    (root / "packages/kit").symlink_to("../vendor/kit")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def shown(vx, root: Path, *filters: str, task: tuple[str, ...] = ()) -> set[str]:
    args = ["show", *task, "--format", "json"]
    for f in filters:
        args += ["--filter", f]
    doc = vx(args, root).assert_ok().json()
    return {entry["name"] for entry in doc}


def ran(vx, root: Path, *filters: str, task: str = "build", cwd: Path | None = None) -> set[str]:
    args = ["run", task, "--exclude-dependencies", "--format", "json"]
    for f in filters:
        args += ["--filter", f]
    doc = vx(args, cwd or root).assert_ok().json()
    return {row["project"] for row in doc["tasks"]}


FORMS = [
    (("web",), {"web"}),
    (("@acme/*",), SHARED),
    (("@acme*",), SHARED),  # `*` runs across the `/`
    (("ui",), {"@acme/ui"}),  # the scope left out
    (("apps/*",), {"web", "docs", "e2e"}),  # a name with a `/` that matches none is a dir
    (("./apps/web",), {"web"}),
    (("{packages/lib}",), {"lib"}),
    (("./apps",), {"web", "docs", "e2e"}),  # no project there: the projects under it
    (("./packages/*",), {"@acme/ui", "@acme/core", "lib", "kit"}),
    (("{packages/lib/**}",), {"lib", "sub"}),  # a trailing ** matches zero dirs too
    (("./packages/kit",), {"kit"}),  # the symlinked member, by its link
    (("./vendor/kit",), {"kit"}),  # and by where it points
    ((".",), {"//"}),
    (("//",), {"//"}),
    (("tag:scope:*",), {"@acme/ui", "@acme/core", "web"}),
    (("web...",), {"web", "@acme/ui", "@acme/core"}),
    (("web^...",), SHARED),
    (("...@acme/core",), {"@acme/core", "@acme/ui", "web", "e2e"}),  # e2e via web#build
    (("...^lib",), {"sub", "docs"}),
    (("...web",), {"web", "e2e"}),
    (("...ui...",), {"@acme/ui", "@acme/core", "web", "e2e"}),
    (("*", "!tag:scope:shared", "!//"), ALL - SHARED - {"//"}),
    (("!docs",), ALL - {"docs"}),
    (("!web", "...@acme/core"), {"@acme/core", "@acme/ui", "e2e"}),  # excludes go last
]


@pytest.mark.parametrize(("filters", "expected"), FORMS, ids=[" ".join(f) for f, _ in FORMS])
def test_each_form_selects_in_run_and_show(vx, ws, filters, expected) -> None:
    assert shown(vx, ws, *filters) == expected
    assert ran(vx, ws, *filters) == expected


def test_all_with_a_filter_is_the_filter(vx, ws) -> None:
    r = vx(
        ["run", "build", "--all", "--filter", "!docs", "--exclude-dependencies", "--format=json"],
        ws,
    )
    assert {row["project"] for row in r.assert_ok().json()["tasks"]} == ALL - {"docs"}


def test_a_filter_replaces_the_cwd_scope(vx, ws) -> None:
    assert ran(vx, ws, "lib", cwd=ws / "apps/web") == {"lib"}


def test_a_dependents_walk_follows_dependson_for_the_task(vx, ws) -> None:
    assert ran(vx, ws, "...web", task="test") == {"e2e"}
    assert shown(vx, ws, "...web", task=("test",)) == {"e2e"}


def test_pkg_task_words_ignore_the_filter(vx, ws) -> None:
    r = vx(["run", "lib#build", "--filter", "web", "--format=json"], ws).assert_ok()
    assert {row["id"] for row in r.json()["tasks"]} == {"lib#build"}


REFUSALS = [
    (["wbe"], "no projects matched filter(s): wbe. Did you mean web?"),
    (["coer"], "no projects matched filter(s): coer. Did you mean @acme/core?"),
    (["zzzzzz"], "no projects matched filter(s): zzzzzz. Projects: //, @acme/core, @acme/ui, docs, e2e, kit, lib, sub and 1 more."),
    (["tag:scope:wbe"], "no projects matched filter(s): tag:scope:wbe. Did you mean tag:scope:web?"),
    (["tag:zzzzzz"], "no projects matched filter(s): tag:zzzzzz. Tags: scope:shared, scope:web."),
    (["./nope/x"], "no projects matched filter(s): ./nope/x. Project dirs: apps/docs, apps/e2e, apps/web, packages/core, packages/kit, packages/lib, packages/lib/sub, packages/ui and 1 more."),
    (["wbe", "!dcos"], "no projects matched filter(s): wbe, !dcos. Did you mean web (for wbe)? Did you mean docs (for !dcos)?"),
    (["web", "!web..."], "no projects selected: !web... excluded every project the other filters matched"),
    (["...^e2e"], 'no projects selected: filter "...^e2e" matched e2e, and no project depends on it'),
    (["lib^..."], 'no projects selected: filter "lib^..." matched lib, and it depends on no project'),
    (["..."], '--filter "..." names no project: write a name, tag:<tag>, ./<dir> or [<ref>] beside the operators'),
    (["!"], '--filter "!" names no project: write a name, tag:<tag>, ./<dir> or [<ref>] beside the operators'),
    (["[]"], '--filter "[]": the git ref is empty — name a branch, tag or commit (main)'),
    (["[--output=x]"], '--filter "[--output=x]": "--output=x" starts with "-", which git would read as an option — name a branch, tag or commit'),
    (["[HEAD~1..HEAD~0]"], '--filter "[HEAD~1..HEAD~0]": "HEAD~1..HEAD~0" is a range; ranges are not supported — pass the base alone ("HEAD~1"): vx compares it with the work tree'),
    (["[^main]"], '--filter "[^main]": "^main" is an exclusion — pass the base alone ("main")'),
    (["[main:apps]"], '--filter "[main:apps]": "main:apps" names a path inside a commit — pass the commit alone ("main")'),
    (["[nope]"], 'git ref "nope" did not resolve'),
]  # fmt: skip


@pytest.mark.parametrize(("filters", "line"), REFUSALS, ids=[" ".join(f) for f, _ in REFUSALS])
def test_refusals(vx, ws, filters, line) -> None:
    args = ["run", "build"]
    for f in filters:
        args += ["--filter", f]
    r = vx(args, ws).assert_code(1)
    assert r.err.strip().splitlines() == [line], r
    s = vx(["show", *args[2:]], ws).assert_code(1)
    assert s.err.strip().splitlines() == [line], s


def test_show_refuses_a_filter_beside_one_project_or_task(vx, ws) -> None:
    r = vx(["show", "web", "--filter", "lib"], ws).assert_code(1)
    assert (
        r.err.strip()
        == "vx show: --filter narrows a list; web is one project — drop --filter, or name a task"
    )
    r = vx(["show", "web#build", "--filter", "lib"], ws).assert_code(1)
    assert (
        r.err.strip()
        == "vx show: --filter narrows a list; web#build is one task already — drop --filter"
    )
    r = vx(["show", "test", "--filter", "lib"], ws).assert_code(1)
    assert (
        r.err.strip() == 'vx show: no project the filters select declares "test"; declared by: e2e'
    )


@pytest.fixture
def changed(ws: Path) -> Path:
    """Two commits (core changed in the second), then lib edited and docs given a new file."""
    write_tree(ws, {"packages/core/src/index.txt": "core two\n"})
    git(ws, "commit", "-q", "-am", "two")
    write_tree(ws, {"packages/lib/src/index.txt": "lib edited\n", "apps/docs/new.txt": "new\n"})
    return ws


REF_FORMS = [
    (("[HEAD~1]",), {"@acme/core", "lib", "docs"}),
    (("[HEAD]",), {"lib", "docs"}),  # uncommitted and untracked
    (("...[HEAD~1]",), {"@acme/core", "@acme/ui", "web", "e2e", "lib", "sub", "docs"}),
    (("@acme/*[HEAD~1]",), {"@acme/core"}),
    (("web...[HEAD~1]",), {"web"}),  # its dependency changed; nothing is added
    (("web^...[HEAD~1]",), {"web"}),
    (("{apps}[HEAD]",), {"docs"}),
    (("tag:scope:shared[HEAD~1]",), {"@acme/core"}),
    (("*", "![HEAD]"), ALL - {"lib", "docs"}),
    (("[HEAD~1...HEAD]",), {"@acme/core", "lib", "docs"}),
]


@pytest.mark.parametrize(
    ("filters", "expected"), REF_FORMS, ids=[" ".join(f) for f, _ in REF_FORMS]
)
def test_ref_forms(vx, changed, filters, expected) -> None:
    assert shown(vx, changed, *filters) == expected
    assert ran(vx, changed, *filters) == expected


def test_a_ref_that_selects_nothing_runs_nothing_and_says_so(vx, changed) -> None:
    r = vx(["run", "build", "--filter", "web...[HEAD]"], changed).assert_ok()
    assert "[vx] no project selected: nothing the filters name changed since HEAD" in r.err
    assert "#build" not in r.out
    assert shown(vx, changed, "web...[HEAD]") == set()


def test_the_diff_runs_from_the_merge_base(vx, ws) -> None:
    git(ws, "checkout", "-q", "-b", "feature")
    write_tree(ws, {"packages/core/src/index.txt": "feature\n"})
    git(ws, "commit", "-q", "-am", "feature")
    git(ws, "checkout", "-q", "main")
    write_tree(ws, {"apps/web/src/index.txt": "main moved on\n"})
    git(ws, "commit", "-q", "-am", "main")
    git(ws, "checkout", "-q", "feature")
    assert shown(vx, ws, "[main]") == {"@acme/core"}
    assert shown(vx, ws, "[main..HEAD]") == {"@acme/core", "web"}  # two dots: from main itself


def test_a_task_only_unselected_projects_declare_is_refused(vx, ws) -> None:
    r = vx(["run", "test", "--filter", "web"], ws).assert_code(1)
    assert r.err.strip() == (
        "vx run: no projects declare task(s): test. Only projects outside the selection"
        " declare test — widen the filter, or name one as pkg#task."
    )


def test_the_picker_offers_only_the_selected_projects(vx, ws) -> None:
    r = vx(["run", "--filter", "...web"], ws).assert_code(1)
    assert r.err.strip() == (
        "missing task name (stdin is not a TTY, so no picker; tasks here: e2e#build, e2e#test,"
        " web#build)"
    )


def test_no_task_and_a_ref_that_selects_nothing_exits_0(vx, changed) -> None:
    r = vx(["run", "--filter", "web[HEAD]"], changed).assert_ok()
    assert "nothing the filters name changed since HEAD" in r.err
