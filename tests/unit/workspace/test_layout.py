"""Nested projects, found by sorting rather than by comparing every pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from vx.workspace.layout import nested_dirs
from vx.workspace.model import Manager, Project, Workspace

ROOT = Path("/ws")


def ws(*dirs: str) -> Workspace:
    projects = tuple(
        Project(name=d if d != "." else "//", dir=ROOT / d, rel_dir=d, is_root=d == ".")
        for d in dirs
    )
    return Workspace(root=ROOT, manager=Manager.NPM, projects=projects)


@pytest.mark.parametrize(
    ("dirs", "expected"),
    [
        (("a", "b"), {"a": (), "b": ()}),
        (("a", "a/b", "a-b", "a.b"), {"a": ("a/b",), "a/b": (), "a-b": (), "a.b": ()}),
        ((".", "a", "a/b"), {"//": ("a", "a/b"), "a": ("a/b",), "a/b": ()}),
        (("p/x", "p/x/y/z", "p/xy"), {"p/x": ("p/x/y/z",), "p/x/y/z": (), "p/xy": ()}),
    ],
)
def test_nested_dirs(dirs: tuple[str, ...], expected: dict[str, tuple[str, ...]]) -> None:
    assert nested_dirs(ws(*dirs)) == expected
