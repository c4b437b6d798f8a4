#!/usr/bin/env python3
"""Time vx (and, with --with-turbo, Turborepo) on one generated monorepo.

    python3 bench/compare.py [--packages 100] [--with-turbo] [--work DIR]
                             [--scenarios cold,floor,warm,restore,edit,dry,plan,affected,show,version,interp]
                             [--runs 7] [--runs-slow 3] [--json FILE]

Stdlib only.  Steps:

1. Generate an N-package npm-workspaces repo into WORK/repos/nN with the shared
   generator (shared/bench/genrepo.py, the one the peer figures in
   shared/bench/RESULTS.md were measured on) when it is beside this checkout,
   else with bench/mkrepo.py (same layout and graph).  node_modules/ gets the
   workspace links `npm install` would make (and turbo, when installed).
2. With --with-turbo: `npm install turbo@2.11.11 --prefix WORK/tools` once;
   turbo runs as its native binary (WORK/tools/node_modules/@turbo/linux-64/bin/turbo)
   with TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 and `--ui=stream`.  From 1,000
   packages (--turbo-scripts) an `npm` shim first on turbo's PATH runs each task's
   script by `sh -c`: npm's own `run` reads every workspace member per call.
3. For each tool on the SAME repo, one after the other:
     cold     tool cache, dist/ and logs removed, then `build` (runs-slow times)
     warm     everything cached, outputs on disk: THE key number (runs times)
     restore  `rm -rf packages/*/dist`, then `build`: cache hit + restore (runs times)
     edit     unique line appended to the hot leaf's src/mod0.js, then `build`
              (runs-slow times; the tool is put back to all-cached before each)
     dry      everything cached, then `build --dry=json`: the plan alone, nothing
              runs (runs times); repeated, so vx answers from its stored plan
     plan     the same with vx under `env VX_WARM=0`: the full plan, as the first
              one after a change computes it (runs times)
     affected the hot leaf's src/mod0.js edited (uncommitted) and built, then
              `build --affected` against HEAD: the edit's reach, all cache hits
              (runs times; with --interleave only)
     show     `show --format json` (vx) / `ls --output json` (turbo): the package
              list (runs times)
     version  `--version`: bare start-up (runs times)
   floor (no tool): every package's build command by `xargs -P<workers> sh -c`
   after `rm -rf packages/*/dist`, the cold build's floor (runs-slow times).
   vx runs as `PY vx.py run build --all` (PY: --python, default the real
   interpreter behind `python3`), turbo as `turbo run build --ui=stream`.
   `interp` (vx only) times the interpreter alone: `python3` through PATH (a
   pyenv shim costs a bash start), PY -c pass, PY -S, PY -I -S.
4. Print a markdown table (median wall [min..max], median CPU, median peak RSS)
   and, for two sizes or more (or --growth-from an earlier JSON), each scenario's
   growth between them; write every sample to JSON (default WORK/results-nN.json).

Isolation: HOME=WORK/home/nN for every tool run, so vx's store (~/.vx) is fresh
and private; turbo keeps its cache in the repo (.turbo/).  vx's bytecode goes
to WORK/pycache (PYTHONPYCACHEPREFIX, with PYTHONDONTWRITEBYTECODE dropped) so
its modules are compiled once, as an installed vx's would be, whatever state
the checkout's __pycache__ is in; `--bytecode inherit` keeps the caller's
environment instead.

Timing: wall = perf_counter around the whole process (stdout+stderr to a log);
cpu = user+sys of it and every child it reaped, rss = the largest resident set
among them (both from os.wait4's rusage).
The machine may be shared: each sample also records `foreign`, the CPU
seconds other processes used during it (from /proc/stat), and with
--noise-retries a sample during which others used more than --noise-cores
cores on average is taken again (every attempt stays in the JSON).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
TURBO_VERSION = "2.11.11"
SCENARIOS = (
    "cold",
    "floor",
    "warm",
    "restore",
    "edit",
    "dry",
    "plan",
    "affected",
    "show",
    "version",
    "interp",
)
FAST = ("warm", "restore", "dry", "plan", "affected", "show", "version")
ROWS = ("cold", "floor", "warm", "restore", "edit", "dry", "plan", "affected", "show", "version")
LABELS = {
    "cold": "cold build (no cache, no dist/)",
    "floor": "floor: the same build commands by `xargs -P<workers> sh -c`",
    "warm": "**warm build, all cached, outputs present**",
    "restore": "warm after `rm -rf packages/*/dist` (restore)",
    "edit": "edit hot leaf `src/mod0.js`, then build",
    "dry": "`build --dry=json` repeated (plan only, all cached; vx answers from its stored plan)",
    "plan": "`build --dry=json`, the full plan (vx under `env VX_WARM=0`: no stored plan)",
    "affected": "`build --affected` after an uncommitted edit of the hot leaf (all cached)",
    "show": "`show --format json` / `ls --output json` (every package)",
    "version": "`--version` (start-up)",
}
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# ----------------------------------------------------------------------------- timing


def _busy_ticks() -> int | None:
    """System-wide non-idle CPU ticks so far (None off Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: inside user/nice]
    return sum(fields[:8]) - fields[3] - fields[4]


