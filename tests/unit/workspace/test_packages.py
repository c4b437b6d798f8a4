"""Semver ranges, and which manifest dependencies are workspace package edges."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from vx.workspace.model import Manager, Project
from vx.workspace.packages import package_edges, parse_range, parse_version, satisfies

SEMVER_CASES = [
    ("1.2.3", "1.2.3", True),
    ("1.2.4", "1.2.3", False),
    ("1.2.3", "=1.2.3", True),
    ("1.2.3", "v1.2.3", True),
    ("1.2.3", "^1.2.0", True),
    ("1.9.0", "^1.2.0", True),
    ("2.0.0", "^1.2.0", False),
    ("1.1.9", "^1.2.0", False),
    ("0.2.5", "^0.2.3", True),
    ("0.3.0", "^0.2.3", False),
    ("0.0.3", "^0.0.3", True),
    ("0.0.4", "^0.0.3", False),
    ("0.1.0", "^0.x", True),
    ("0.0.5", "^0.0.x", True),
    ("0.1.0", "^0.0.x", False),
    ("1.4.0", "^1.x", True),
    ("1.2.9", "~1.2.3", True),
    ("1.3.0", "~1.2.3", False),
    ("1.2.9", "~1.2", True),
    ("1.3.0", "~1.2", False),
    ("1.9.0", "~1", True),
    ("1.2.3", "~>1.2.0", True),
    ("1.5.0", ">=1 <2", True),
    ("2.0.0", ">=1 <2", False),
    ("1.0.0", ">= 1.0.0", True),
    ("2.0.0", ">1", True),
    ("1.9.0", ">1", False),
    ("1.3.0", ">1.2", True),
    ("1.2.9", ">1.2", False),
    ("1.2.9", "<=1.2", True),
    ("1.3.0", "<=1.2", False),
    ("1.1.9", "<1.2", True),
    ("1.2.0", "<1.2", False),
    ("1.9.9", "1.x", True),
    ("2.0.0", "1.x", False),
    ("1.2.7", "1.2.*", True),
    ("1.3.0", "1.2", False),
    ("1.0.0", "*", True),
    ("1.0.0", "", True),
    ("3.0.0", ">*", False),
    ("2.5.0", "1.x || >=2.5", True),
    ("2.4.0", "1.x || >=2.5", False),
    ("1.5.0", "1.2.3 - 2.3.4", True),
    ("2.3.4", "1.2.3 - 2.3.4", True),
    ("2.3.5", "1.2.3 - 2.3.4", False),
    ("1.2.2", "1.2.3 - 2.3.4", False),
    ("2.3.9", "1.2.3 - 2.3", True),
    ("2.4.0", "1.2.3 - 2.3", False),
    ("2.9.9", "1.2.3 - 2", True),
    ("1.2.0", "1.2 - 2.3.4", True),
    ("1.0.0+build.5", "1.0.0", True),
    # prereleases: only in a range naming one of the same major.minor.patch
    ("1.1.0-beta", "^1.0.0", False),
    ("1.0.0-rc.1", "*", False),
    ("1.0.0-beta.2", "^1.0.0-beta.1", True),
    ("1.0.0-beta.1", "^1.0.0-beta.2", False),
    ("1.0.0", "^1.0.0-beta", True),
    ("1.0.1-beta", "^1.0.0-beta", False),
    ("1.0.0-alpha.10", ">=1.0.0-alpha.2", True),
    ("1.0.0-alpha", ">=1.0.0-alpha.1", False),
    ("1.0.0-1", ">1.0.0-alpha", False),
    ("1.0.0-beta", ">1.0.0-alpha", True),
    ("2.0.0-0", "<2.0.0", False),
    ("1.2.3-rc.1", "1.2.3-rc.1", True),
    # not ranges at all: registry tags, URLs, protocols
    ("1.0.0", "latest", False),
    ("1.0.0", "github:user/repo", False),
    ("1.0.0", "https://example.invalid/x.tgz", False),
    ("1.0.0", "^1.0.0 ^", False),
    ("not.a.version", "*", False),
]


@pytest.mark.parametrize(("version", "spec", "expected"), SEMVER_CASES)
def test_satisfies(version: str, spec: str, expected: bool) -> None:
    assert satisfies(version, spec) is expected


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.0-alpha", "1.0.0-alpha.1"),
        ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
        ("1.0.0-alpha.beta", "1.0.0-beta"),
        ("1.0.0-beta.2", "1.0.0-beta.11"),
        ("1.0.0-rc.1", "1.0.0"),
        ("1.9.0", "1.10.0"),
    ],
)
def test_version_precedence(lower: str, higher: str) -> None:
    low, high = parse_version(lower), parse_version(higher)
    assert low is not None
    assert high is not None
    assert low < high


@pytest.mark.parametrize("spec", ["latest", "next", "1.2.3.4", ">=a", "workspace:*"])
def test_parse_range_refuses_what_is_no_range(spec: str) -> None:
    assert parse_range(spec) is None


ROOT = Path("/repo")


def project(
    name: str,
    rel: str,
    deps: dict[str, str] | None = None,
    version: str | None = "1.0.0",
) -> Project:
    return Project(
        name=name,
        dir=ROOT / rel,
        rel_dir=rel,
        version=version,
        dependencies=MappingProxyType(deps or {}),
    )


@pytest.mark.parametrize(
    ("spec", "dep", "expected"),
    [
        ("workspace:*", "lib", ("lib",)),
        ("workspace:^", "lib", ("lib",)),
        ("workspace:~", "lib", ("lib",)),
        ("workspace:^1.0.0", "lib", ("lib",)),
        ("workspace:^9.0.0", "lib", ("lib",)),
        ("workspace:../waluigi", "luigi", ("waluigi",)),
        ("workspace:../nowhere", "lib", ()),
        ("workspace:waluigi@*", "alias", ("waluigi",)),
        ("workspace:*", "not-a-member", ()),
        ("file:../lib", "anything", ("lib",)),
        ("link:../waluigi", "lib", ("waluigi",)),
        ("portal:../lib", "lib", ("lib",)),
        ("file:../lib.tgz", "lib", ()),
        ("*", "lib", ("lib",)),
        ("", "lib", ("lib",)),
        ("^1.0.0", "lib", ("lib",)),
        ("~1.0", "lib", ("lib",)),
        (">=1 <2", "lib", ("lib",)),
        ("1.x", "lib", ("lib",)),
        ("0.x || 1.x", "lib", ("lib",)),
        ("0.5.0 - 1.5.0", "lib", ("lib",)),
        ("1.0.0", "lib", ("lib",)),
        ("^2.0.0", "lib", ()),
        ("latest", "lib", ()),
        ("npm:lib@^1.0.0", "lib", ()),
        ("^1.0.0", "left-pad", ()),
        ("workspace:*", "app", ()),
    ],
)
def test_js_edges(spec: str, dep: str, expected: tuple[str, ...]) -> None:
    projects = [
        project("app", "packages/app", {dep: spec}),
        project("lib", "packages/lib"),
        project("waluigi", "packages/waluigi"),
    ]
    edges = package_edges(projects, Manager.PNPM)
    assert edges["app"] == expected
    assert edges["lib"] == ()


def test_js_range_needs_a_local_version() -> None:
    projects = [
        project("app", "a", {"lib": "^1.0.0", "b": "*"}),
        project("lib", "lib", version=None),
        project("b", "b", version=None),
    ]
    assert package_edges(projects, Manager.NPM)["app"] == ("b",)


def test_js_path_edge_resolves_links(tmp_path: Path) -> None:
    (tmp_path / "ext" / "b").mkdir(parents=True)
    (tmp_path / "packages").mkdir()
    (tmp_path / "packages" / "b").symlink_to(tmp_path / "ext" / "b")
    app = Project(
        "app",
        tmp_path / "apps" / "app",
        "apps/app",
        dependencies=MappingProxyType({"b": "file:../../ext/b"}),
    )
    b = Project("b", tmp_path / "packages" / "b", "packages/b")
    assert package_edges([app, b], Manager.YARN)["app"] == ("b",)


def test_edges_are_sorted_and_cover_every_project() -> None:
    projects = [
        project("z", "z", {"b": "workspace:*", "a": "workspace:*", "c": "file:../c"}),
        project("a", "a"),
        project("b", "b"),
        project("c", "c"),
    ]
    edges = package_edges(projects, Manager.BUN)
    assert list(edges) == ["a", "b", "c", "z"]
    assert edges["z"] == ("a", "b", "c")


@pytest.mark.parametrize(
    ("deps", "expected"),
    [
        ({"shared-lib": "workspace"}, ("Shared_Lib",)),
        ({"shared-lib": ">=9"}, ("Shared_Lib",)),
        ({"requests": ">=2"}, ()),
        ({"api": "*"}, ()),
    ],
)
def test_uv_edges_name_a_member(deps: dict[str, str], expected: tuple[str, ...]) -> None:
    projects = [project("api", "packages/api", deps), project("Shared_Lib", "packages/shared")]
    assert package_edges(projects, Manager.UV)["api"] == expected


def test_single_package_has_no_edges() -> None:
    projects = [project("solo", ".", {"solo": "*", "x": "workspace:*"})]
    assert dict(package_edges(projects, Manager.SINGLE)) == {"solo": ()}
