#!/usr/bin/env python3
"""CPU of a cold `vx run build --all` beside its floor, split into vx's own and its tasks'.

    python3 bench/coldcpu.py --repo WORK/repos/n1000 --vx SRC [--vx SRC2 ...] [--runs 5]

The repo is one `bench/compare.py` made (`--scenarios floor` is enough). Each round runs, in
turn, every given vx (`SRC` is a checkout's `src/` dir, or `LABEL=SRC`) cold, with an empty
store and no `dist/`, and then the floor: every package's build command through
`xargs -0 -P<workers> -n1 sh -c`, as `compare.py`'s floor scenario. vx runs in a child
Python that calls `vx.cli.main.main` in-process, so `RUSAGE_SELF` is vx's own CPU and
`RUSAGE_CHILDREN` its tasks'. CPU, not wall: on a shared 2-core machine the wall clock
of a run measures the other sessions as much as vx. Prints medians, and the CPU per task
beyond the floor. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from vx.cli.main import main
start = time.monotonic()
main(["run", "build", "--all"])
wall = time.monotonic() - start
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
os.write(int(sys.argv[2]), json.dumps({"wall": wall, "self": own.ru_utime + own.ru_stime,
                        "tasks": kids.ru_utime + kids.ru_stime}).encode())
os._exit(0)
"""


def clean(repo: Path, home: Path) -> None:
    shutil.rmtree(home / ".vx", ignore_errors=True)
    shutil.rmtree(repo / ".vx", ignore_errors=True)
    for dist in (repo / "packages").glob("*/dist"):
        shutil.rmtree(dist)


def cold(repo: Path, home: Path, src: str) -> dict[str, float]:
    clean(repo, home)
    read_end, write_end = os.pipe()
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, src, str(write_end)],
            cwd=repo,
            env=env,
            stdout=null,
            stderr=null,
            pass_fds=(write_end,),
        )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        data = fh.read()
    proc.wait()
    return json.loads(data)


def floor(repo: Path, listing: Path, workers: int) -> dict[str, float]:
    for dist in (repo / "packages").glob("*/dist"):
        shutil.rmtree(dist)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = ["xargs", "-0", f"-P{workers}", "-n1", "-a", str(listing), "sh", "-c"]
    subprocess.run(cmd, cwd=repo, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"tasks": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--vx", action="append", required=True, help="SRC or LABEL=SRC")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    a = ap.parse_args()
    repo = a.repo.resolve()
    home = repo.parent.parent / "home"
    home.mkdir(exist_ok=True)
    jobs = []
    for pkg in sorted((repo / "packages").iterdir()):
        command = json.loads((pkg / "vx.config.json").read_text())["tasks"]["build"]["exec"]
        jobs.append(f"cd {pkg.relative_to(repo)} && {command['command']}")
    listing = repo.parent.parent / "coldcpu-commands"
    listing.write_text("".join(job + "\0" for job in jobs))
    tools = dict(v.split("=", 1) if "=" in v else (v, v) for v in a.vx)
    samples: dict[str, list[dict[str, float]]] = {label: [] for label in [*tools, "floor"]}
    for _ in range(a.runs):
        for label, src in tools.items():
            samples[label].append(cold(repo, home, str(Path(src).resolve())))
        samples["floor"].append(floor(repo, listing, a.workers))
    base = statistics.median(s["tasks"] for s in samples["floor"])
    print(f"N={len(jobs)}, {a.runs} rounds, -P{a.workers}; medians, CPU seconds (user+sys)")
    print("| run | vx's own | its tasks' | total | / floor | ms per task beyond the floor |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, rows in samples.items():
        own = statistics.median(r.get("self", 0.0) for r in rows)
        kids = statistics.median(r["tasks"] for r in rows)
        total = statistics.median(r.get("self", 0.0) + r["tasks"] for r in rows)
        extra = (total - base) * 1000 / len(jobs)
        print(
            f"| {label} | {own:.2f} | {kids:.2f} | {total:.2f} | {total / base:.2f}x | {extra:.2f} |"
        )


if __name__ == "__main__":
    main()
