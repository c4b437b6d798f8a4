"""Exactly one module spawns processes (STYLE.md rule 6), and the few others that must are named.

Every module is parsed with `ast`; importing `subprocess`, `multiprocessing` or `pty`, or
calling one of `os`'s fork, exec, spawn or shell functions, counts as starting a process.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

SPAWNER = "vx.run.process"
"""Task processes (own group, capture, kill ladder) and `run_captured`'s short commands."""

ALLOWED = {
    "vx.git": "git itself, under a fixed environment; a warm run's one git process is a"
    " posix_spawn, as importing subprocess alone costs more than that process",
    "vx.run.groups.lifeline": "the lifeline shell must outlive a SIGKILL of vx to kill the task groups,"
    " so it is started once per run, apart from the tasks it watches",
    "vx.run.shares": "forked restores: os.fork without exec, workers that settle outputs in"
    " parallel (measured in bench/RESULTS.md)",
    "vx.trace.probe": "runs `true` under the seccomp notifier, `strace -f true` and `bwrap"
    " --ro-bind / / true` once each to learn whether the kernel lets them work here; the tracer sits at L0, below vx.run, so the audit,"
    " init --observe and vx info share one probe",
    "vx.__main__": "os.execv replaces `python -m vx` with the platform wheel's binary: nothing"
    " is spawned beside vx",
}

_MODULES = frozenset({"subprocess", "multiprocessing", "pty"})
_OS_CALLS = frozenset(
    {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp"}
    | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def spawns(tree: ast.AST) -> list[str]:
    """What in `tree` starts a process, with its line."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in _MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if (node.module or "").split(".")[0] in _MODULES:
                found.append(f"{node.lineno}: from {node.module} import …")
            elif node.module == "os":
                found += [
                    f"{node.lineno}: from os import {a.name}"
                    for a in node.names
                    if a.name in _OS_CALLS
                ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in _OS_CALLS
        ):
            found.append(f"{node.lineno}: os.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_spawner_and_the_named_places_start_processes(module: str) -> None:
    if module == SPAWNER or module in ALLOWED:
        return
    found = spawns(ast.parse(MODULES[module].read_text()))
    assert not found, (
        f"{module} starts a process ({'; '.join(found)}): go through {SPAWNER}"
        " (start_process, run_captured), or name the place and why in ALLOWED"
    )


@pytest.mark.parametrize("module", [SPAWNER, *sorted(ALLOWED)])
def test_every_named_place_still_spawns(module: str) -> None:
    """A place that stopped spawning leaves the list, so the list stays the truth."""
    assert spawns(ast.parse(MODULES[module].read_text()))


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import subprocess", True),
        ("from subprocess import run", True),
        ("import multiprocessing.pool", True),
        ("import os\nos.fork()", True),
        ("from os import posix_spawnp", True),
        ("import os\nos.execv('/bin/true', [])", True),
        ("import os\nos.getpid()", False),
        ("from os import path", False),
        ("import selectors", False),
    ],
)
def test_what_counts_as_spawning(source: str, found: bool) -> None:
    assert bool(spawns(ast.parse(source))) is found
