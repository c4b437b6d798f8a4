"""`--affected` end to end in real git repos: the base, the diff, what it seeds, what it keeps.

Each test asserts the tasks `vx run --affected --dry=json` keeps, their reasons and the exit
code; a few run for real to show the same tasks execute.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.conftest import git, make_git_workspace, write_tree
from tests.e2e.runws import package

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

BUILD_TEST = {
    "build": {
        "exec": "echo build",
        "dependsOn": ["^build"],
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    },
    "test": {
        "exec": "echo test",
        "dependsOn": ["build"],
        "cache": {"inputs": {"files": ["src/**", "test/**"]}},
    },
    "lint": {"exec": "echo lint"},
}


def member(name: str, deps: tuple[str, ...] = (), version: str = "1.0.0") -> dict[str, Any]:
    """A package whose build reads src/, whose test reads src/ and test/, and an uncached lint."""
    return {
        "package.json": package(name, deps, version),
        "vx.config.json": {"tasks": BUILD_TEST},
        "src/index.ts": f"export const {name} = 1\n",
        "test/index.test.ts": "test\n",
    }


def files(**members: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
    }
    for rel, content in members.items():
        for name, body in content.items():
            out[f"packages/{rel}/{name}"] = body
    return out


def standard(tmp_path: Path) -> Path:
    """lib ← ui ← app, and a lone docs package, committed on main."""
    return make_git_workspace(
        tmp_path / "ws",
        files(
            lib=member("lib"),
            ui=member("ui", ("lib",)),
            app=member("app", ("ui",)),
            docs=member("docs"),
        ),
    )


def commit(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def plan(result: VxResult) -> dict[str, dict[str, Any]]:
    """The requested tasks a `--dry=json` plan kept, by id, with their reasons."""
    doc = json.loads(result.out)
    return {t["id"]: t.get("affected") for t in doc["tasks"] if "affected" in t}


def test_an_input_edit_reaches_its_task_and_the_dependants_behind_build(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    git(root, "checkout", "-q", "-b", "feature")
    write_tree(root, {"packages/lib/src/index.ts": "export const lib = 2\n"})
    commit(root)
    result = vx(["run", "build", "test", "--affected=main", "--dry=json"], root).assert_code(0)
    kept = plan(result)
    assert set(kept) == {"lib#build", "lib#test", "ui#build", "ui#test", "app#build", "app#test"}
    change = "packages/lib/src/index.ts changed (an input)"
    assert kept["lib#build"] == {"kind": "input", "change": change, "via": []}
    assert kept["app#test"]["via"] == ["app#build", "ui#build", "lib#build"]
    text = vx(["run", "build", "--affected=main", "--dry"], root).assert_code(0)
    assert f"affected: {change}, via ui#build, via lib#build" in text.out


def test_a_test_file_edit_runs_only_that_projects_test(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/lib/test/index.test.ts": "test 2\n"})
    result = vx(["run", "build", "test", "lint", "--affected=HEAD", "--dry=json"], root)
    kept = plan(result.assert_code(0))
    assert set(kept) == {"lib#test", "lib#lint"}
    assert kept["lib#lint"]["kind"] == "project"
    # A real run executes those two and nothing else.
    ran = vx(["run", "test", "lint", "--affected=HEAD", "--output-logs=full"], root).assert_ok()
    assert "lib#test" in ran.out
    assert "ui#test" not in ran.out
    assert "app#" not in ran.out


def test_a_moved_base_diffs_from_the_merge_base(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    git(root, "checkout", "-q", "-b", "feature")
    write_tree(root, {"packages/docs/src/index.ts": "docs 2\n"})
    commit(root, "feature work")
    git(root, "checkout", "-q", "main")
    write_tree(root, {"packages/lib/src/index.ts": "landed on main\n"})
    commit(root, "someone else's change")
    git(root, "checkout", "-q", "feature")
    kept = plan(vx(["run", "build", "--affected=main", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"docs#build"}


def test_the_default_base_is_main_and_nothing_changed_exits_zero(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    git(root, "checkout", "-q", "-b", "feature")
    # main is HEAD itself here, so it is no base; nor is HEAD~1 on a one-commit repo.
    refused = vx(["run", "build", "--affected"], root).assert_code(1)
    assert "--affected has no base here" in refused.err
    assert "first commit" in refused.err
    assert "Traceback" not in refused.err
    write_tree(root, {"README.md": "a file no project holds\n"})
    commit(root, "docs only")
    result = vx(["run", "build", "--affected"], root).assert_code(0)
    assert "nothing affected since main" in result.err


def test_an_anchored_task_runs_when_nothing_changed(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    result = vx(["run", "docs#lint", "build", "--affected=HEAD", "--dry=json"], root)
    kept = plan(result.assert_code(0))
    assert kept == {"docs#lint": {"kind": "named", "change": "named as pkg#task", "via": []}}
    assert "nothing affected since HEAD" in result.err
    assert "running docs#lint only" in result.err


def test_unreached_and_undeclared_names_exit_zero_with_their_notes(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = make_git_workspace(
        tmp_path / "ws",
        files(
            lib=member("lib"),
            bare={"package.json": package("bare"), "vx.config.json": {"tasks": {}}},
        ),
    )
    write_tree(root, {"packages/bare/notes.md": "x\n"})
    result = vx(["run", "build", "--affected=HEAD"], root).assert_code(0)
    assert "No affected project declares task(s): build." in result.err
    write_tree(root, {"packages/lib/test/index.test.ts": "x\n"})
    result = vx(["run", "build", "--affected=HEAD"], root).assert_code(0)
    assert "Nothing affected: the change reaches no build task." in result.err
    typo = vx(["run", "biuld", "--affected=HEAD"], root).assert_code(1)
    assert "no projects declare task(s): biuld" in typo.err


def test_an_untracked_file_is_a_change(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/ui/src/new.ts": "new\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"ui#build", "app#build"}
    assert kept["ui#build"]["change"] == "packages/ui/src/new.ts changed (an input)"


def test_a_lockfile_edit_selects_everything(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    root = standard(tmp_path)
    write_tree(root, {"package-lock.json": {"lockfileVersion": 3}})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"lib#build", "ui#build", "app#build", "docs#build"}
    assert kept["docs#build"]["change"].startswith("package-lock.json changed")
    # vx-lock.json is never a change.
    git(root, "checkout", "-q", "--", ".")
    (root / "package-lock.json").unlink()
    write_tree(root, {"vx-lock.json": {"version": 1}})
    assert "nothing affected" in vx(["run", "build", "--affected=HEAD"], root).err


def test_a_version_bump_that_drops_an_edge_selects_the_dependent(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = make_git_workspace(
        tmp_path / "ws",
        files(
            lib=member("lib"),
            app={
                **member("app"),
                "package.json": {**package("app"), "dependencies": {"lib": "^1.0.0"}},
            },
        ),
    )
    write_tree(root, {"packages/lib/package.json": package("lib", version="2.0.0")})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"lib#build", "app#build"}
    assert kept["app#build"]["change"] == "an edge to packages/lib was dropped"


def test_a_deleted_package_selects_its_dependents(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    git(root, "rm", "-q", "-r", "packages/lib")
    write_tree(root, {"packages/ui/package.json": package("ui")})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"ui#build", "app#build"}
    assert kept["app#build"]["via"] == ["ui#build"]


def test_a_new_nested_package_selects_the_one_above_it(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = make_git_workspace(
        tmp_path / "ws",
        {
            **files(lib=member("lib"), docs=member("docs")),
            "package.json": {
                "name": "root",
                "private": True,
                "workspaces": ["packages/*", "packages/lib/plugins/*"],
            },
            "packages/lib/plugins/x/src/x.ts": "x\n",
        },
    )
    write_tree(
        root,
        {
            "packages/lib/plugins/x/package.json": package("x"),
            "packages/lib/plugins/x/vx.config.json": {"tasks": BUILD_TEST},
        },
    )
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"lib#build", "x#build"}
    assert "a new project below it" in kept["lib#build"]["change"]


def test_a_py_config_importing_a_shared_helper(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    config = (
        "import sys, pathlib\n"
        "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / 'shared'))\n"
        "from preset import tasks\n"
        "config = {'tasks': tasks()}\n"
    )
    root = make_git_workspace(
        tmp_path / "ws",
        {
            **files(lib=member("lib"), docs=member("docs")),
            "packages/lib/vx.config.json": None,
            "shared/preset.py": f"def tasks():\n    return {BUILD_TEST!r}\n",
        },
    )
    (root / "packages/lib/vx.config.json").rmdir()
    write_tree(root, {"packages/lib/vx.config.py": config})
    commit(root, "py config")
    write_tree(root, {"shared/preset.py": f"# v2\ndef tasks():\n    return {BUILD_TEST!r}\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert kept == {
        "lib#build": {
            "kind": "project",
            "change": "shared/preset.py changed (its config imports it)",
            "via": [],
        }
    }


def test_a_submodule_change_selects_the_projects_holding_it(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    sub = make_git_workspace(tmp_path / "sub", {"README.md": "one\n"})
    root = standard(tmp_path)
    git(
        root,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(sub),
        "packages/docs/vendor/sub",
    )
    commit(root, "add submodule")
    write_tree(root / "packages/docs/vendor/sub", {"README.md": "two\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"docs#build"}
    assert "vendor/sub changed (a repository" in kept["docs#build"]["change"]


def test_a_shallow_clone_has_no_base(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    origin = standard(tmp_path)
    write_tree(origin, {"packages/lib/src/index.ts": "2\n"})
    commit(origin)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", "main", f"file://{origin}", str(clone))
    git(clone, "branch", "-q", "-m", "feature")  # no main, no origin/main on a feature branch
    git(clone, "remote", "remove", "origin")
    result = vx(["run", "build", "--affected"], clone).assert_code(1)
    assert "--affected has no base here" in result.err
    assert "shallow" in result.err
    missing = vx(["run", "build", "--affected=HEAD~3"], clone).assert_code(1)
    assert 'git ref "HEAD~3" did not resolve' in missing.err
    assert "git fetch --unshallow" in missing.err


def test_github_base_ref_names_the_base(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    root = standard(tmp_path)
    git(root, "branch", "-q", "release")
    git(root, "checkout", "-q", "-b", "feature")
    write_tree(root, {"packages/docs/src/index.ts": "2\n"})
    commit(root)
    git(root, "checkout", "-q", "release")
    write_tree(root, {"packages/lib/src/index.ts": "release fix\n"})
    commit(root)
    git(root, "checkout", "-q", "feature")
    git(root, "merge", "-q", "--no-edit", "release")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "release"}
    kept = plan(vx(["run", "build", "--affected", "--dry=json"], root, env=env).assert_code(0))
    assert set(kept) == {"docs#build"}
    # Without it the default base is main, where lib's fix is a change too.
    kept = plan(vx(["run", "build", "--affected", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"docs#build", "lib#build", "ui#build", "app#build"}


def test_a_github_base_ref_the_clone_never_fetched_is_refused(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    """origin/HEAD is there, but a pull request into `release` must not diff from it."""
    origin = standard(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "main", f"file://{origin}", str(clone))
    env = {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "release"}
    refused = vx(["run", "build", "--affected"], clone, env=env).assert_code(1)
    assert refused.err == (
        "--affected: the CI's base origin/release or release is not in this clone — fetch it"
        " (git fetch origin release; in CI: fetch-depth: 0), or name one: --affected=<ref>\n"
    ), refused.err


def test_refs_are_checked_before_git_sees_them(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    root = standard(tmp_path)
    ranged = vx(["run", "build", "--affected=HEAD~1..main"], root).assert_code(1)
    assert 'pass the base alone ("HEAD~1")' in ranged.err
    option = vx(["run", "build", "--affected=--output=x"], root).assert_code(1)
    assert 'starts with "-"' in option.err
    assert not (root / "x").exists()


def test_the_warm_path_never_replays_an_affected_answer(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/docs/src/index.ts": "2\n"})
    vx(["run", "build", "--affected=HEAD"], root).assert_ok()
    commit(root)
    again = vx(["run", "build", "--affected=HEAD"], root).assert_code(0)
    assert "nothing affected since HEAD" in again.err


def test_show_affected_lists_what_the_run_keeps(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/lib/test/index.test.ts": "test 2\n"})
    every = vx(["show", "--affected=HEAD", "--format", "json"], root).assert_ok().json()
    assert {p["name"] for p in every} == {"lib", "ui", "app"}
    tests = vx(["show", "test", "--affected=HEAD", "--format", "json"], root).assert_ok().json()
    assert {t["name"] for t in tests} == {"lib"}
    builds = vx(["show", "build", "--affected=HEAD", "--format", "json"], root).assert_ok().json()
    assert builds == []
    refused = vx(["show", "lib", "--affected=HEAD"], root).assert_code(1)
    assert "--affected narrows a list; lib is one project" in refused.err


def test_a_caret_edge_through_a_package_with_no_config_carries_the_package_reason(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    """app#test runs ^test; mid has no vx config, so the edge passes through it to core#test,
    and a change in mid reaches app#test as `package`."""
    test = {"test": {"exec": "echo test", "dependsOn": ["^test"]}}
    root = make_git_workspace(
        tmp_path / "ws",
        files(
            core={"package.json": package("core"), "vx.config.json": {"tasks": test}},
            mid={"package.json": package("mid", ("core",)), "src/index.ts": "mid\n"},
            app={"package.json": package("app", ("mid",)), "vx.config.json": {"tasks": test}},
        ),
    )
    write_tree(root, {"packages/mid/src/index.ts": "mid 2\n"})
    kept = plan(vx(["run", "test", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert kept == {
        "app#test": {
            "kind": "package",
            "change": "packages/mid/src/index.ts changed (in its project), passed by ^test",
            "via": [],
        }
    }
    text = vx(["run", "test", "--affected=HEAD", "--dry"], root).assert_code(0).out
    assert "affected: packages/mid/src/index.ts changed (in its project), passed by ^test" in text


def test_filters_beside_affected_add_and_exclude_projects(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/ui/src/index.ts": "export const ui = 2\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"ui#build", "app#build"}
    added = vx(["run", "build", "--affected=HEAD", "--filter", "docs", "--dry=json"], root)
    kept = plan(added.assert_code(0))
    assert set(kept) == {"ui#build", "app#build", "docs#build"}
    assert kept["docs#build"] == {"kind": "selected", "change": "selected by --filter", "via": []}
    cut = vx(["run", "build", "--affected=HEAD", "--filter", "!app", "--dry=json"], root)
    assert set(plan(cut.assert_code(0))) == {"ui#build"}
    both = vx(
        ["run", "build", "--affected=HEAD", "--filter", "docs", "--filter", "!ui", "--dry=json"],
        root,
    )
    assert set(plan(both.assert_code(0))) == {"app#build", "docs#build"}


def test_a_push_names_its_before_commit_as_the_base(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    write_tree(root, {"packages/lib/src/index.ts": "pushed before\n"})
    commit(root)
    before = git(root, "rev-parse", "HEAD").strip()
    write_tree(root, {"packages/docs/src/index.ts": "pushed now\n"})
    commit(root)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"before": before}))
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}
    kept = plan(vx(["run", "build", "--affected", "--dry=json"], root, env=env).assert_code(0))
    assert set(kept) == {"docs#build"}