def timed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> dict[str, object]:
    """One run of `cmd`: wall clock, CPU and peak RSS of it and everything it reaped.

    `os.wait4` gives the child's own rusage: its CPU includes every descendant it waited
    for, and `ru_maxrss` is the largest resident set among them (KiB on Linux), so the
    figure is the tool's biggest process, not a sum.
    """
    b0 = _busy_ticks()
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    b1 = _busy_ticks()
    cpu = ru.ru_utime + ru.ru_stime
    foreign = None if b0 is None or b1 is None else max(0.0, (b1 - b0) / CLK_TCK - cpu)
    return {
        "wall": wall,
        "cpu": cpu,
        "rss_mb": ru.ru_maxrss / 1024,
        "rc": rc,
        "foreign": foreign,
        "load1": os.getloadavg()[0],
    }


class Sampler:
    """Takes samples, re-taking one that other processes disturbed (if asked)."""

    def __init__(self, retries: int, cores: float) -> None:
        self.retries, self.cores = retries, cores

    def noisy(self, s: dict[str, object]) -> bool:
        f, w = s["foreign"], s["wall"]
        return f is not None and w > 0 and f / w > self.cores  # type: ignore[operator]

    def take(
        self,
        cmd: list[str],
        cwd: Path,
        env: dict[str, str],
        log: Path,
        prepare: object = None,
        retry: bool = True,
    ) -> dict[str, object]:
        attempts = []
        for _ in range(self.retries + 1 if retry else 1):
            if callable(prepare):
                prepare()
            s = timed(cmd, cwd, env, log)
            attempts.append(s)
            if not self.noisy(s):
                break
        best = min(attempts, key=lambda s: s["foreign"] or 0.0)  # type: ignore[return-value]
        return {
            **best,
            "attempts": len(attempts),
            "discarded": [a for a in attempts if a is not best],
        }


def summarize(samples: list[dict[str, object]]) -> dict[str, object]:
    walls = [float(s["wall"]) for s in samples]  # type: ignore[arg-type]
    cpus = [float(s["cpu"]) for s in samples]  # type: ignore[arg-type]
    foreign = [float(s["foreign"]) for s in samples if s["foreign"] is not None]  # type: ignore[arg-type]
    return {
        "n": len(samples),
        "wall_med": statistics.median(walls),
        "wall_min": min(walls),
        "wall_max": max(walls),
        "cpu_med": statistics.median(cpus),
        "rss_med": statistics.median(float(s.get("rss_mb", 0.0)) for s in samples),  # type: ignore[arg-type]
        "foreign_med": statistics.median(foreign) if foreign else None,
        "rc": sorted({s["rc"] for s in samples}),  # type: ignore[type-var]
        "samples": samples,
    }


