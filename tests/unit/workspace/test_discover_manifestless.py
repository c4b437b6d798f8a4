"""A member glob matching a directory with no manifest: refused as uv refuses it, skipped with
a note as npm, pnpm, Yarn and Bun skip it; leftovers pass."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git

from vx.errors import ErrorCode, UserError
from vx.workspace.discover import find_root, scan_members

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Make = Callable[..., Path]

UV_ROOT = '[project]\nname = "root"\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'


def test_a_directory_with_content_and_no_manifest_is_refused_under_uv(workspace: Make) -> None:
    root = workspace(
        {"pyproject.toml": UV_ROOT, "packages/js-only/package.json": {"name": "js-only"}}
    )
    with pytest.raises(UserError) as info:
        find_root(root)
    assert (info.value.code, info.value.message) == (
        ErrorCode.CONFIG,
        (
            'pyproject.toml [tool.uv.workspace] members: the glob "packages/*" matches '
            "packages/js-only, which has no pyproject.toml — add one, or leave the directory "
            'out (exclude = ["packages/js-only"])'
        ),
    )


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (
            {"package.json": {"workspaces": ["packages/*"]}, "packages/notes/README.md": "x"},
            (
                'package.json "workspaces": the glob "packages/*" matches packages/notes, which has '
                "no package.json; skipped, as npm skips it — add one, or leave the directory out "
                '("!packages/notes")'
            ),
        ),
        (
            {
                "package.json": {"workspaces": ["packages/*"]},
                "yarn.lock": "",
                "packages/notes/README.md": "x",
            },
            (
                'package.json "workspaces": the glob "packages/*" matches packages/notes, which has '
                "no package.json; skipped, as yarn skips it — add one, or leave the directory out "
                '("!packages/notes")'
            ),
        ),
        (
            {
                "package.json": {"workspaces": ["packages/*"]},
                "bun.lock": "{}",
                "packages/notes/README.md": "x",
            },
            (
                'package.json "workspaces": the glob "packages/*" matches packages/notes, which has '
                "no package.json; skipped, as bun skips it — add one, or leave the directory out "
                '("!packages/notes")'
            ),
        ),
        (
            {
                "package.json": {"name": "r"},
                "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
                "packages/notes/README.md": "x",
            },
            (
                'pnpm-workspace.yaml packages: the glob "packages/*" matches packages/notes, which '
                "has no package.json; skipped, as pnpm skips it — add one, or leave the directory "
                "out ('!packages/notes')"
            ),
        ),
    ],
)
def test_a_js_manager_skips_a_directory_with_no_manifest_with_a_note(
    workspace: Make, files: dict[str, Any], said: str
) -> None:
    root = workspace({**files, "packages/a/package.json": {"name": "a"}})
    found = find_root(root)
    assert found.members == ("packages/a",)
    assert found.notes == (said,)


def test_leftover_directories_pass_as_uv_passes_them(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": UV_ROOT,
            ".gitignore": "__pycache__/\ndist/\n",
            "packages/api/pyproject.toml": '[project]\nname = "api"\n',
            "packages/empty/sub": None,
            "packages/built/dist/x.whl": "wheel",
            "packages/built/__pycache__/m.pyc": "",
            "packages/js/node_modules/dep/index.js": "",
        }
    )
    assert find_root(root).members == ("packages/api",)


def test_an_excluded_directory_is_never_refused(workspace: Make) -> None:
    root = workspace(
        {
            "pyproject.toml": UV_ROOT + 'exclude = ["packages/docs"]\n',
            "packages/docs/index.md": "x",
        }
    )
    assert find_root(root).members == ()


def test_untracked_content_outside_a_repository_counts(tmp_path: Path) -> None:
    (tmp_path / "packages/notes").mkdir(parents=True)
    (tmp_path / "packages/notes/README.md").write_text("x")
    (tmp_path / "pyproject.toml").write_text(UV_ROOT)
    members, missing = scan_members(tmp_path, ("packages/*",), "pyproject.toml")
    assert (members, missing) == ((), (("packages/*", "packages/notes"),))


def test_a_workspace_above_that_does_not_hold_cwd_is_not_refused(workspace: Make) -> None:
    """Only the workspace vx settles on is checked: an outer one is not this one's business."""
    root = workspace(
        {
            "package.json": {"workspaces": ["apps/*"]},
            "apps/notes/README.md": "x",
            "tools/inner/pyproject.toml": '[project]\nname = "inner"\n'
            '[tool.uv.workspace]\nmembers = ["libs/*"]\n',
            "tools/inner/libs/a/pyproject.toml": '[project]\nname = "a"\n',
        }
    )
    git(root, "status")
    found = find_root(root / "tools/inner/libs/a")
    assert (found.root, found.members) == (root / "tools/inner", ("libs/a",))
