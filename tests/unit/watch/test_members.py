"""Where a member glob of any shape can grow a package: the directories watched, the events kept."""

from __future__ import annotations

import pytest
from tests.conftest import make_git_workspace
from tests.e2e.runws import tree

from vx.run.prepare import RunOptions, select_plan
from vx.watch.members import member_globs
from vx.watch.route import route_event, wanted_slots
from vx.watch.targets import from_plan

GLOBS = ["packages/*", "libs/*/pkg", "apps/**", "!apps/legacy/**", "tools/cli"]


@pytest.fixture
def ws(tmp_path):
    files = tree({"a": ((), {"build": {"exec": "true"}})})
    files["package.json"] = {"name": "root", "private": True, "workspaces": GLOBS}
    files["apps/README.md"] = "apps\n"
    files["libs/README.md"] = "libs\n"
    root = make_git_workspace(tmp_path / "ws", files)
    (root / "libs/empty").mkdir()
    return root


def grow(ws):
    """A member dir made, its manifest not written yet."""
    edit = ws / "libs/math/pkg/notes.txt"
    edit.parent.mkdir(parents=True)
    edit.write_text("a member dir with no manifest yet\n")


def rels(ws, paths):
    return sorted(str(p).removeprefix(str(ws)).lstrip("/") for p in paths)


def test_each_glob_is_walked_from_its_literal_prefix(ws):
    grow(ws)
    members = member_globs(ws)
    assert members is not None
    found = members.watch([str(ws / "packages/a")])
    assert rels(ws, found.steps) == ["libs", "libs/empty", "libs/math", "packages"]
    assert rels(ws, found.waiting) == ["libs/math/pkg"]  # tools/cli is not there: nothing
    assert rels(ws, found.deep) == ["apps"]


def test_a_missing_literal_prefix_is_heard_from_its_nearest_directory(tmp_path):
    root = make_git_workspace(
        tmp_path / "ws",
        {"package.json": {"name": "r", "workspaces": ["src/pkgs/*", "lib/**"]}, "src/x": "x"},
    )
    members = member_globs(root)
    assert members is not None
    found = members.watch([])
    assert rels(root, found.steps) == ["src"]  # src/pkgs will be made there
    assert found.deep == ()  # lib/ is made at the root, which the root watcher hears
    assert members.leads("lib")
    assert members.leads("src/pkgs/x")
    assert not members.leads("scratch")


@pytest.mark.parametrize(
    ("path", "member"),
    [
        ("apps/web/site/package.json", True),
        ("apps/package.json", True),
        ("apps/legacy/old/package.json", False),  # negated
        ("apps/web/node_modules/x/package.json", False),
        ("apps/web/site/src/index.ts", False),
        ("libs/math/pkg/package.json", True),
        ("libs/math/package.json", False),
        ("package.json", False),
    ],
)
def test_a_member_manifest(ws, path, member):
    members = member_globs(ws)
    assert members is not None
    assert members.is_member_manifest(str(ws / path)) is member


@pytest.fixture
def wanted(ws):
    plan = select_plan(RunOptions(tasks=("build",), all=True, cwd=ws, env={}))
    grow(ws)
    return from_plan(plan, cache=[])


def test_the_slots_cover_every_glob(ws, wanted):
    slots = {
        (role, d.removeprefix(str(ws)).lstrip("/")): r
        for (role, d), r in wanted_slots(wanted).items()
    }
    assert slots[("deep", "apps")] is True
    assert slots[("base", "libs")] is False
    assert slots[("base", "libs/math")] is False
    assert slots[("pending", "libs/math/pkg")] is False
    assert ("base", "libs/math/pkg") not in slots


@pytest.mark.parametrize(
    ("role", "where", "path", "label"),
    [
        ("deep", "apps", "apps/web/site/package.json", "// apps/web/site/package.json"),
        ("deep", "apps", "apps/web/site/src/index.ts", None),  # not a member's manifest
        ("deep", "apps", "apps/legacy/x/package.json", None),
        ("base", "libs", "libs/new", "// libs/new"),  # a step: gone, or a directory
        ("base", "libs", "libs/README.md", None),  # a file beside the members
        ("root", ".", "apps", "// apps"),  # where a glob starts
        ("root", ".", "scratch", None),
    ],
)
def test_member_routes(ws, wanted, role, where, path, label):
    if label is not None and not path.endswith(".json"):
        (ws / path).mkdir(parents=True, exist_ok=True)
    else:
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text("{}")
    heard = route_event(wanted, role, str(ws / where), str(ws / path))
    assert (heard[0] if heard else None) == label
    assert heard is None or heard[1]  # a member come or gone re-reads the set
