#!/usr/bin/env python3
"""What `vx run --audit` costs: a file-heavy task, the N-package cold build, warm and restore.

    python3 bench/audit.py [--work /tmp/vx-bench-audit] [-n 100] [--files 5000]
                           [--runs 5] [--runs-slow 3] [--json FILE]
                           [--tracer auto|seccomp|strace] [--scenarios file-heavy,cold,...]

Scenarios, each timed without and with `--audit` (tools taking turns, min and median):
  file-heavy  one task that opens --files files (`find src -type f -exec cat {} +`), forced
  cold        `vx run build --all --force` on bench/mkrepo.py's N-package repo
  warm        `vx run build --all`, every task a hit (a hit is never traced)
  restore     the same after `rm -rf packages/*/dist` (restored, not traced)
The ratio column is with / without; the issue's target is at most 1.5x. `--tracer` is handed
to vx as VX_TRACER (vx's seccomp notifier, strace, or the first that works). stdlib only; vx
runs as a subprocess from this checkout (`vx.py`), strace from PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VX = HERE.parent / "vx.py"


TRACER = {"name": "auto"}


def _vx(args: list[str], cwd: Path, home: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VX_")}
    env["HOME"] = str(home)
    env["VX_TRACER"] = TRACER["name"]
    started = time.perf_counter()
    subprocess.run([sys.executable, str(VX), *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - started


def _git(root: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def heavy_repo(root: Path, files: int) -> Path:
    """One package whose build opens `files` small files."""
    shutil.rmtree(root, ignore_errors=True)
    src = root / "packages/heavy/src"
    for i in range(files):
        sub = src / f"d{i % 50}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i}.txt").write_text(f"{i}\n" * 8)
    (root / "package.json").write_text(json.dumps({"name": "r", "workspaces": ["packages/*"]}))
    (root / ".gitignore").write_text("dist/\n")
    pkg = root / "packages/heavy"
    (pkg / "package.json").write_text(json.dumps({"name": "heavy", "version": "1.0.0"}))
    build = "mkdir -p dist && find src -type f -exec cat {} + > dist/all.txt"
    cache = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}
    (pkg / "vx.config.json").write_text(
        json.dumps({"tasks": {"build": {"exec": build, "cache": cache}}})
    )
    _git(root)
    return root


def n_repo(root: Path, n: int) -> Path:
    subprocess.run([sys.executable, str(HERE / "mkrepo.py"), str(root), "--packages", str(n),
                    "--tool", "vx", "--force"], check=True, capture_output=True)  # fmt: skip
    return root


def sample(scenario: str, root: Path, home: Path, audit: bool) -> float:
    flag = ["--audit"] if audit else []
    if scenario == "file-heavy":
        return _vx(["run", "heavy#build", "--force", *flag], root, home)
    if scenario == "cold":
        return _vx(["run", "build", "--all", "--force", *flag], root, home)
    if scenario == "restore":
        for dist in root.glob("packages/*/dist"):
            shutil.rmtree(dist)
    return _vx(["run", "build", "--all", *flag], root, home)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/vx-bench-audit")
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--runs-slow", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--tracer", default="auto", choices=("auto", "seccomp", "strace"))
    ap.add_argument("--scenarios", default="file-heavy,cold,warm,restore")
    opts = ap.parse_args(argv)
    TRACER["name"] = opts.tracer
    wanted = set(opts.scenarios.split(","))
    work = Path(opts.work)
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    heavy = heavy_repo(work / "heavy", opts.files)
    repo = n_repo(work / f"n{opts.n}", opts.n)
    _vx(["run", "heavy#build"], heavy, home)
    _vx(["run", "build", "--all"], repo, home)  # fills the cache warm and restore read
    plan = [("file-heavy", heavy, opts.runs), ("cold", repo, opts.runs_slow),
            ("warm", repo, opts.runs), ("restore", repo, opts.runs)]  # fmt: skip
    results: dict[str, dict[str, list[float]]] = {}
    print("| scenario | without (min / median) | with --audit (min / median) | ratio (median) |")
    print("| --- | --- | --- | --- |")
    for scenario, root, runs in plan:
        if scenario not in wanted:
            continue
        got: dict[str, list[float]] = {"off": [], "audit": []}
        for _ in range(runs):
            for mode in ("off", "audit"):
                got[mode].append(sample(scenario, root, home, mode == "audit"))
        results[scenario] = got
        off, on = statistics.median(got["off"]), statistics.median(got["audit"])
        print(f"| {scenario} | {min(got['off']):.3f} s / {off:.3f} s |"
              f" {min(got['audit']):.3f} s / {on:.3f} s | {on / off:.2f}x |")  # fmt: skip
    out = Path(opts.json) if opts.json else work / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
