"""Every lockfile reader on lockfiles the real managers wrote (data/), and on damaged ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vx.lockfiles.model import (
    Dep,
    LockfileError,
    LockGraph,
    Node,
    closure,
    link_to,
    member_edges,
    reachable,
)
from vx.lockfiles.read import read_lockfile

DATA = Path(__file__).parent / "data"
MEMBERS = (".", "packages/app", "packages/lone", "packages/ui")

# ms: pnpm dedupes ui's ^2.1.0 onto lone's 2.1.2; the others resolve it to 2.1.3.
JS = {
    "pnpm8": ("pnpm-lock.yaml", "2.1.2"),
    "pnpm9": ("pnpm-lock.yaml", "2.1.2"),
    "npm": ("package-lock.json", "2.1.3"),
    "yarn1": ("yarn.lock", "2.1.3"),
    "yarn4": ("yarn.lock", "2.1.3"),
    "bun": ("bun.lock", "2.1.3"),
}


def _manifests(root: Path) -> dict[str, dict[str, object]]:
    out = {}
    for rel in MEMBERS:
        path = root / rel / "package.json"
        if path.is_file():
            out[rel] = json.loads(path.read_text())
    return out


def _names(found: object) -> list[tuple[str, str, str]]:
    assert isinstance(found, tuple)
    return [(p.name, p.version, p.via) for p in found]


@pytest.mark.parametrize("case", sorted(JS))
def test_js_closures(case: str) -> None:
    name, ms = JS[case]
    root = DATA / case
    graph = read_lockfile(name, (root / name).read_bytes(), _manifests(root))
    assert sorted(graph.importers) == list(MEMBERS)
    assert _names(closure(graph, "packages/ui")) == [("is-number", "7.0.0", "is-number")]
    assert _names(closure(graph, "packages/lone")) == [("ms", "2.1.2", "ms")]
    # app reaches is-number 7 through the member it links, and 6 through its dev dependency
    assert _names(closure(graph, "packages/app")) == [
        ("is-number", "6.0.0", "is-odd"),
        ("is-number", "7.0.0", "@acme/ui"),
        ("is-odd", "3.0.1", "is-odd"),
        ("ms", ms, "ms"),
    ]
    assert closure(graph, ".") == ()
    assert closure(graph, "packages/new") is None
    assert member_edges(graph)["packages/app"] == ("packages/ui",)
    integrity = {p.integrity for p in closure(graph, "packages/lone") or ()}
    assert all(len(i) > 20 for i in integrity), integrity


def test_uv_closures_and_member_edges() -> None:
    root = DATA / "uv"
    graph = read_lockfile("uv.lock", (root / "uv.lock").read_bytes(), {})
    assert sorted(graph.importers) == [".", "packages/a", "packages/b"]
    assert _names(closure(graph, "packages/a")) == [("idna", "3.6", "idna"), ("six", "1.16.0", "b")]
    assert _names(closure(graph, "packages/b")) == [
        ("iniconfig", "2.3.1", "iniconfig"),
        ("six", "1.16.0", "six"),
    ]
    assert member_edges(graph)["packages/a"] == ("packages/b",)
    assert "requires-python" in graph.install


def test_uv_keeps_every_version_a_marker_splits_and_dev_only_when_only_a_group() -> None:
    """data/uv_markers: app locks idna 2.10 below Python 3.10 and 3.20 from it, and six both
    as a dependency and in its `dev` group (so six is not dev only)."""
    text = (DATA / "uv_markers/uv.lock").read_bytes()
    graph = read_lockfile("uv.lock", text, {})
    assert _names(closure(graph, "packages/app")) == [
        ("idna", "2.10", "idna==2.10"),
        ("idna", "3.20", "idna==3.20"),
        ("six", "1.16.0", "six"),
    ]
    production = reachable(graph, {"packages/app"}, production=True)
    assert sorted(graph.nodes[p].name for p in production) == ["idna", "idna", "six"]
    moved = read_lockfile("uv.lock", text.replace(b'version = "2.10"', b'version = "2.9"'), {})
    assert closure(moved, "packages/app") != closure(graph, "packages/app")


def test_install_wide_sections_are_kept_as_written() -> None:
    text = (DATA / "pnpm9/pnpm-lock.yaml").read_text()
    graph = read_lockfile("pnpm-lock.yaml", text.encode(), {})
    assert "autoInstallPeers: true" in graph.install["settings"]
    patched = text.replace("settings:", "overrides:\n  ms: 2.1.3\n\nsettings:", 1)
    other = read_lockfile("pnpm-lock.yaml", patched.encode(), {})
    assert other.install["overrides"] == "overrides:\n  ms: 2.1.3"
    assert closure(other, "packages/ui") == closure(graph, "packages/ui")


PNPM_PEERS = """lockfileVersion: '9.0'

