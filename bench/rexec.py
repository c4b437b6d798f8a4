#!/usr/bin/env python3
"""Remote execution's wall clock for a build of N `sleep`-bound tasks on 1, 2 and 4 workers.

    python3 bench/rexec.py [--tasks 100] [--sleep 1.0] [--workers 1,2,4] [--work DIR]

One BuildGrid server (the test setup's: PostgreSQL + `bgd` from tests/e2e/remoteservers.py)
serves every row; each row starts its `vx worker` processes, runs `vx run build --all
--executor reapi` on a fresh workspace of independent tasks (its label in every source, so
no row finds another's results in BuildGrid's action cache) and stops the workers. The
client's concurrency is twice the worker count, so the workers, not the client, are the
limit. Prints a markdown table: wall, speedup over one worker, and the ideal (N x sleep /
workers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.e2e.remoteservers import buildgrid_exec_server  # noqa: E402


def workspace(root: Path, tasks: int, sleep: float, label: str) -> None:
    pkgs = root / "packages"
    root.mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps({"name": "root", "private": True, "workspaces": ["packages/*"]})
    )
    for i in range(tasks):
        pkg = pkgs / f"t{i:03d}"
        (pkg / "src").mkdir(parents=True)
        (pkg / "package.json").write_text(json.dumps({"name": f"t{i:03d}"}))
        (pkg / "src" / "in.txt").write_text(f"{label} {i}\n")
        build = {
            "exec": {"command": f"sleep {sleep} && mkdir -p dist && cp src/in.txt dist/"},
            "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
        }
        (pkg / "vx.config.json").write_text(json.dumps({"tasks": {"build": build}}))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def row(url: str, work: Path, count: int, tasks: int, sleep: float) -> float:
    ws = work / f"ws-{count}"
    workspace(ws, tasks, sleep, f"w{count}-{time.time_ns()}")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work / f"home-{count}"),
           "VX_REAPI_URL": url, "GIT_CONFIG_GLOBAL": "/dev/null"}  # fmt: skip
    workers = [
        subprocess.Popen(
            [sys.executable, str(REPO / "vx.py"), "worker", "--dir", str(work / f"s{count}-{i}")],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        for i in range(count)
    ]
    try:
        argv = [sys.executable, str(REPO / "vx.py"), "run", "build", "--all", "--executor",
                "reapi", "--concurrency", str(2 * count)]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"the {count}-worker run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return wall
    finally:
        for proc in workers:
            proc.terminate()
        for proc in workers:
            proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="vx-rexec-"))
    counts = [int(c) for c in args.workers.split(",")]
    walls: dict[int, float] = {}
    with buildgrid_exec_server(work / "bgd", keepalive_s=30) as server:
        for count in counts:
            walls[count] = row(server.url, work, count, args.tasks, args.sleep)
            sys.stderr.write(f"{count} worker(s): {walls[count]:.1f} s\n")
    base = walls[counts[0]]
    out = [
        f"| workers | wall (s) | speedup vs {counts[0]} | ideal (s) |",
        "| --- | --- | --- | --- |",
    ]
    for count in counts:
        ideal = args.tasks * args.sleep / count
        out.append(f"| {count} | {walls[count]:.1f} | {base / walls[count]:.2f}x | {ideal:.0f} |")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