def test_an_untracked_embedded_repository_selects_the_project_holding_it(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    make_git_workspace(root / "packages/docs/vendor/nested", {"README.md": "one\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"docs#build"}
    assert kept["docs#build"]["kind"] == "project"


def test_a_symlinked_member_is_selected_by_a_change_where_it_lives(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    tree = files(lib=member("lib"))
    for name, body in member("kit").items():
        tree[f"vendor/kit/{name}"] = body
    root = make_git_workspace(tmp_path / "ws", tree, commit=False)
    (root / "packages/kit").symlink_to("../vendor/kit")
    commit(root, "one")
    write_tree(root, {"vendor/kit/src/index.ts": "kit 2\n"})
    kept = plan(vx(["run", "build", "--affected=HEAD", "--dry=json"], root).assert_code(0))
    assert set(kept) == {"kit#build"}


def test_more_refs_refused_and_a_repository_with_no_commit(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = standard(tmp_path)
    for ref, words in (
        ("^main", '"^main" is an exclusion — pass the base alone ("main")'),
        ("main:packages", '"main:packages" names a path inside a commit'),
        ("main...HEAD", None),  # Turbo's CI spelling reads as the base
    ):
        result = vx(["run", "build", f"--affected={ref}", "--dry=json"], root)
        if words is None:
            result.assert_code(0)
        else:
            assert words in result.assert_code(1).err
    empty = vx(["run", "build", "--affected=", "--dry=json"], root).assert_code(1)
    assert "--affected= is empty: write --affected alone, or --affected=<base>" in empty.err
    blank = vx(["run", "build", "--affected= ", "--dry=json"], root).assert_code(1)
    assert "the git ref is empty" in blank.err
    fresh = make_git_workspace(tmp_path / "fresh", files(lib=member("lib")), commit=False)
    none = vx(["run", "build", "--affected"], fresh).assert_code(1)
    assert none.err.endswith(" is a git repository with no commit yet — commit once and re-run\n")
    assert none.err.count("\n") == 1
