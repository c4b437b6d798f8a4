"""Shard balance: how far the slowest of N shards is from a perfect split, vx's deal against
equal slicing (moon's `--job`/`--job-total`: the target list cut into N equal runs).

Generates `shared/bench/genrepo.py`'s workspace (N=1000 by default), writes a recorded history
into a fresh cache's index (three successful runs of every `build` and `test`, durations drawn
from a seeded log-normal with a few heavy packages, so the figures are deterministic), then
asks vx itself: `vx run build test --all --dry=json` for each task's p50 and deps, and
`--shard 1/N --dry=json` for the deal. Figures are expected work (ms), not measured runs.

    python3 bench/shard.py [--packages 1000] [--shards 2,4,8] [--genrepo PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO), str(REPO / "bench")]

import compare  # noqa: E402  (bench/compare.py: which repo generator to use)
from vx.cache.index import InvocationRow, RunRow, open_index  # noqa: E402
from vx.events import CacheOutcome, TaskStatus  # noqa: E402

SEED = 20261206


def durations(packages: list[str]) -> dict[tuple[str, str], float]:
    """Each task's typical duration: builds around 8 s, tests around 4 s, log-normal spread,
    and one package in fifty ten times heavier (the slow package that sinks equal slicing)."""
    rng = random.Random(SEED)
    out: dict[tuple[str, str], float] = {}
    for name in packages:
        heavy = 10.0 if rng.random() < 0.02 else 1.0
        out[(name, "build")] = 8000.0 * heavy * rng.lognormvariate(0, 0.8)
        out[(name, "test")] = 4000.0 * heavy * rng.lognormvariate(0, 0.8)
    return out


def record(cache: Path, typical: dict[tuple[str, str], float]) -> None:
    """Three successful runs of every task, at 0.9x, 1x and 1.1x: the p50 is the typical."""
    index = open_index(cache)
    for i, factor in enumerate((0.9, 1.0, 1.1)):
        run_id = f"{i:08x}-0000-7000-8000-000000000000"
        rows = [
            RunRow(run_id, p, t, TaskStatus.SUCCESS, CacheOutcome.MISS, None, 0, ms * factor)
            for (p, t), ms in sorted(typical.items())
        ]
        index.record_invocation(
            InvocationRow(run_id, "vx run build test --all", i, i + 1, 0, tasks=len(rows)), rows
        )
    index.close()


def vx_json(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(REPO / "vx.py"), *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True)  # fmt: skip
    return json.loads(done.stdout), time.perf_counter() - start


def equal_slices(tasks: list[str], shards: int) -> list[list[str]]:
    """moon's split: the targets in order, cut into `shards` runs of (nearly) equal count."""
    size, extra = divmod(len(tasks), shards)
    out, at = [], 0
    for i in range(shards):
        n = size + (1 if i < extra else 0)
        out.append(tasks[at : at + n])
        at += n
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--shards", default="2,4,8")
    parser.add_argument("--genrepo", default=None,
                        help="repo generator (default: shared genrepo.py if present, else mkrepo.py)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws, cache = Path(tmp) / "ws", Path(tmp) / "cache"
        generator = compare.find_generator(opts.genrepo)
        subprocess.run([sys.executable, str(generator), str(ws), "--packages",
                        str(opts.packages), "--tool", "vx"], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        env = {**os.environ, "HOME": tmp, "VX_WARM": "0"}
        names = sorted(p.name for p in (ws / "packages").iterdir())
        record(cache, durations(names))
        base = ["run", "build", "test", "--all", "--cache-dir", str(cache)]
        plan, _ = vx_json([*base, "--dry=json"], ws, env)
        cost = {t["id"]: t.get("p50Ms") or 0.0 for t in plan["tasks"]}
        deps = {t["id"]: t["deps"] for t in plan["tasks"]}
        total = sum(cost.values())
        results = []
        for n in (int(s) for s in opts.shards.split(",")):
            doc, seconds = vx_json([*base, f"--shard=1/{n}", "--dry=json"], ws, env)
            owner = {t: p["shard"] for p in doc["parts"] for t in p["tasks"]}
            slowest = max(p["expectedMs"] for p in doc["parts"])
            sliced = max(sum(cost[t] for t in s) for s in equal_slices(sorted(cost), n))
            ideal = total / n
            crossing = sum(owner[t] != owner[d] for t, ds in deps.items() for d in ds)
            results.append({
                "shards": n, "ideal_s": round(ideal / 1000, 1),
                "vx_slowest_s": round(slowest / 1000, 1), "vx_x_ideal": round(slowest / ideal, 3),
                "equal_slicing_slowest_s": round(sliced / 1000, 1),
                "equal_slicing_x_ideal": round(sliced / ideal, 3),
                "vx_cross_shard_edges": crossing,
                "edges": sum(len(ds) for ds in deps.values()),
                "dry_shard_wall_s": round(seconds, 2),
            })  # fmt: skip
        print(json.dumps({"packages": opts.packages, "tasks": len(cost),
                          "total_work_s": round(total / 1000, 1), "results": results}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
