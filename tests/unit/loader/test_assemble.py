"""Assembling a Workspace from a real tree, and finding the cwd's project in it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vx.errors import ConfigError, ErrorCode, UserError
from vx.loader.assemble import cwd_project, load_workspace
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Make = Callable[..., Path]


def pkg(name: str, version: str = "1.0.0", **deps: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "version": version, **deps}


NPM_TREE: dict[str, Any] = {
    "package.json": {"name": "monorepo", "workspaces": ["packages/*", "apps/*"]},
    "packages/ui/package.json": pkg("@acme/ui", "2.1.0", dependencies={"react": "^18"}),
    "packages/utils/package.json": pkg("utils", "0.3.0"),
    "apps/web/package.json": pkg(
        "web",
        dependencies={"@acme/ui": "^2.0.0", "utils": "^0.4.0"},
        devDependencies={"next": "14"},
    ),
    "apps/web/vx.config.json": {"tags": ["scope:web"]},
}


def test_npm_workspace(workspace: Make) -> None:
    root = workspace(NPM_TREE)
    ws = load_workspace(root)
    assert (ws.root, ws.manager, ws.notes) == (root, Manager.NPM, ())
    assert ws.names() == ("@acme/ui", "utils", "web")
    web = ws.project("web")
    assert web is not None
    assert (web.dir, web.rel_dir, web.manifest, web.version, web.is_root) == (
        root / "apps" / "web",
        "apps/web",
        "apps/web/package.json",
        "1.0.0",
        False,
    )
    assert dict(web.dependencies) == {"@acme/ui": "^2.0.0", "utils": "^0.4.0", "next": "14"}
    assert web.tags == ("scope:web",)
    assert ws.project("utils") is not None
    assert ws.root_project is None
    assert dict(ws.package_deps) == {"@acme/ui": (), "utils": (), "web": ("@acme/ui",)}


def test_root_with_a_config_is_the_root_project(workspace: Make) -> None:
    root = workspace(
        {
            **NPM_TREE,
            "vx.config.json": {"tags": ["root"]},
            "vx.workspace.json": {"cacheDir": ".cache/vx"},
        }
    )
    ws = load_workspace(root / "apps" / "web")
    top = ws.root_project
    assert top is not None
    assert (top.name, top.dir, top.rel_dir, top.manifest, top.tags) == (
        "//",
        root,
        ".",
        "package.json",
        ("root",),
    )
    assert ws.names()[0] == "//"
    assert ws.config.cache_dir == ".cache/vx"


def test_pnpm_workspace_edges_and_note(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"name": "root", "workspaces": ["packages/*", "extra/*"]},
            "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
            "packages/mario/package.json": pkg(
                "mario", dependencies={"luigi": "workspace:../waluigi", "peach": "workspace:*"}
            ),
            "packages/waluigi/package.json": pkg("waluigi"),
            "packages/peach/package.json": pkg("peach", devDependencies={"mario": "^3"}),
        }
    )
    ws = load_workspace(root)
    assert ws.manager is Manager.PNPM
    assert dict(ws.package_deps) == {"mario": ("peach", "waluigi"), "peach": (), "waluigi": ()}
    assert ws.notes == (
        (
            'package.json "workspaces" lists extra/*, which pnpm-workspace.yaml does not; '
            "pnpm reads only pnpm-workspace.yaml, so vx does too"
        ),
    )


@pytest.mark.parametrize(
    ("lockfile", "manager"), [("yarn.lock", Manager.YARN), ("bun.lock", Manager.BUN)]
)
def test_yarn_and_bun(workspace: Make, lockfile: str, manager: Manager) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": {"packages": ["packages/*"]}},
            lockfile: "",
            "packages/a/package.json": pkg("a", dependencies={"b": "*"}),
            "packages/b/package.json": pkg("b"),
        }
    )
    ws = load_workspace(root / "packages" / "b")
    assert (ws.manager, ws.names(), dict(ws.package_deps)) == (
        manager,
        ("a", "b"),
        {"a": ("b",), "b": ()},
    )


def test_uv_workspace(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[project]\nname = "root"\n[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/api/pyproject.toml": '[project]\nname = "api"\nversion = "0.1.0"\n'
            'dependencies = ["Shared.Lib>=0.1", "httpx"]\n'
            "[tool.uv.sources]\nshared-lib = { workspace = true }\n",
            "packages/shared/pyproject.toml": '[project]\nname = "shared_lib"\n',
            "packages/nameless/pyproject.toml": "[tool.ruff]\nline-length = 100\n",
        }
    )
    ws = load_workspace(root)
    assert ws.manager is Manager.UV
    # uv counts a root with a `[project]` name as a member: it is the root project, by name.
    assert ws.names() == ("api", "root", "shared_lib")
    assert ws.root_project is not None
    assert ws.root_project.name == "root"
    api = ws.project("api")
    assert api is not None
    assert (api.manifest, api.version) == ("packages/api/pyproject.toml", "0.1.0")
    assert dict(api.dependencies) == {"shared-lib": "workspace", "httpx": "*"}
    assert dict(ws.package_deps) == {"api": ("shared_lib",), "root": (), "shared_lib": ()}
    assert ws.notes == ("packages/nameless/pyproject.toml has no [project] name; skipped",)


@pytest.mark.parametrize(
    ("files", "name", "manifest"),
    [
        ({"package.json": pkg("solo")}, "solo", "package.json"),
        ({"package.json": {"private": True}}, "//", "package.json"),
        ({"pyproject.toml": '[project]\nname = "pysolo"\n'}, "pysolo", "pyproject.toml"),
        (
            {"package.json": {"private": True}, "pyproject.toml": '[project]\nname = "py"\n'},
            "py",
            "pyproject.toml",
        ),
        ({"vx.config.json": {"tags": ["t"]}}, "//", None),
    ],
)
def test_single_package(
    workspace: Make, files: dict[str, Any], name: str, manifest: str | None
) -> None:
    root = workspace(files)
    ws = load_workspace(root)
    assert ws.manager is Manager.SINGLE
    (only,) = ws.projects
    assert (only.name, only.dir, only.rel_dir, only.is_root, only.manifest) == (
        name,
        root,
        ".",
        True,
        manifest,
    )
    assert dict(ws.package_deps) == {name: ()}


def test_single_package_reads_its_config(workspace: Make) -> None:
    root = workspace({"package.json": pkg("solo"), "vx.config.json": {"tags": ["t"]}})
    assert load_workspace(root).projects[0].tags == ("t",)


def test_nameless_member_is_skipped_with_a_note(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "packages/x/package.json": {"private": True},
            "packages/x/vx.config.json": {"tags": ["ignored"]},
        }
    )
    ws = load_workspace(root)
    assert ws.names() == ("a",)
    assert ws.notes == ('packages/x/package.json has no "name"; skipped',)


def test_duplicate_names_are_refused(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("same"),
            "packages/b/package.json": pkg("same"),
        }
    )
    with pytest.raises(UserError) as caught:
        load_workspace(root)
    assert caught.value.code is ErrorCode.CONFIG
    assert caught.value.message == (
        'two workspace members are named "same": packages/a/package.json and '
        "packages/b/package.json — give each package its own name"
    )


def test_uv_names_clash_after_normalization(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": '[tool.uv.workspace]\nmembers = ["libs/*"]\n',
            "libs/a/pyproject.toml": '[project]\nname = "My_Lib"\n',
            "libs/b/pyproject.toml": '[project]\nname = "my-lib"\n',
        }
    )
    with pytest.raises(UserError) as caught:
        load_workspace(root)
    assert caught.value.message == (
        'two workspace members are named "my-lib": libs/a/pyproject.toml and '
        "libs/b/pyproject.toml — give each package its own name"
    )


def test_globs_with_globstar_and_negation(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/**", "!packages/fixtures/**"]},
            "packages/a/package.json": pkg("a"),
            "packages/nested/b/package.json": pkg("b"),
            "packages/fixtures/f/package.json": pkg("f"),
            "packages/a/node_modules/dep/package.json": pkg("dep"),
        }
    )
    ws = load_workspace(root)
    assert [(p.name, p.rel_dir) for p in ws.projects] == [
        ("a", "packages/a"),
        ("b", "packages/nested/b"),
    ]


def test_member_config_refusal_names_the_file(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "packages/a/vx.config.json": {"tagz": []},
        }
    )
    with pytest.raises(UserError) as caught:
        load_workspace(root)
    assert caught.value.message.startswith("packages/a/vx.config.json: ")


def test_broken_member_manifest_names_the_file(workspace: Make) -> None:
    root = workspace(
        {"package.json": {"workspaces": ["packages/*"]}, "packages/a/package.json": "{"}
    )
    with pytest.raises(UserError) as caught:
        load_workspace(root)
    assert caught.value.message.startswith("packages/a/package.json: not valid JSON: ")


def test_no_workspace(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        load_workspace(tmp_path)
    assert caught.value.code is ErrorCode.NO_WORKSPACE
    assert caught.value.message == (
        f"no workspace found at or above {tmp_path} — run vx inside a repository with a "
        "package.json, pnpm-workspace.yaml or pyproject.toml"
    )


@pytest.fixture
def nested(workspace: Make) -> Path:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/**"]},
            "vx.config.json": {},
            "packages/a/package.json": pkg("a"),
            "packages/a/src/index.ts": "",
            "packages/a/sub/package.json": pkg("a-sub"),
            "packages/a/sub/src/deep/x.ts": "",
            "ext/b/package.json": pkg("b"),
            "ext/b/src/y.ts": "",
            "docs/guide.md": "",
        }
    )
    (root / "packages" / "b").symlink_to("../ext/b")
    return root


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (".", "//"),
        ("docs", "//"),
        ("packages", "//"),
        ("packages/a", "a"),
        ("packages/a/src", "a"),
        ("packages/a/sub", "a-sub"),
        ("packages/a/sub/src/deep", "a-sub"),
        ("packages/b", "b"),
        ("packages/b/src", "b"),
        ("ext/b/src", "b"),
    ],
)
def test_cwd_project_is_the_deepest(nested: Path, rel: str, expected: str) -> None:
    cwd = nested / rel
    ws = load_workspace(cwd)
    assert ws.root == nested
    found = cwd_project(ws, cwd)
    assert found is not None
    assert found.name == expected


def test_cwd_project_outside_every_project(workspace: Make) -> None:
    root = workspace(
        {
            "package.json": {"workspaces": ["packages/*"]},
            "packages/a/package.json": pkg("a"),
            "docs/x.md": "",
        }
    )
    ws = load_workspace(root)
    assert cwd_project(ws, root / "docs") is None
    assert cwd_project(ws, root) is None
    assert cwd_project(ws, root / "packages" / "a-b") is None


BUILD = {"tasks": {"build": {"exec": "tsc", "cache": {"outputs": {"files": ["dist/**"]}}}}}


def test_configs_with_one_text_are_validated_once_and_each_names_its_file(
    workspace: Make,
) -> None:
    """Templated packages share a config's text: one validation serves them all, and each
    model still names its own file; a broken copy is refused in its own name."""
    tree: dict[str, Any] = {"package.json": {"name": "m", "workspaces": ["packages/*"]}}
    for name in ("a", "b", "c"):
        tree[f"packages/{name}/package.json"] = pkg(name)
        tree[f"packages/{name}/vx.config.json"] = BUILD
    ws = load_workspace(workspace(tree))
    configs = [p.config for p in ws.projects]
    assert [c.path for c in configs if c] == [
        "packages/a/vx.config.json",
        "packages/b/vx.config.json",
        "packages/c/vx.config.json",
    ]
    assert len({id(c.tasks["build"]) for c in configs if c}) == 1

    tree["packages/d/package.json"] = pkg("d")
    tree["packages/d/vx.config.json"] = {"tasks": {"build": {"exec": 5}}}
    with pytest.raises(ConfigError, match=r"packages/d/vx\.config\.json"):
        load_workspace(workspace(tree))
