"""A generated workspace of many packages, for scheduling tests: same seed, same graph."""

from __future__ import annotations

import random
import shutil
from typing import TYPE_CHECKING, Any

from tests.e2e.runws import package

if TYPE_CHECKING:
    from pathlib import Path

BUILD_SH = """\
# $1 is this package; the rest are the packages it depends on. Everything lands in ../../log.
log=../../log
name=$1
shift
echo "start $name" >> $log/events
for dep in "$@"; do
  [ -e "$log/done/$dep" ] || echo "$name started before $dep was done" >> $log/violations
done
: > "$log/running/$name"
ls "$log/running" | wc -l > "$log/count/$name"
sleep 0.05
rm "$log/running/$name"
: > "$log/done/$name"
echo "end $name" >> $log/events
"""


def names(count: int) -> list[str]:
    return [f"pkg-{i:03d}" for i in range(count)]


def dependencies(count: int, *, seed: int = 7) -> dict[str, tuple[str, ...]]:
    """Each package depends on up to three earlier ones, so the graph is acyclic by construction."""
    rng = random.Random(seed)  # noqa: S311 - a fixed shape, not a secret
    all_names = names(count)
    deps: dict[str, tuple[str, ...]] = {}
    for i, name in enumerate(all_names):
        picked = rng.sample(range(i), rng.randint(0, min(3, i)))
        deps[name] = tuple(all_names[j] for j in sorted(picked))
    return deps


def closure(deps: dict[str, tuple[str, ...]], start: str) -> set[str]:
    """`start` and every package it reaches through its dependencies."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(deps[name])
    return seen


def files(deps: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """An npm workspace whose `build` tasks are uncached and log their start and end."""
    tree: dict[str, Any] = {
        "package.json": {"name": "big", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "log/\n",
        "build.sh": BUILD_SH,
    }
    for name, linked in deps.items():
        command = " ".join(("sh ../../build.sh", name, *linked))
        tree[f"packages/{name}/package.json"] = package(name, linked)
        tree[f"packages/{name}/vx.config.json"] = {
            "tasks": {"build": {"dependsOn": ["^build"], "exec": command}}
        }
    return tree


def fresh_log(root: Path) -> None:
    """An empty log directory for the next run."""
    log = root / "log"
    shutil.rmtree(log, ignore_errors=True)
    for sub in ("running", "count", "done"):
        (log / sub).mkdir(parents=True)