def sh(
    cmd: str | list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> str:
    r = subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        shell=isinstance(cmd, str),
        capture_output=True,
        text=True,
        check=False,
    )
    if check and r.returncode:
        raise SystemExit(f"compare: `{cmd}` failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r.stdout.strip()


def committed(repo: Path, rel: str) -> str:
    """A file's text as the repo's commit has it (a killed run may have left an edit)."""
    return subprocess.run(
        ["git", "show", f"HEAD:{rel}"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def try_sh(cmd: list[str]) -> str:
    try:
        return sh(cmd, check=False) or "?"
    except OSError:
        return "absent"


# ----------------------------------------------------------------------------- repo


def find_generator(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit).resolve()
    for cand in (
        CHECKOUT.parent / "shared" / "bench" / "genrepo.py",
        Path("/work/shared/bench/genrepo.py"),
    ):
        if cand.is_file():
            return cand
    return HERE / "mkrepo.py"


def make_repo(
    work: Path, n: int, gen: Path, seed: int, turbo_pkg: Path | None, *, reuse: bool = False
) -> tuple[Path, dict]:
    repo = work / "repos" / f"n{n}"
    found = repo / "bench-meta.json"
    nm = repo / "node_modules"
    if reuse and found.is_file() and nm.is_dir():
        meta = json.loads(found.read_text())
        if (meta.get("packages"), meta.get("seed")) == (n, seed):
            meta["generator_path"] = str(gen)
            if turbo_pkg is not None and not (nm / "turbo").exists():
                link_turbo(nm, turbo_pkg)  # generated by a vx-only run
            return repo, meta  # the tools' caches in it survive: populating is all hits
    subprocess.run(
        [
            sys.executable,
            str(gen),
            str(repo),
            "--packages",
            str(n),
            "--deps",
            "3",
            "--files",
            "5",
            "--seed",
            str(seed),
            "--tool",
            "turbo,vx",
            "--force",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    nm.mkdir()
    for p in sorted((repo / "packages").iterdir()):
        (nm / p.name).symlink_to(Path("..") / "packages" / p.name)
    if turbo_pkg is not None:
        link_turbo(nm, turbo_pkg)
    meta = json.loads((repo / "bench-meta.json").read_text())
    meta["generator_path"] = str(gen)
    return repo, meta


def link_turbo(nm: Path, turbo_pkg: Path) -> None:
    """As `npm install -D turbo` would: turbo finds itself locally."""
    for name in ("turbo", "@turbo"):
        (nm / name).unlink(missing_ok=True)  # a link into a removed tools dir
    (nm / "turbo").symlink_to(turbo_pkg / "turbo")
    (nm / "@turbo").symlink_to(turbo_pkg / "@turbo")


NPM_SH = """#!{python} -IS
\"\"\"`npm run SCRIPT` for turbo's bench runs: the package.json script by `sh -c`, no npm.

Written by bench/compare.py (--turbo-scripts sh).  Anything else goes to the real npm.
\"\"\"
import json, os, sys

args = sys.argv[1:]
if len(args) >= 2 and args[0] in ("run", "run-script") and args[2:3] in ([], ["--"]):
    with open("package.json", encoding="utf-8") as f:
        script = json.load(f)["scripts"][args[1]]
    os.environ["PATH"] = os.path.abspath("node_modules/.bin") + os.pathsep + os.environ["PATH"]
    os.execvp("sh", ["sh", "-c", script, *args[3:]])
os.execv({npm!r}, ["npm", *args])
"""


def npm_shim(work: Path) -> Path:
    """A directory whose `npm` runs a package's script by `sh -c`: put first on turbo's PATH.

    `npm run` inside an npm workspace first finds the workspace root and reads every
    member's package.json (measured: 0.26 s CPU per call at N=100, 0.9 s at N=1000, 5.4 s
    at N=10,000; 0.18 s with `--workspaces=false`), so a populating run costs O(N^2) in
    npm alone.  Turbo's task hashes do not depend on how the script is spawned, so its
    cache entries are the same either way.
    """
    npm = shutil.which("npm")
    if not npm:
        raise SystemExit("compare: no npm on PATH (turbo runs its tasks through it)")
    shim = work / "tools" / "npm-sh"
    shim.mkdir(parents=True, exist_ok=True)
    exe = shim / "npm"
    exe.write_text(NPM_SH.format(python=sys.executable, npm=npm))
    exe.chmod(0o755)
    return shim


def install_turbo(work: Path) -> tuple[Path, Path]:
    tools = work / "tools"
    nm = tools / "node_modules"
    binary = nm / "@turbo" / "linux-64" / "bin" / "turbo"
    pj = nm / "turbo" / "package.json"
    have = json.loads(pj.read_text()).get("version") if pj.is_file() else None
    if have != TURBO_VERSION or not binary.is_file():
        tools.mkdir(parents=True, exist_ok=True)
        print(f"installing turbo@{TURBO_VERSION} into {tools} …", file=sys.stderr, flush=True)
        subprocess.run(
            [
                "npm",
                "install",
                f"turbo@{TURBO_VERSION}",
                "--prefix",
                str(tools),
                "--no-audit",
                "--no-fund",
                "--save-exact",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    if not binary.is_file():
        raise SystemExit(f"compare: no turbo binary at {binary} (platform package missing?)")
    return binary, nm


def export_ref(ref: str, work: Path) -> tuple[Path, str]:
    """A clean copy of vx.py and src/ as committed at `ref`, outside the checkout."""
    sha = sh(["git", "-C", str(CHECKOUT), "rev-parse", "--verify", ref + "^{commit}"])
    dest = work / "vx-src" / sha[:12]
    if not (dest / "vx.py").is_file():
        tar = subprocess.run(
            ["git", "-C", str(CHECKOUT), "archive", "--format=tar", sha, "vx.py", "src"],
            capture_output=True,
            check=True,
        ).stdout
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(tar)) as t:
            t.extractall(dest, filter="data")
    return dest / "vx.py", sha


# ----------------------------------------------------------------------------- tools


class Tool:
    name = "?"

    def __init__(self, repo: Path, env: dict[str, str]) -> None:
        self.repo, self.env = repo, env

    def build(self) -> list[str]:
        raise NotImplementedError

    def dry(self) -> list[str]:
        raise NotImplementedError

    def plan(self) -> list[str]:
        """The plan as the first one after a change computes it."""
        return self.dry()

    def affected(self) -> list[str]:
        raise NotImplementedError

    def show(self) -> list[str]:
        raise NotImplementedError

    def version(self) -> list[str]:
        raise NotImplementedError

    def clean(self) -> None:
        """The outputs and this tool's own cache, never another tool's (--reuse-repo)."""
        sh("rm -rf packages/*/dist", cwd=self.repo)

    def executed(self, text: str) -> int | None:
        raise NotImplementedError


class Vx(Tool):
    name = "vx"

    def __init__(self, repo: Path, env: dict[str, str], python: str, vx_py: Path) -> None:
        super().__init__(repo, env)
        self.python, self.vx_py = python, vx_py

    def build(self) -> list[str]:
        return [self.python, str(self.vx_py), "run", "build", "--all"]

    def dry(self) -> list[str]:
        return [*self.build(), "--dry=json"]

    def plan(self) -> list[str]:
        return ["env", "VX_WARM=0", *self.dry()]

    def affected(self) -> list[str]:
        # the edit is uncommitted: changes since HEAD are what a pre-push hook would ask about
        return [self.python, str(self.vx_py), "run", "build", "--affected=HEAD"]

    def show(self) -> list[str]:
        return [self.python, str(self.vx_py), "show", "--format", "json"]

    def version(self) -> list[str]:
        return [self.python, str(self.vx_py), "--version"]

    def clean(self) -> None:
        super().clean()
        shutil.rmtree(Path(self.env["HOME"]) / ".vx", ignore_errors=True)
        shutil.rmtree(self.repo / ".vx", ignore_errors=True)

    def executed(self, text: str) -> int | None:
        m = re.findall(r"result\s+(\d+) tasks\W+(all cached|(\d+) cached)", text)
        if not m:
            return None
        total, what, cached = m[-1]
        return 0 if what == "all cached" else int(total) - int(cached)


class Turbo(Tool):
    name = "turbo"

    def __init__(self, repo: Path, env: dict[str, str], binary: Path) -> None:
        super().__init__(repo, env)
        self.binary = binary

    def build(self) -> list[str]:
        return [str(self.binary), "run", "build", "--ui=stream"]

    def dry(self) -> list[str]:
        return [str(self.binary), "run", "build", "--dry=json"]

    def affected(self) -> list[str]:
        # TURBO_SCM_BASE=HEAD (set in bench_interleaved): uncommitted changes since HEAD
        return [str(self.binary), "run", "build", "--affected", "--ui=stream"]

    def show(self) -> list[str]:  # turbo's closest: the package list, experimental JSON
        return [str(self.binary), "ls", "--output", "json"]

    def version(self) -> list[str]:
        return [str(self.binary), "--version"]

    def clean(self) -> None:
        super().clean()
        sh("rm -rf packages/*/.turbo .turbo", cwd=self.repo)

    def executed(self, text: str) -> int | None:
        m = re.findall(r"Cached:\s+(\d+) cached, (\d+) total", text)
        return int(m[-1][1]) - int(m[-1][0]) if m else None


def bench_tool(
    tool: Tool,
    meta: dict,
    scen: set[str],
    runs: int,
    runs_slow: int,
    logdir: Path,
    sampler: Sampler,
    *,
    keep: bool = False,
) -> dict[str, dict]:
    """Each scenario of `scen` for one tool; `keep` (--reuse-repo) leaves its cache as found."""
    repo, env = tool.repo, tool.env
    hot = repo / meta["hot_leaf_file"]
    hot_text = committed(repo, meta["hot_leaf_file"])
    res: dict[str, dict] = {}

    def build(
        tag: str, prepare: object = None, sample: bool = True, retry: bool = True
    ) -> dict[str, object]:
        # slow scenarios (cold, edit) are never re-taken: on a shared machine every long
        # sample overlaps someone else's work, and a retry would cost minutes
        log = logdir / f"{tool.name}-{tag}.log"
        s = (
            sampler.take(tool.build(), repo, env, log, prepare, retry)
            if sample
            else timed(tool.build(), repo, env, log)
        )
        s["executed"] = tool.executed(log.read_text(errors="replace"))
        return s

    def report(key: str, samples: list[dict[str, object]], **extra: object) -> None:
        res[key] = {**summarize(samples), **extra}
        print(f"  {tool.name:6} {key:8} {fmt(res[key])}", flush=True)

    hot.write_text(hot_text)
    if not keep:
        tool.clean()
    if "cold" in scen:
        report("cold", [build("cold", tool.clean, retry=False) for _ in range(runs_slow)])
    elif scen & {"warm", "restore", "edit", "dry", "plan"}:
        build("populate", sample=False)
    if scen & {"warm", "restore", "edit", "dry", "plan"}:
        build("warmup", sample=False)  # also writes vx's bytecode and settles tool metadata
    if "warm" in scen:
        report("warm", [build("warm") for _ in range(runs)])
    if "restore" in scen:

        def drop_dist() -> None:
            sh("rm -rf packages/*/dist", cwd=repo)

        report("restore", [build("restore", drop_dist) for _ in range(runs)])
    if "edit" in scen:
        samples = []
        for i in range(runs_slow):
            hot.write_text(hot_text)
            build("edit-reset", sample=False)  # back to all-cached

            # unique content every time: a genuine miss, never an old cache entry
            def edit(i: int = i) -> None:
                hot.write_text(hot_text + f"// edit {i} {time.time_ns()}\n")

            samples.append(build("edit", edit, retry=False))
        hot.write_text(hot_text)
        build("edit-restore", sample=False)
        report("edit", samples, expected=meta["hot_leaf_expected_rebuilds"])
    if "dry" in scen:
        log = logdir / f"{tool.name}-dry.log"
        timed(tool.dry(), repo, env, log)
        report("dry", [sampler.take(tool.dry(), repo, env, log) for _ in range(runs)])
    if "plan" in scen:
        log = logdir / f"{tool.name}-plan.log"
        timed(tool.plan(), repo, env, log)
        report("plan", [sampler.take(tool.plan(), repo, env, log) for _ in range(runs)])
    if "show" in scen:
        log = logdir / f"{tool.name}-show.log"
        timed(tool.show(), repo, env, log)
        report("show", [sampler.take(tool.show(), repo, env, log) for _ in range(runs)])
    if "version" in scen:
        log = logdir / f"{tool.name}-version.log"
        timed(tool.version(), repo, env, log)
        report("version", [sampler.take(tool.version(), repo, env, log) for _ in range(runs)])
    hot.write_text(hot_text)
    return res


def bench_interleaved(
    tools: list[Tool], meta: dict, scen: set[str], runs: int, logdir: Path, sampler: Sampler
) -> dict[str, dict[str, dict]]:
    """warm, restore, dry, affected and version with the tools taking turns, sample by sample.

    On a shared machine this gives every tool the same spread of disturbance, which
    back-to-back blocks do not.  Both tools keep their caches side by side on the one
    repo: neither rewrites outputs that are already up to date, so one's warm run leaves
    the other's warm state alone (the executed counts below check it).
    """
    res: dict[str, dict[str, list]] = {t.name: {} for t in tools}
    hot = tools[0].repo / meta["hot_leaf_file"]
    hot_text = committed(tools[0].repo, meta["hot_leaf_file"])
    hot.write_text(hot_text)
    for t in tools:
        for tag in ("populate", "warmup"):
            timed(t.build(), t.repo, t.env, logdir / f"{t.name}-{tag}.log")

    def one(t: Tool, key: str, cmd: list[str], prepare: object = None) -> None:
        log = logdir / f"{t.name}-{key}.log"
        s = sampler.take(cmd, t.repo, t.env, log, prepare)
        if key not in ("version", "dry", "plan", "show"):
            s["executed"] = t.executed(log.read_text(errors="replace"))
        res[t.name].setdefault(key, []).append(s)

    for key in FAST:
        if key not in scen:
            continue
        if key == "version":
            for t in tools:
                timed(t.version(), t.repo, t.env, logdir / f"{t.name}-version.log")
        if key == "affected":  # the hot leaf edited and every tool's cache holding that state
            hot.write_text(hot_text + "// affected bench\n")
            for t in tools:
                timed(t.build(), t.repo, t.env, logdir / f"{t.name}-affected-populate.log")
                timed(t.affected(), t.repo, t.env, logdir / f"{t.name}-affected-warmup.log")
        for _ in range(runs):
            for t in tools:
                if key == "warm":
                    one(t, key, t.build())
                elif key == "restore":
                    one(t, key, t.build(), lambda t=t: sh("rm -rf packages/*/dist", cwd=t.repo))
                elif key == "dry":
                    one(t, key, t.dry())
                elif key == "plan":
                    one(t, key, t.plan())
                elif key == "affected":
                    one(t, key, t.affected())
                elif key == "show":
                    one(t, key, t.show())
                else:
                    one(t, key, t.version())
        if key == "affected":
            hot.write_text(hot_text)
        for t in tools:
            if key in ("restore", "affected"):  # leave all tools warm for the next key
                timed(t.build(), t.repo, t.env, logdir / f"{t.name}-settle.log")
    out: dict[str, dict[str, dict]] = {}
    for t in tools:
        out[t.name] = {}
        for key, samples in res[t.name].items():
            out[t.name][key] = {**summarize(samples), "interleaved": True}
            print(f"  {t.name:6} {key:8} {fmt(out[t.name][key])} (interleaved)", flush=True)
    return out


def bench_floor(
    repo: Path, env: dict[str, str], runs: int, logdir: Path, workers: int
) -> dict[str, object]:
    """The cold build's floor: every package's build command, `workers` at a time, by xargs.

    No tool: no hashing, no cache, no dependency order (these commands read only their
    own package's sources), `dist/` removed before each sample as for `cold`.
    """
    jobs = []
    for pkg in sorted((repo / "packages").iterdir()):
        config = json.loads((pkg / "vx.config.json").read_text())
        command = config["tasks"]["build"]["exec"]["command"]
        jobs.append(f"cd {pkg.relative_to(repo)} && {command}")
    listing = logdir / "floor-commands"
    listing.write_text("".join(job + "\0" for job in jobs))
    cmd = ["xargs", "-0", f"-P{workers}", "-n1", "-a", str(listing), "sh", "-c"]
    samples = []
    for _ in range(runs):
        sh("rm -rf packages/*/dist", cwd=repo)
        samples.append(timed(cmd, repo, env, logdir / "floor.log"))
    out = {**summarize(samples), "workers": workers, "command": " ".join(cmd)}
    print(f"  floor  cold     {fmt(out)} (xargs -P{workers})", flush=True)
    return out


def bench_interp(
    python: str, repo: Path, env: dict[str, str], runs: int, logdir: Path, sampler: Sampler
) -> dict[str, dict]:
    cases = {
        "python3 on PATH -c pass": [
            shutil.which("python3", path=env.get("PATH")) or "python3",
            "-c",
            "pass",
        ],
        "PY -c pass": [python, "-c", "pass"],
        "PY -S -c pass (no site)": [python, "-S", "-c", "pass"],
        "PY -I -S -c pass": [python, "-I", "-S", "-c", "pass"],
        "PY -c 'import sqlite3, json, subprocess'": [
            python,
            "-c",
            "import sqlite3, json, subprocess",
        ],
    }
    res = {}
    log = logdir / "interp.log"
    for label, cmd in cases.items():
        timed(cmd, repo, env, log)
        res[label] = summarize([sampler.take(cmd, repo, env, log) for _ in range(runs)])
        print(f"  interp {label:44} {fmt(res[label])}", flush=True)
    return res


# ----------------------------------------------------------------------------- report


def fmt(s: dict) -> str:
    ex = [x.get("executed") for x in s["samples"]]
    exs = "" if all(e is None for e in ex) else " executed=" + ",".join(map(str, ex))
    rc = "" if s["rc"] == [0] else f" rc={s['rc']}"
    fg = "" if s["foreign_med"] is None else f" others={s['foreign_med']:.2f}s"
    return (
        f"wall {s['wall_med']:8.3f}s [{s['wall_min']:.3f}..{s['wall_max']:.3f}] "
        f"cpu {s['cpu_med']:6.2f}s n={s['n']}{exs}{rc}{fg}"
    )


def cell(s: dict | None) -> str:
    if not s:
        return "—"
    ex = {x.get("executed") for x in s["samples"]}
    ran = ""
    if ex != {None} and (ex - {0} or "expected" in s):
        ran = f", ran {'/'.join(str(e) for e in sorted(ex, key=str))}"
        if "expected" in s:
            ran += f" (expect {s['expected']})"
    bad = "" if s["rc"] == [0] else f", rc {s['rc']}"
    rss = f", {s['rss_med']:.0f} MB" if s.get("rss_med") else ""
    return (
        f"{s['wall_med']:.3f} s [{s['wall_min']:.3f}..{s['wall_max']:.3f}], "
        f"cpu {s['cpu_med']:.2f} s{rss}{ran}{bad}"
    )


def table(report: dict) -> str:
    f = report["facts"]
    dirty = f" + {len(f['vx_dirty_files'])} uncommitted file(s)" if f["vx_dirty_files"] else ""
    lines = [
        f"vx {f['vx_commit'][:12]}{dirty} · Python {f['python'].split()[0]} · "
        f"turbo {f['turbo'] or '—'} · {f['cores']} cores · {f['when']}"
    ]
    for nkey, out in report["results"].items():
        tools = [t for t in ("vx", "turbo") if t in out]
        lines.append(
            f"\n### N = {nkey[1:]}  ({out['meta']['packages']} packages, "
            f"{out['meta']['edges']} edges, hot leaf {out['meta']['hot_leaf']} → "
            f"{out['meta']['hot_leaf_expected_rebuilds']} tasks)\n"
        )
        if out.get("turbo_scripts") == "sh":
            lines.append(
                "turbo's executed tasks ran their script through the `npm` shim "
                "(`--turbo-scripts sh`: `sh -c`, not npm)\n"
            )
        head = (
            "| scenario | " + " | ".join(tools) + (" | vx / turbo |" if len(tools) == 2 else " |")
        )
        lines += [head, "|" + " --- |" * (head.count("|") - 1)]
        for key in ROWS:
            if key == "floor":
                if "floor" in out and "vx" in out and "cold" in out["vx"]:
                    vs = out["vx"]["cold"]["wall_med"] / out["floor"]["wall_med"]
                    pad = " — |" * (len(tools) - 1) + (" — |" if len(tools) == 2 else "")
                    lines.append(
                        f"| {LABELS['floor']} (-P{out['floor']['workers']}; vx cold = "
                        f"{vs:.2g}x it) | {cell(out['floor'])} |{pad}"
                    )
                continue
            row = [out[t].get(key) for t in tools]
            if not any(row):
                continue
            ratio = ""
            if len(tools) == 2:
                ratio = f" {row[0]['wall_med'] / row[1]['wall_med']:.2g}x |" if all(row) else " — |"
            lines.append(f"| {LABELS[key]} | " + " | ".join(cell(r) for r in row) + " |" + ratio)
        if "interp" in out:
            lines += [
                "",
                "| interpreter alone (PY = " + out["python"] + ") | wall |",
                "| --- | --- |",
            ]
            lines += [f"| `{k}` | {cell(v)} |" for k, v in out["interp"].items()]
    lines += growth({**report.get("earlier", {}), **report["results"]})
    return "\n".join(lines)


def growth(results: dict[str, dict]) -> list[str]:
    """Each scenario's growth between consecutive sizes measured: wall, CPU and peak RSS ratios.

    Linear is the size ratio (10x from 1,000 to 10,000); above it something grows faster
    than the repository.
    """
    sizes = sorted(results, key=lambda k: int(k[1:]))
    lines: list[str] = []
    for small, big in itertools.pairwise(sizes):
        lo, hi = results[small], results[big]
        lines += [
            f"\n### Growth N = {small[1:]} → {big[1:]} "
            f"(linear: {int(big[1:]) / int(small[1:]):.3g}x)\n",
            "| scenario | tool | wall | cpu | peak RSS |",
            "| --- | --- | --- | --- | --- |",
        ]
        for key in ROWS:
            pairs = (
                [("floor", lo.get("floor"), hi.get("floor"))]
                if key == "floor"
                else [(t, lo.get(t, {}).get(key), hi.get(t, {}).get(key)) for t in ("vx", "turbo")]
            )
            for tool, a, b in pairs:
                if not a or not b:
                    continue
                rss = (
                    f"{b['rss_med'] / a['rss_med']:.3g}x"
                    if a.get("rss_med") and b.get("rss_med")
                    else "—"
                )
                lines.append(
                    f"| {key} | {tool} | {b['wall_med'] / a['wall_med']:.3g}x | "
                    f"{b['cpu_med'] / max(a['cpu_med'], 1e-9):.3g}x | {rss} |"
                )
    return lines


def facts(python: str, vx_py: Path, turbo: Path | None, ref: str | None) -> dict[str, object]:
    mem = "?"
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    model = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?"
            )
    except OSError:
        pass
    root = vx_py.parent
    if ref:  # an export of one commit: nothing uncommitted in it
        commit, dirty = ref, ""
    else:
        commit = sh(["git", "-C", str(root), "rev-parse", "HEAD"], check=False)
        dirty = sh(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src", "vx.py"], check=False
        )
    return {
        "when": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "memory": mem,
        "cpu_model": model,
        "kernel": platform.release(),
        "python": sh([python, "-c", "import sys; print(sys.version.split()[0], sys.executable)"]),
        "git": try_sh(["git", "--version"]),
        "node": try_sh(["node", "--version"]),
        "npm": try_sh(["npm", "--version"]),
        "turbo": try_sh([str(turbo), "--version"]) if turbo else None,
        "vx_commit": commit,
        "vx_dirty_files": dirty.splitlines(),
        "vx_py": str(vx_py),
    }


def venv_python(work: Path, base: str) -> str:
    """A plain venv with vx's runtime dependencies, as `pip install vx-runner` would leave one.

    It has none of the base interpreter's site-packages, so no `.pth` file runs at start-up
    (this sandbox's base interpreter imports certifi from one: ~70 ms on every start).
    """
    venv = work / "venv"
    py = venv / "bin" / "python"
    if not py.is_file():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run(
        [str(py), "-c", "import xxhash, zstandard"], capture_output=True, check=False
    )
    if probe.returncode:
        deps = sh(
            [
                base,
                "-c",
                "import tomllib,sys; print(' '.join(tomllib.load(open(sys.argv[1],"
                "'rb'))['project']['dependencies']))",
                str(CHECKOUT / "pyproject.toml"),
            ]
        )
        print(f"installing {deps} into {venv} …", file=sys.stderr, flush=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", *deps.split()], check=True)
    return str(py)


def real_python() -> str:
    """The interpreter `python3` on PATH ends up running (through a pyenv shim, say)."""
    exe = shutil.which("python3")
    if not exe:
        return sys.executable
    return sh([exe, "-c", "import sys; print(sys.executable)"], check=False) or sys.executable


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--packages", "-n", default="100", help="repo size(s), comma-separated (default 100)"
    )
    ap.add_argument("--work", default="/tmp/vx-bench", help="work dir (default /tmp/vx-bench)")
    ap.add_argument(
        "--with-turbo",
        action="store_true",
        help=f"install turbo@{TURBO_VERSION} with npm and time it too",
    )
    ap.add_argument(
        "--tools", default=None, help="vx,turbo (default: vx, plus turbo with --with-turbo)"
    )
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--runs", type=int, default=7, help="samples for warm/restore/version/interp")
    ap.add_argument("--runs-slow", type=int, default=3, help="samples for cold and edit")
    ap.add_argument("--python", default=None, help="interpreter for vx (default: real python3)")
    ap.add_argument(
        "--venv",
        action="store_true",
        help="run vx in WORK/venv: a plain venv with "
        "only vx's runtime dependencies (created with pip on first use)",
    )
    ap.add_argument("--vx", default=str(CHECKOUT / "vx.py"), help="vx entry script")
    ap.add_argument(
        "--vx-ref",
        default=None,
        help="time this commit of the checkout instead of "
        "its work tree (exported with git archive to WORK/vx-src/SHA)",
    )
    ap.add_argument(
        "--generator",
        default=None,
        help="repo generator script (default: shared genrepo.py if present, else bench/mkrepo.py)",
    )
    ap.add_argument("--seed", type=int, default=20240101)
    ap.add_argument(
        "--workers",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="parallelism of the floor's xargs -P (default: usable cores, vx's default)",
    )
    ap.add_argument("--bytecode", choices=("prefix", "inherit"), default="prefix")
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="warm/restore/version: tools take turns sample by sample (fairer on a "
        "shared machine); cold and edit still run tool by tool",
    )
    ap.add_argument(
        "--noise-retries",
        type=int,
        default=0,
        help="re-take a sample up to this many times when others used the CPUs",
    )
    ap.add_argument(
        "--noise-cores",
        type=float,
        default=0.3,
        help="'others used the CPUs': more than this many cores on average",
    )
    ap.add_argument(
        "--reuse-repo",
        action="store_true",
        help="keep WORK/repos/nN and the tools' caches (not cleaned before or after) when it "
        "was generated with the same size and seed: at N=1000 turbo's populating run alone "
        "takes minutes",
    )
    ap.add_argument(
        "--growth-from",
        default=None,
        help="an earlier run's JSON: its sizes join the growth table (e.g. N=1000 measured "
        "before a separate N=10000 run)",
    )
    ap.add_argument(
        "--turbo-scripts",
        choices=("auto", "npm", "sh"),
        default="auto",
        help="how turbo's executed tasks run their package.json script: through npm (turbo's "
        "own way), or sh (an `npm` shim on turbo's PATH running the script by `sh -c`, as vx "
        "does: npm's workspace lookup costs O(N) per task); auto: npm below 1,000 packages, "
        "sh from 1,000",
    )
    ap.add_argument("--json", default=None, help="raw samples (default WORK/results-nN.json)")
    a = ap.parse_args(argv)

    scen = set(a.scenarios.split(",")) - {""}
    if bad := scen - set(SCENARIOS):
        ap.error(f"unknown scenario(s): {','.join(sorted(bad))}")
    tools = (a.tools or ("vx,turbo" if a.with_turbo else "vx")).split(",")
    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    python = a.python or real_python()
    if a.venv:
        python = venv_python(work, python)
    vx_py, ref = Path(a.vx).resolve(), None
    if a.vx_ref:
        vx_py, ref = export_ref(a.vx_ref, work)
    gen = find_generator(a.generator)
    turbo_bin = turbo_nm = None
    if "turbo" in tools:
        turbo_bin, turbo_nm = install_turbo(work)

    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.update(
        {
            "TURBO_TELEMETRY_DISABLED": "1",
            "TURBO_SCM_BASE": "HEAD",  # --affected: changes since HEAD (see Turbo.affected)
            "DO_NOT_TRACK": "1",
            "NO_COLOR": "1",
        }
    )
    if a.bytecode == "prefix":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    sampler = Sampler(a.noise_retries, a.noise_cores)

    report: dict = {
        "facts": facts(python, vx_py, turbo_bin, ref),
        "generator": str(gen),
        "args": vars(a),
        "results": {},
    }
    if a.growth_from:
        report["earlier"] = json.loads(Path(a.growth_from).read_text())["results"]
    print(json.dumps(report["facts"]), flush=True)
    sizes = [int(x) for x in str(a.packages).split(",")]
    for n in sizes:
        repo, meta = make_repo(work, n, gen, a.seed, turbo_nm, reuse=a.reuse_repo)
        logdir = work / "logs" / f"n{n}"
        logdir.mkdir(parents=True, exist_ok=True)
        print(f"== N={n} repo={repo} generator={gen.name} {json.dumps(meta)}", flush=True)
        out = report["results"][f"n{n}"] = {"meta": meta, "python": python}
        # a HOME per size: vx's cold removes its whole store (~/.vx), and --reuse-repo must
        # keep the other sizes' caches
        home = work / "home" / f"n{n}"
        home.mkdir(parents=True, exist_ok=True)
        env_n = {**env, "HOME": str(home)}
        runners: list[Tool] = []
        for name in tools:
            if name == "vx":
                runners.append(Vx(repo, env_n, python, vx_py))
            elif name == "turbo" and turbo_bin:
                scripts = a.turbo_scripts
                if scripts == "auto":
                    scripts = "npm" if n < 1000 else "sh"
                out["turbo_scripts"] = scripts
                tenv = dict(env_n)
                if scripts == "sh":
                    tenv["PATH"] = f"{npm_shim(work)}{os.pathsep}{env.get('PATH', '')}"
                runners.append(Turbo(repo, tenv, turbo_bin))
            else:
                raise SystemExit(f"compare: unknown tool {name}")
        fast = set(FAST) & scen if a.interleave else set()
        keep = a.reuse_repo
        for tool in runners:
            out[tool.name] = bench_tool(
                tool, meta, scen - fast, a.runs, a.runs_slow, logdir, sampler, keep=keep
            )
            if not fast and not keep:
                tool.clean()
        if fast:
            for name, got in bench_interleaved(
                runners, meta, fast, a.runs, logdir, sampler
            ).items():
                out[name].update(got)
            for tool in runners:
                if not keep:
                    tool.clean()
        if "floor" in scen:
            out["floor"] = bench_floor(repo, env_n, a.runs_slow, logdir, a.workers)
            for tool in runners:  # the floor's outputs are not the tools': leave them clean
                if not keep:
                    tool.clean()
        if "interp" in scen:
            out["interp"] = bench_interp(python, repo, env_n, a.runs, logdir, sampler)
        dest = Path(a.json) if a.json else work / f"results-n{'-'.join(map(str, sizes))}.json"
        dest.write_text(json.dumps(report, indent=1))
    print(table(report))
    print(f"\nraw samples: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