importers:

  packages/web:
    dependencies:
      react-dom:
        specifier: ^18
        version: 18.3.1(react@18.3.1)
      strw:
        specifier: npm:string-width@4.2.3
        version: string-width@4.2.3

packages:

  react-dom@18.3.1:
    resolution: {integrity: sha512-dom}
    peerDependencies:
      react: ^18.3.1

  react@18.3.1:
    resolution: {integrity: sha512-react}

  string-width@4.2.3:
    resolution: {tarball: 'https://example.invalid/string-width-4.2.3.tgz'}

snapshots:

  react-dom@18.3.1(react@18.3.1):
    dependencies:
      react: 18.3.1

  react@18.3.1: {}

  string-width@4.2.3: {}
"""


def test_pnpm_peer_suffixes_and_aliases() -> None:
    graph = read_lockfile("pnpm-lock.yaml", PNPM_PEERS.encode(), {})
    found = closure(graph, "packages/web") or ()
    assert [(p.name, p.version, p.integrity, p.via) for p in found] == [
        ("react", "18.3.1", "sha512-react", "react-dom"),
        ("react-dom", "18.3.1(react@18.3.1)", "sha512-dom", "react-dom"),
        ("string-width", "4.2.3", "https://example.invalid/string-width-4.2.3.tgz", "strw"),
    ]


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\n\nimporters:\n", "lockfileVersion 5.4"),
        ("pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters\n", "expected `key: value`"),
        ("package-lock.json", '{"lockfileVersion": 1, "dependencies": {}}', "no `packages` map"),
        ("package-lock.json", "{", "not JSON"),
        ("yarn.lock", "hello\n", "neither a classic"),
        ("bun.lock", '{"lockfileVersion": 9, "packages": {}}', "lockfileVersion 9"),
        ("uv.lock", "version = 2\n", "version 2"),
        ("bun.lockb", "\0\1", "does not read"),
        ("uv.lock", "\xff", "not UTF-8"),
    ],
)
def test_unreadable_lockfiles_say_why(name: str, text: str, says: str) -> None:
    data = text.encode("latin-1")
    with pytest.raises(LockfileError, match=None) as caught:
        read_lockfile(name, data, {})
    assert says in str(caught.value)
    assert name.split(".", maxsplit=1)[0] in str(caught.value)


def _chain_graph(*, locked_leaf: bool) -> LockGraph:
    """m0 → m1 → … → m5 by production links; m5 optionally depends on a locked package."""
    importers: dict[str, dict[str, Dep]] = {}
    for i in range(5):
        importers[f"m{i}"] = {f"m{i + 1}": Dep(link_to(f"m{i + 1}"), dev=False)}
    importers["m5"] = {"ms": Dep("ms@1", dev=False)} if locked_leaf else {}
    importers["m5"]["dev-only"] = Dep("dev@1", dev=True)
    nodes = {
        "ms@1": Node("ms", "1", "sha-ms", ()),
        "dev@1": Node("dev", "1", "sha-dev", ()),
    }
    return LockGraph(importers, nodes, {})


def test_closures_through_member_chains_with_and_without_locked_packages() -> None:
    loud = _chain_graph(locked_leaf=True)
    assert [_names(closure(loud, f"m{i}")) for i in range(6)] == [
        *([[("ms", "1", f"m{i + 1}")] for i in range(5)]),
        [("dev", "1", "dev-only"), ("ms", "1", "ms")],
    ]
    quiet = _chain_graph(locked_leaf=False)
    assert [closure(quiet, f"m{i}") for i in range(5)] == [()] * 5
    assert _names(closure(quiet, "m5")) == [("dev", "1", "dev-only")]
