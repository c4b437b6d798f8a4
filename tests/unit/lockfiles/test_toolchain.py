"""The root's toolchain: its own external packages, each alone too; a member it links is not."""

from __future__ import annotations

from vx.lockfiles.model import Dep, LockGraph, Node, toolchain_closures


def _graph() -> LockGraph:
    nodes = {
        "esbuild@1": Node("esbuild", "1", "sha-e", ("bin@1",)),
        "bin@1": Node("bin", "1", "sha-b", ()),
        "ms@2": Node("ms", "2", "sha-m", ()),
        "six@1": Node("six", "1", "sha-s", ()),
    }
    importers = {
        ".": {
            "esbuild": Dep("esbuild@1", dev=True),
            "ms": Dep("ms@2", dev=False),
            "app": Dep("\0link:packages/app", dev=False),
        },
        "packages/app": {"six": Dep("six@1", dev=False)},
    }
    return LockGraph(importers=importers, nodes=nodes, install={})


def _names(found: tuple) -> list[str]:
    return [f"{p.name}@{p.version} via {p.via}" for p in found]


def test_the_toolchain_holds_the_roots_external_packages_and_each_alone() -> None:
    found = toolchain_closures(_graph())
    assert sorted(found) == ["", "esbuild", "ms"]  # the linked member is no toolchain
    assert _names(found[""]) == ["bin@1 via esbuild", "esbuild@1 via esbuild", "ms@2 via ms"]
    assert _names(found["esbuild"]) == ["bin@1 via esbuild", "esbuild@1 via esbuild"]
    assert _names(found["ms"]) == ["ms@2 via ms"]


def test_no_root_importer_is_no_toolchain() -> None:
    graph = _graph()
    assert toolchain_closures(graph._replace(importers={"packages/app": {}})) == {}
