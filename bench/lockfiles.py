"""Time the per-project lockfile closures on a generated pnpm-lock.yaml of ~30 000 lines.

    python3 bench/lockfiles.py [--lines 30000] [--importers 100] [--runs 5] [--seed 20240101]
    python3 bench/lockfiles.py --bun-mb 25 [--runs 3] [--bun-long-line 8000000]
                                   # bun.read on a generated bun.lock (one line that long)

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
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from vx.cache.lockfilekeys import lockfile_keys
from vx.lockfiles import bun, pnpm
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


def generate_bun(megabytes: float, importers: int, seed: int, long_line: int = 0) -> str:
    """A bun.lock (lockfileVersion 1, with the trailing commas bun writes) of about
    `megabytes`: members with a few dependencies each, packages with integrity and
    dependencies, and some keys nested under the package that installs them; with
    `long_line`, a `patchedDependencies` value that many characters long on one line."""
    rng = random.Random(seed)
    count = max(int(megabytes * 1e6) // 260, 10)
    names = [(f"{'@s/' if i % 5 == 0 else ''}pkg-{i:06d}", f"1.{i % 10}.{i % 4}") for i in range(count)]
    out = ["{", '  "lockfileVersion": 1,', '  "workspaces": {', '    "": {', '      "name": "root",', "    },"]
    for m in range(importers):
        deps = ", ".join(f'"{n}": "^{v}"' for n, v in rng.sample(names, 6))
        out += [f'    "packages/m{m:03d}": {{', f'      "name": "m{m:03d}",']
        out += [f'      "dependencies": {{ {deps}, }},', "    },"]
    out.append("  },")
    if long_line:
        out.append(f'  "patchedDependencies": {{ "pkg-000001@1.1.1": "{"p" * long_line}", }},')
    out.append('  "packages": {')
    for m in range(importers):
        out.append(f'    "m{m:03d}": ["m{m:03d}@workspace:packages/m{m:03d}"],')
    for i, (name, version) in enumerate(names):
        later = rng.sample(range(i + 1, count), min(3, count - i - 1))
        deps = ", ".join(f'"{names[j][0]}": "^{names[j][1]}"' for j in later)
        meta = f'{{ "dependencies": {{ {deps}, }} }}' if deps else "{}"
        integrity = f"sha512-{rng.getrandbits(256):064x}=="
        out.append(f'    "{name}": ["{name}@{version}", "", {meta}, "{integrity}"],')
        if i % 50 == 0 and later:
            nested, nv = names[later[0]]
            out.append(f'    "{name}/{nested}": ["{nested}@{nv}-nested", "", {{}}, "{integrity}"],')
    out += ["  },", "}"]
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
    parser.add_argument("--bun-mb", type=float, help="time bun.read on a bun.lock this large")
    parser.add_argument("--bun-long-line", type=int, default=0, help="with a line this long")
    args = parser.parse_args()
    if args.bun_mb:
        bun_text = generate_bun(args.bun_mb, args.importers, args.seed, args.bun_long_line)
        bun_graph = bun.read(bun_text)
        read_s = best(args.runs, lambda: bun.read(bun_text))
        print(
            f"bun.lock: {len(bun_text) / 1e6:.1f} MB, {len(bun_graph.nodes)} packages,"
            f" {args.importers} importers"
        )
        print(f"| step (best of {args.runs}) | wall | cpu |")
        print("| --- | --- | --- |")
        print(f"| read (bun.read) | {_ms(read_s)} |")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"peak RSS of this process: {peak} MB")
        return
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
