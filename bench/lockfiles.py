"""Time the per-project lockfile closures on a generated pnpm-lock.yaml of ~30 000 lines.

    python3 bench/lockfiles.py [--lines 30000] [--importers 100] [--runs 5] [--seed 20240101]

The lockfile is lockfileVersion 9.0: `importers` (one per member, each with a few direct
dependencies and a link to an earlier member), `packages` (resolution, engines) and
`snapshots` (dependencies, some with a peer suffix), shaped as pnpm writes them. Reported,
best of `--runs`: reading it (`pnpm.read`), every member's closure, and the whole cold
`lockfile_keys` step against a warm one (the digests read back from the cache dir, which is
what a run with an unchanged lockfile pays). Imports this checkout's `src/`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from vx.cache.lockfilekeys import lockfile_keys
from vx.lockfiles import pnpm
from vx.lockfiles.read import project_closures
from vx.workspace.model import Manager, Project, Workspace


def generate(lines: int, importers: int, seed: int) -> str:
    """A pnpm v9 lockfile of about `lines` lines."""
    rng = random.Random(seed)
    names = []
    count = max(lines // 11, 10)
    for i in range(count):
        scope = f"@s{i % 7}/" if i % 5 == 0 else ""
        names.append((f"{scope}pkg-{i:05d}", f"{1 + i % 3}.{i % 10}.{i % 4}"))
    out = ["lockfileVersion: '9.0'", "", "settings:", "  autoInstallPeers: true", ""]
    out += ["importers:", ""]
    for m in range(importers):
        out.append(f"  packages/m{m:03d}:")
        out.append("    dependencies:")
        if m:
            out += [f"      m{m - 1:03d}:", "        specifier: workspace:*"]
            out.append(f"        version: link:../m{m - 1:03d}")
        for name, version in rng.sample(names, 6):
            out += [
                f"      '{name}':",
                f"        specifier: ^{version}",
                f"        version: {version}",
            ]
        out.append("")
    out += ["packages:", ""]
    for name, version in names:
        integrity = f"sha512-{rng.getrandbits(256):064x}=="
        out += [f"  '{name}@{version}':", f"    resolution: {{integrity: {integrity}}}"]
        out += ["    engines: {node: '>=18'}", ""]
    out += ["snapshots:", ""]
    for i, (name, version) in enumerate(names):
        deps = [names[j] for j in rng.sample(range(i + 1, count), min(3, count - i - 1))]
        if not deps:
            out += [f"  '{name}@{version}': {{}}", ""]
            continue
        out += [f"  '{name}@{version}':", "    dependencies:"]
        out += [f"      '{d}': {v}" for d, v in deps]
        out.append("")
    return "\n".join(out) + "\n"


class _Files:
    """The one FileTable method `lockfile_keys` reads: the lockfile's content id."""

    def __init__(self, content_id: str) -> None:
        self.content_id = content_id

    def id_of(self, path: str) -> str | None:
        return self.content_id if path == pnpm.NAME else None


def best(runs: int, fn: object) -> tuple[float, float]:
    """The best wall and the best CPU time of `runs` calls (CPU time is what a busy machine
    distorts least)."""
    if not callable(fn):
        raise TypeError(fn)
    walls, cpus = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def _ms(pair: tuple[float, float]) -> str:
    return f"{pair[0] * 1000:.1f} ms | {pair[1] * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=30_000)
    parser.add_argument("--importers", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240101)
    args = parser.parse_args()
    text = generate(args.lines, args.importers, args.seed)
    with tempfile.TemporaryDirectory(prefix="vx-bench-lock-") as scratch:
        root = Path(scratch, "ws")
        root.mkdir()
        (root / pnpm.NAME).write_text(text)
        projects = tuple(
            Project(name=f"m{m:03d}", dir=root / f"packages/m{m:03d}", rel_dir=f"packages/m{m:03d}")
            for m in range(args.importers)
        )
        ws = Workspace(root=root, manager=Manager.PNPM, projects=projects)
        graph = pnpm.read(text)
        read_s = best(args.runs, lambda: pnpm.read(text))
        closures_s = best(args.runs, lambda: project_closures(ws, graph))
        store = Path(scratch, "store")
        cold_ids = iter(range(10**6))
        cold_s = best(
            args.runs,
            lambda: lockfile_keys(ws, _Files(f"cold-{next(cold_ids)}"), store=store),  # type: ignore[arg-type]
        )
        lockfile_keys(ws, _Files("warm"), store=store)  # type: ignore[arg-type]
        warm_s = best(args.runs, lambda: lockfile_keys(ws, _Files("warm"), store=store))  # type: ignore[arg-type]
        sizes = [len(c or ()) for c in project_closures(ws, graph).values()]
    print(
        f"pnpm-lock.yaml: {text.count(chr(10))} lines, {len(text) / 1e6:.1f} MB,"
        f" {len(graph.nodes)} packages, {args.importers} importers,"
        f" closures of {min(sizes)}..{max(sizes)} packages"
    )
    print(f"| step (best of {args.runs}) | wall | cpu |")
    print("| --- | --- | --- |")
    print(f"| read (pnpm.read) | {_ms(read_s)} |")
    print(f"| {args.importers} closures | {_ms(closures_s)} |")
    print(f"| lockfile_keys, cold (read + closures + digests + write) | {_ms(cold_s)} |")
    print(f"| lockfile_keys, warm (digests read back) | {_ms(warm_s)} |")

if __name__ == "__main__":
    main()
