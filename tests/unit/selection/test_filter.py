"""The --filter DSL: parsing (round trips, refusals) and evaluation over a model workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from vx.errors import ErrorCode, UserError
from vx.selection.filter import Kind, Selector, evaluate, parse_filter, parse_filters
from vx.workspace.model import Manager, Project, ProjectConfig, Workspace

ROOT = Path("/ws")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("app", Selector(Kind.NAME, "app")),
        ("@acme/*", Selector(Kind.NAME, "@acme/*")),
        ("tag:scope:web", Selector(Kind.TAG, "scope:web")),
        ("./apps/web", Selector(Kind.DIR, "apps/web")),
        ("{apps/web}", Selector(Kind.DIR, "apps/web")),
        ("./packages/**", Selector(Kind.DIR, "packages/**")),
        ("./packages/[abc]", Selector(Kind.DIR, "packages/[abc]")),
        (".", Selector(Kind.DIR, ".")),
        ("//", Selector(Kind.ROOT)),
        ("app...", Selector(Kind.NAME, "app", dependencies=True)),
        ("...app", Selector(Kind.NAME, "app", dependents=True)),
        ("app^...", Selector(Kind.NAME, "app", dependencies=True, only_dependencies=True)),
        ("...^app", Selector(Kind.NAME, "app", dependents=True, only_dependents=True)),
        ("...app...", Selector(Kind.NAME, "app", dependents=True, dependencies=True)),
        ("[main]", Selector(Kind.CHANGED, ref="main")),
        ("...[HEAD~1]", Selector(Kind.CHANGED, dependents=True, ref="HEAD~1")),
        ("@acme/*[main]", Selector(Kind.NAME, "@acme/*", ref="main")),
        ("app...[main]", Selector(Kind.NAME, "app", dependencies=True, ref="main")),
        ("{apps}[main]", Selector(Kind.DIR, "apps", ref="main")),
        ("tag:x[main]", Selector(Kind.TAG, "x", ref="main")),
        ("!docs", Selector(Kind.NAME, "docs", exclude=True)),
        ("!tag:x", Selector(Kind.TAG, "x", exclude=True)),
        ("!...lib", Selector(Kind.NAME, "lib", exclude=True, dependents=True)),
    ],
)
def test_parse(text: str, expected: Selector) -> None:
    parsed = parse_filter(text)
    assert parsed == expected
    assert parsed.text == text
    assert parse_filter(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", '--filter "" names no project: write a name, tag:<tag>, ./<dir> or [<ref>]'),
        ("...", '--filter "..." names no project'),
        ("!", '--filter "!" names no project'),
        ("tag:", '--filter "tag:": tag: names no tag'),
        ("...^a^...", "^ on both sides"),
        ("./../x", "a directory filter stays inside the workspace root"),
        ("[]", '--filter "[]": the git ref is empty'),
        ("[--output=x]", '"--output=x" starts with "-", which git would read as an option'),
        ("[HEAD~1..HEAD~0]", 'ranges are not supported — pass the base alone ("HEAD~1")'),
        ("[main...feature]", 'ranges are not supported — pass the base alone ("main")'),
        ("[^main]", 'is an exclusion — pass the base alone ("main")'),
        ("[main:packages]", 'names a path inside a commit — pass the commit alone ("main")'),
    ],
)
def test_parse_refusals(text: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_filter(text)
    assert caught.value.code is ErrorCode.USAGE
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("ref", ["main...HEAD", "main..HEAD", "main^{tree}", "HEAD~3"])
def test_refs_git_may_see(ref: str) -> None:
    assert parse_filter(f"[{ref}]").ref == ref


def _project(name: str, rel: str, tags: tuple[str, ...] = ()) -> Project:
    config = ProjectConfig(path=f"{rel}/vx.config.json", tags=tags)
    return Project(name=name, dir=ROOT / rel, rel_dir=rel, config=config, is_root=rel == ".")


PROJECTS = (
    _project("//", "."),
    _project("@acme/ui", "packages/ui", ("scope:shared",)),
    _project("@acme/core", "packages/core", ("scope:shared",)),
    _project("lib", "packages/lib"),
    _project("sub", "packages/lib/sub"),
    _project("web", "apps/web", ("scope:web",)),
    _project("docs", "apps/docs"),
)
EDGES = {"web": ("@acme/ui",), "@acme/ui": ("@acme/core",), "docs": ("lib",)}
WS = Workspace(ROOT, Manager.NPM, tuple(sorted(PROJECTS, key=lambda p: p.name)))
CHANGES = {"main": frozenset({"@acme/core"}), "HEAD": frozenset()}


def select(*texts: str) -> set[str]:
    result = evaluate(WS, parse_filters(texts), edges=EDGES, changed=CHANGES.__getitem__)
    return set(result.projects)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (("web",), {"web"}),
        (("@acme/*",), {"@acme/ui", "@acme/core"}),
        (("*",), {p.name for p in PROJECTS}),
        (("ui",), {"@acme/ui"}),
        (("apps/*",), {"web", "docs"}),
        (("./apps",), {"web", "docs"}),
        (("./packages/lib",), {"lib"}),
        (("{packages/lib/**}",), {"lib", "sub"}),
        (("./packages/*",), {"@acme/ui", "@acme/core", "lib"}),
        ((".",), {"//"}),
        (("//",), {"//"}),
        (("tag:scope:*",), {"@acme/ui", "@acme/core", "web"}),
        (("web...",), {"web", "@acme/ui", "@acme/core"}),
        (("web^...",), {"@acme/ui", "@acme/core"}),
        (("...@acme/core",), {"@acme/core", "@acme/ui", "web"}),
        (("...^@acme/core",), {"@acme/ui", "web"}),
        (("...ui...",), {"@acme/ui", "web", "@acme/core"}),
        (("[main]",), {"@acme/core"}),
        (("...[main]",), {"@acme/core", "@acme/ui", "web"}),
        (("web[main]",), set()),
        (("web...[main]",), {"web"}),
        (("*", "!docs", "!tag:scope:shared"), {"//", "lib", "sub", "web"}),
        (("!docs",), {p.name for p in PROJECTS} - {"docs"}),
        (("!web", "web..."), {"@acme/ui", "@acme/core"}),
    ],
)
def test_evaluate(texts: tuple[str, ...], expected: set[str]) -> None:
    assert select(*texts) == expected


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (("wbe",), "no projects matched filter(s): wbe. Did you mean web?"),
        (("coer",), "no projects matched filter(s): coer. Did you mean @acme/core?"),
        (("zzzzzz",), "no projects matched filter(s): zzzzzz. Projects: "),
        (("tag:scope:wbe",), "no projects matched filter(s): tag:scope:wbe. Did you mean tag:scope:web?"),
        (("./nope",), "no projects matched filter(s): ./nope. Project dirs: apps/docs,"),
        (("!dcos", "web"), "no projects matched filter(s): !dcos. Did you mean docs?"),
        (("...^web",), 'no projects selected: filter "...^web" matched web, and no project depends on it'),
        (("lib^...",), 'no projects selected: filter "lib^..." matched lib, and it depends on no project'),
        (("web", "!web"), "no projects selected: !web excluded every project the other filters matched"),
    ],
)  # fmt: skip
def test_evaluate_refusals(texts: tuple[str, ...], message: str) -> None:
    with pytest.raises(UserError) as caught:
        select(*texts)
    assert str(caught.value).startswith(message)


def test_a_ref_that_changed_nothing_is_a_note_not_a_refusal() -> None:
    result = evaluate(WS, parse_filters(["[HEAD]"]), edges=EDGES, changed=CHANGES.__getitem__)
    assert result.projects == frozenset()
    assert result.notes == ("no project selected: nothing the filters name changed since HEAD",)
