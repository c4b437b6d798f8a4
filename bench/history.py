"""Time `vx last` and `vx why` on a history of 10 000 runs (the target is 0.15 s each).

Builds a small real workspace, runs it once so the index exists, then writes 10 000 more
runs of its three tasks straight through `Index.record_invocation` and `put_entry`, and
times each verb as a user runs it (`python vx.py …`), best of five.

    python3 bench/history.py [--runs 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]

from tests.conftest import make_git_workspace  # noqa: E402
from tests.e2e.runws import tree  # noqa: E402
from vx.cache.index import open_index  # noqa: E402
from vx.cache.runlog import InvocationRow, RunRow  # noqa: E402
from vx.cache.manifest import ArtifactInfo  # noqa: E402
from vx.events import CacheOutcome, TaskStatus  # noqa: E402

CACHE = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}
BUILD = {"exec": "mkdir -p dist && cp src/index.txt dist/", "cache": CACHE, "dependsOn": ["^build"]}


def vx(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "vx.py"), *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        root = make_git_workspace(Path(tmp) / "ws", tree(
            {"core": ((), {"build": BUILD}), "lib": (("core",), {"build": BUILD}),
             "app": (("lib",), {"build": BUILD})}))
        cache = Path(tmp) / "cache"
        env = {**os.environ, "HOME": tmp}
        vx(["run", "build", "--all", "--cache-dir", str(cache)], root, env)
        index = open_index(cache)
        first = index.run_rows(index.invocations(limit=1)[0].run_id)
        inputs = {r.key: index.entry_inputs(r.key or "") for r in first}
        info = ArtifactInfo(0, "0" * 32, ())
        for i in range(runs):
            run_id = f"{i:08x}-0000-7000-8000-000000000000"
            rows = []
            for r in first:
                key = f"{i:08x}{hash(r.task + r.project) & 0xFFFFFFFF:08x}"
                comps = tuple(c if c.kind != "file" else c._replace(digest=key)
                              for c in inputs[r.key])
                index.put_entry(key, project=r.project, task=r.task, artifact=info, inputs=comps)
                rows.append(RunRow(run_id, r.project, r.task, TaskStatus.SUCCESS,
                                   CacheOutcome.MISS, key, 0, 10.0))
            index.record_invocation(
                InvocationRow(run_id, "vx run build --all", i, i + 10, 0, tasks=3), rows)
        index.close()
        out = {}
        for verb in (["last"], ["last", "--list"], ["why", "app#build"]):
            args = [*verb, "--cache-dir", str(cache)]
            out[" ".join(verb)] = min(vx(args, root, env) for _ in range(5))
        print(json.dumps({"runs": runs, "seconds": out}, indent=2))


if __name__ == "__main__":
    main()
