#!/usr/bin/env python3
"""Time `vx watch` on one generated monorepo: edit-to-output latency, and idle CPU.

    python3 bench/watch.py [--packages 100] [--edits 10] [--idle 60] [--poll] [--work DIR]

Stdlib only.  Steps:

1. Generate an N-package repo with the shared generator (as bench/compare.py does:
   shared/bench/genrepo.py when beside the checkout, else bench/mkrepo.py) into
   WORK/repos/nN, with node_modules/ links.
2. Start `PY vx.py watch build --all` at its root (HOME=WORK/home, a private store),
   reading its stdout on a thread, every line stamped with perf_counter on arrival.
3. Latency: once a cycle (or the initial run) has printed its footer and the loop has
   been quiet for a moment, append a unique line to one package's src/mod0.js and take
   the time; the sample is the time until the first line naming that package's
   `#build` arrives (its row: the re-run task's first output).  The package edited
   is a leaf with no dependents, so the cycle is one miss among N-1 hits.  The
   figure the goal speaks of is the latency less the 150 ms debounce.
4. Idle CPU: with no edits, user+sys CPU of the watch process over --idle seconds
   (from /proc/PID/stat), as a share of one core.  --poll does the same under
   VX_WATCH_POLL=1 (the poller's walk every 250 ms).
5. Print a markdown table; the machine's load average is printed with it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
sys.path.insert(0, str(HERE))

import compare  # noqa: E402  (bench/compare.py: the repo generator wrapper)

DEBOUNCE_S = 0.15
WAIT_S = 120.0


class Watch:
    """A running `vx watch`, its stdout lines stamped as they arrive."""

    def __init__(self, repo: Path, home: Path, env_extra: dict[str, str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VX_", "CI"))}
        env.update({"HOME": str(home), "NO_COLOR": "1", **env_extra})
        self.proc = subprocess.Popen(
            [sys.executable, str(CHECKOUT / "vx.py"), "watch", "build", "--all"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: list[tuple[float, str]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            now = time.perf_counter()
            with self.cond:
                self.lines.append((now, raw.decode(errors="replace").rstrip("\n")))
                self.cond.notify_all()

    def wait_for(self, pattern: str, *, after: int = 0) -> tuple[int, float]:
        """Index and arrival time of the first line from `after` on matching pattern."""
        regex = re.compile(pattern)

        def hit() -> tuple[int, float] | None:
            for i in range(after, len(self.lines)):
                if regex.search(self.lines[i][1]):
                    return i, self.lines[i][0]
            return None

        with self.cond:
            if not self.cond.wait_for(lambda: hit() is not None, WAIT_S):
                tail = "\n".join(line for _, line in self.lines[-30:])
                raise SystemExit(f"timed out waiting for /{pattern}/\n{tail}")
            found = hit()
        assert found is not None
        return found

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def leaf_without_dependents(repo: Path) -> str:
    """A package no other package depends on: its edit re-runs one task."""
    import json

    names = sorted(p.name for p in (repo / "packages").iterdir())
    used: set[str] = set()
    for name in names:
        doc = json.loads((repo / "packages" / name / "package.json").read_text())
        used.update(doc.get("dependencies", {}))
    free = [n for n in names if n not in used]
    return free[-1]


def latency(repo: Path, home: Path, edits: int) -> list[float]:
    w = Watch(repo, home, {})
    try:
        seen, _ = w.wait_for(r"^vx watch: watching")
        pkg = leaf_without_dependents(repo)
        target = repo / "packages" / pkg / "src" / "mod0.js"
        samples = []
        for i in range(edits):
            time.sleep(1.0)  # let the last cycle's writes settle before the clock starts
            mark = len(w.lines)
            with target.open("a") as handle:
                handle.write(f"// watch bench edit {i} {time.time_ns()}\n")
            start = time.perf_counter()
            at, _ = w.wait_for(re.escape(f"{pkg}#build"), after=mark)
            samples.append(w.lines[at][0] - start)
            w.wait_for(r"^\s+result\s", after=at)
            seen = at
        del seen
        return samples
    finally:
        w.stop()


def idle_cpu(repo: Path, home: Path, seconds: float, *, poll: bool) -> float:
    w = Watch(repo, home, {"VX_WATCH_POLL": "1"} if poll else {})
    try:
        w.wait_for(r"^vx watch: watching")
        time.sleep(2.0)
        before = w.cpu_s()
        time.sleep(seconds)
        return (w.cpu_s() - before) / seconds
    finally:
        w.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", "-n", type=int, default=100)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--poll", action="store_true", help="also measure idle CPU when polling")
    parser.add_argument("--work", type=Path, default=Path("/tmp/vx-bench-watch"))
    parser.add_argument("--seed", type=int, default=20240101)
    args = parser.parse_args()

    work: Path = args.work
    shutil.rmtree(work / "repos", ignore_errors=True)
    home = work / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    gen = compare.find_generator(None)
    repo, _meta = compare.make_repo(work, args.packages, gen, args.seed, None)

    samples = latency(repo, home, args.edits)
    idle = idle_cpu(repo, home, args.idle, poll=False)
    polled = idle_cpu(repo, home, args.idle, poll=True) if args.poll else None

    load = os.getloadavg()
    cores = os.cpu_count()
    print(f"N={args.packages}, {args.edits} edits, idle over {args.idle:.0f} s;"
          f" load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {cores} cores")
    print()
    print("| figure | median | min | max |")
    print("| --- | --- | --- | --- |")
    ms = [s * 1000 for s in samples]
    above = [m - DEBOUNCE_S * 1000 for m in ms]
    print(f"| save → first output line of the re-run task | {statistics.median(ms):.0f} ms"
          f" | {min(ms):.0f} ms | {max(ms):.0f} ms |")
    print(f"| the same, less the 150 ms debounce | {statistics.median(above):.0f} ms"
          f" | {min(above):.0f} ms | {max(above):.0f} ms |")
    print(f"| idle CPU, OS events | {idle * 100:.2f}% of a core | | |")
    if polled is not None:
        print(f"| idle CPU, VX_WATCH_POLL=1 | {polled * 100:.2f}% of a core | | |")


if __name__ == "__main__":
    main()
