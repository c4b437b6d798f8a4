"""One owner per mechanism: the copies that were merged into one stay gone.

Each check parses the code with `ast`, so it holds whatever a module is named or where it
moves; docs/architecture.md § One owner per mechanism names each owner. The spawner has its
own test (tests/test_spawns.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


TREES = {_module_name(p): ast.parse(p.read_text()) for p in sorted(SRC.rglob("*.py"))}


def _names_used(tree: ast.AST) -> set[str]:
    """Every bare name and attribute name a module mentions, imports included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.rpartition(".")[2])
    return found


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


@pytest.mark.parametrize(
    ("names", "scope", "owners"),
    [
        # Where the cache lives: composed once, in locate_cache.
        ({"resolve_location", "remembered_identity"}, "vx", {"vx.cache.location"}),
        # A hit's events: the one place that replays a hit's log and finishes it.
        ({"hit_outcome"}, "vx", {"vx.run.hits"}),
        # A run's history questions: asked of TaskHistory, not of the cache seam (the history
        # verbs read the same rows on their own side).
        (
            {"last_entry_inputs", "key_outcomes", "recent_durations"},
            "vx.run",
            {"vx.run.taskhistory"},
        ),
    ],
)
def test_a_mechanism_is_used_only_by_its_owner(
    names: set[str], scope: str, owners: set[str]
) -> None:
    users = {
        m
        for m, tree in TREES.items()
        if (m == scope or m.startswith(scope + "."))
        and names & _names_used(tree)
        and not m.startswith(("vx.cache.index", "vx.cache.runlog"))
    }
    assert users <= owners, (
        f"{sorted(names)} used outside {sorted(owners)}: {sorted(users - owners)}"
    )


@pytest.mark.parametrize(
    "module",
    [
        "vx.selection.filter",
        "vx.prune.subset",
        "vx.prune.uv",
        "vx.watch.targets",
        "vx.run.affected",
    ],
)
def test_the_package_graph_walks_use_the_one_closure(module: str) -> None:
    assert "vx.graph.algo" in {
        i.rpartition(".")[0] if i.count(".") > 2 else i for i in _imports(TREES[module])
    }


# Walks over the package graph written out by hand, and why each may stay.
HAND_WALKS = {
    # A search, not a closure: it stops at the first changed config-less package a `^name`
    # edge passes through, and the reason names it.
    ("vx.run.affected", "_passed_through"),
}


def test_no_other_closure_is_written_by_hand() -> None:
    """A `while` loop that reads `package_deps` is a closure by hand; graph.algo has one."""
    found = set()
    for module, tree in TREES.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            loops = [n for n in ast.walk(fn) if isinstance(n, ast.While)]
            if any("package_deps" in _names_used(loop) for loop in loops):
                found.add((module, fn.name))
    assert found <= HAND_WALKS, (
        f"walk the package graph with vx.graph.algo: {sorted(found - HAND_WALKS)}"
    )


def test_show_asks_the_engine_for_the_affected_projects() -> None:
    imported = _imports(TREES["vx.cli.show"])
    assert "vx.run.affected" in imported
    assert not {i for i in imported if i.startswith("vx.selection.affected")}


@pytest.mark.parametrize("module", ["vx.run.caching", "vx.run.localcache", "vx.run.remote.cache"])
def test_the_cache_seam_answers_no_history_questions(module: str) -> None:
    defined = {
        n.name
        for n in ast.walk(TREES[module])
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    assert not defined & {"miss_reason", "flaky", "durations"}
