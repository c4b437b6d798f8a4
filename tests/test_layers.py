"""The layers of DESIGN.md, held by reading every module's imports (inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# A unit is a top-level module or subpackage of vx; a unit may import any unit of a lower
# layer, plus the listed L0 edges. Siblings in one layer may not import each other.
LAYER = {
    "vx.util": 0,
    "vx.errors": 0,
    "vx.ids": 0,
    "vx.git": 0,
    "vx.events": 0,
    "vx.trace": 0,  # the task tracer and the sandbox probe: stdlib and vx.util only
    "vx.workspace": 1,  # discovery, manifests, configs, the package graph
    "vx.lockfiles": 2,  # the lockfile readers: below the loader, which reads uv.lock's edges
    "vx.foreign": 2,  # turbo.json / nx.json read live: below the loader, which asks them
    "vx.loader": 3,  # assembles a Workspace from the three below it; vx-lock.json over it
    "vx.selection": 4,
    "vx.adopt": 4,
    "vx.prune": 4,
    "vx.audit": 5,  # a trace held against the config: findings out, and the patch init would write
    "vx.graph": 5,
    "vx.otel": 5,  # events in, spans out: it reads nothing of a run but its events
    "vx.cache": 5,
    "vx.shard": 5,  # sharding's pure parts: spec, digest, deal, the run's record
    "vx.remoteexec": 5.5,  # actions over REAPI: above the cache client, below the run it serves
    "vx.run": 6,
    "vx.history": 6,
    "vx.output": 6,
    "vx.plugins": 6,
    "vx.manual": 6,
    "vx.selfupdate": 7,  # over run: `vx upgrade` asks the new binary its version through run/process
    "vx.watch": 7,
    "vx.observe": 7,  # `vx init --observe`: runs tasks under the tracer through run/process.py
    "vx.worker": 7,  # `vx worker` runs leased actions through the run's one spawner
    "vx.mcp": 7,  # reads the history and plans, and may run tasks (--allow-run)
    "vx.cli": 8,
    "vx.__main__": 9,  # `python -m vx`, over the CLI: its entry, or the platform wheel's binary
    "vx": 8,  # the public API (`vx.run`, `vx.plan_run`) sits beside the CLI, over the engine
}
# Module-level edges between siblings that DESIGN.md lists.
MODULE_EDGES = {
    "vx.run.prepare": {"vx.plugins"},  # a run asks the plugins for its cache layers
}
# Pure algorithms over any hashable node that import only L0 units: every layer above L0 may
# use them, so the package-graph walks below graph/ (selection, prune) share graph/'s closure.
SHARED = {"vx.graph.algo"}
# Rules inside a package: a module that must never import a unit, and why.
NEVER = {
    "vx.run.executor": {"vx.graph"},  # it runs one task; the scheduler walks the graph
}
L0_EDGES = {
    "vx.git": {"vx.errors", "vx.ids", "vx.util"},
    "vx.events": {"vx.errors", "vx.ids", "vx.util"},
    "vx.trace": {"vx.util"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _unit(module: str) -> str:
    """`vx.graph.build` → `vx.graph`; `vx.errors` → `vx.errors`; `vx` → `vx`."""
    return ".".join(module.split(".")[:2])


def _imports(module: str, tree: ast.AST, *, top_level_only: bool = False) -> list[tuple[int, str]]:
    """Every vx module `module` imports, with the line; `from pkg import sub` counts as `pkg.sub`."""
    is_package = MODULES[module].name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    nodes = ast.iter_child_nodes(tree) if top_level_only else ast.walk(tree)
    found: list[tuple[int, str]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((node.lineno, sub if sub in MODULES else target))
        elif top_level_only and isinstance(node, ast.If):
            found += _imports(module, ast.Module(body=node.body, type_ignores=[]))
    return [(line, name) for line, name in found if name == "vx" or name.startswith("vx.")]


def _allowed(importer: str, imported: str) -> bool:
    src, dst = _unit(importer), _unit(imported)
    if dst in NEVER.get(importer, set()):
        return False
    if imported in SHARED and LAYER.get(src, 0) > 0:
        return True
    if dst == src or (dst == "vx" and src != "vx"):
        return True
    if src not in LAYER or dst not in LAYER:
        return False
    if dst in L0_EDGES.get(src, set()) or dst in MODULE_EDGES.get(importer, set()):
        return True
    return LAYER[dst] < LAYER[src]


def test_every_unit_has_a_layer() -> None:
    units = {_unit(m) for m in MODULES} - {"vx"}
    assert units <= LAYER.keys(), (
        f"units with no layer in DESIGN.md: {sorted(units - LAYER.keys())}"
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_respect_the_layers(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    bad = [
        f"{MODULES[module].relative_to(SRC)}:{line} imports {name}"
        for line, name in _imports(module, tree)
        if not _allowed(module, name)
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(SHARED))
def test_a_shared_module_imports_only_the_lowest_layer(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    above = [name for _, name in _imports(module, tree) if LAYER.get(_unit(name)) != 0]
    assert above == [], f"{module} may be imported from any layer, so it imports L0 only"


def test_the_public_api_imports_no_engine_at_load() -> None:
    """`import vx` (what a .py config does) must cost nothing: the API loads lazily."""
    tree = ast.parse(MODULES["vx"].read_text())
    assert _imports("vx", tree, top_level_only=True) == []


@pytest.mark.parametrize(
    ("importer", "imported", "ok"),
    [
        ("vx.cli.main", "vx.errors", True),
        ("vx.run.executor", "vx.output.console", False),
        ("vx.output.render", "vx.run.plan", False),
        ("vx.cache.key", "vx.graph.model", False),
        ("vx.graph.build", "vx.cache.key", False),
        ("vx.graph.build", "vx.workspace.model", True),
        ("vx.loader.assemble", "vx.graph.build", False),
        ("vx.util.globs", "vx.errors", False),
        ("vx.util.globs", "vx.util.fuzzy", True),
        ("vx.git", "vx.errors", True),
        ("vx.errors", "vx.ids", False),
        ("vx.watch.loop", "vx.run.plan", True),
        ("vx.history.runs", "vx.cli.main", False),
        ("vx.cache.index", "vx", True),
        ("vx.selection.filter", "vx.graph.algo", True),
        ("vx.selection.filter", "vx.graph.build", False),
        ("vx.util.globs", "vx.graph.algo", False),
        ("vx.workspace.model", "vx.foreign.driver", False),
        ("vx.foreign.driver", "vx.lockfiles.uv", False),
        ("vx.loader.assemble", "vx.foreign.driver", True),
        ("vx.loader.assemble", "vx.selection.filter", False),
        ("vx.adopt.migrate", "vx.loader.assemble", True),
        ("vx.prune.subset", "vx.adopt.migrate", False),
        ("vx.run.executor", "vx.graph.model", False),
        ("vx.run.scheduler", "vx.graph.model", True),
    ],
)
def test_the_rule_itself(importer: str, imported: str, ok: bool) -> None:
    assert _allowed(importer, imported) is ok
