#!/usr/bin/env python3
"""Where a warm `vx run build --all` spends its time (stdlib only).

    python3 bench/profile.py [--packages 100] [--work DIR] [--vx-ref REF | --vx PATH]
                             [--runs 5] [--top 25]

Makes (or reuses, --reuse) the repo `bench/compare.py` makes, fills vx's cache
(cold build, then one warm-up), and then, each in fresh processes:

1. phases   (--runs times) a child imports every module a warm run needs
            first (that is "imports"), wraps the functions listed in PHASES with
            wall-clock timers, and calls vx's main(["run","build","--all"]) with
            stdout/stderr to /dev/null.  Outermost calls only (a phase that
            recurses or re-enters is counted once); calls in worker threads are
            counted too, so nested rows can add up to more than their parent;
            "thread CPU" (time.thread_time) is the CPU those calls used, without
            the time spent waiting for the GIL, so it adds up across threads.
            "interpreter + exit" is the whole process wall minus the child's own
            measured span; where the vx command leaves with os._exit
            (`vx.cli.main.entry` exists), the child does too.
2. imports  `PY -X importtime vx.py run build --all`: self time per module,
            summed by group (vx subpackage, stdlib, third party, site).
3. cprofile one `PY -m cProfile` run: top functions by own time, and SQLite,
            subprocess and stat totals.

Prints markdown; writes WORK/profile-nN.json and WORK/warm-nN.prof.
HOME=WORK/home and PYTHONPYCACHEPREFIX=WORK/pycache, as in compare.py.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (the sibling harness: repo generation, env, export)

# label -> "module:qualname" (several, comma-separated, are summed); indentation = nesting
PHASES: list[tuple[str, str]] = [
    ("cli: flags + settings (incl. workspace load)", "vx.cli.run:resolve"),
    ("  workspace load", "vx.loader.assemble:load_workspace"),
    (
        "    root discovery + member globs",
        "vx.workspace.discover:find_root,vx.workspace.discover:list_members",
    ),
    ("    package.json reads", "vx.loader.assemble:_read"),
    ("    vx.config.* read + parse + validate", "vx.workspace.config_load:load_project_config"),
    ("      schema validation", "vx.workspace.config_schema:parse_project_config"),
    ("plan: select + task graph + plan", "vx.cli.run:_plan"),
    ("  resolve requests", "vx.graph.select:resolve_requests"),
    ("  build graph", "vx.graph.build:build_graph"),
    ("  make plan", "vx.run.plan:make_plan"),
    ("prepare cache (git, keys, index, lock)", "vx.cli.run:_prepare_cache"),
    ("  git snapshot (subprocesses)", "vx.git:snapshot"),
    ("  file table (ids of inputs)", "vx.cache.fileids:FileTable.__init__"),
    ("  key derivation", "vx.run.keys:derive_keys"),
    ("    task input components", "vx.cache.inputs:task_components"),
    ("    runtime probes", "vx.run.runtime:RuntimeProbe.digest"),
    ("  cache location + repo identity", "vx.cache.location:resolve_location"),
    ("  open SQLite index", "vx.cache.index:open_index"),
    ("  run lock", "vx.cache.runlock:acquire_run_lock"),
    ("  head branch", "vx.git:head_branch"),
    ("renderer setup", "vx.output.render:Renderer.__init__"),
    ("session.run (schedule, probes, restores)", "vx.run.session:RunSession.run"),
    ("  index probes (SQLite get_entry)", "vx.cache.index:Index.get_entry"),
    ("  cached log reads (SQLite entry_log)", "vx.cache.index:Index.entry_log"),
    ("  restore / up-to-date check", "vx.run.localcache:LocalCache.restore"),
    ("    output_paths (walk outputs)", "vx.cache.outputs:output_paths"),
    ("    store.up_to_date (compare files)", "vx.cache.store:Store.up_to_date"),
    ("    store.restore (unpack)", "vx.cache.store:Store.restore"),
    ("  event rendering (handle)", "vx.output.render:Renderer.handle"),
    ("after run: history, failures", "vx.cli.run:_after_run"),
    ("  record_run (SQLite writes)", "vx.run.record:record_run"),
    ("  cache close (touch, close)", "vx.run.localcache:LocalCache.close"),
    (
        "session finish / exit",
        "vx.run.session:RunSession.finish,vx.run.session:RunSession.__exit__",
    ),
    ("renderer close (footer)", "vx.output.render:Renderer.close"),
    ("lock release", "vx.cache.runlock:RunLock.__exit__"),
]

CHILD = r"""
import json, os, sys, threading, time
T0, C0 = time.perf_counter(), time.process_time()
vx_py, out_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.path.join(os.path.dirname(os.path.abspath(vx_py)), "src")
sys.path.insert(0, src)
spec = json.loads(sys.argv[4])
before = set(sys.modules)
T1 = time.perf_counter()
if mode == "phases":
    import importlib
    for name in spec["modules"]:
        try:
            importlib.import_module(name)
        except Exception:
            pass
T2 = time.perf_counter()
totals, missing, tls = {}, [], threading.local()

def wrap(fn, label):
    def timed(*a, **k):
        active = tls.__dict__.setdefault("active", set())
        if label in active:
            return fn(*a, **k)
        active.add(label)
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            d, dc = time.perf_counter() - t, time.thread_time() - c
            active.discard(label)
            tot = totals.setdefault(label, [0.0, 0, 0.0])
            tot[0] += d; tot[1] += 1; tot[2] += dc
    timed.__wrapped__ = fn
    return timed

if mode == "phases":
    vx_mods = [m for n, m in list(sys.modules.items()) if n == "vx" or n.startswith("vx.")]
    for label, targets in spec["phases"]:
        for target in targets.split(","):
            mod_name, _, qual = target.partition(":")
            mod = sys.modules.get(mod_name)
            owner, attr = mod, qual
            if mod is not None and "." in qual:
                owner, attr = getattr(mod, qual.split(".")[0], None), qual.split(".")[1]
            orig = getattr(owner, attr, None) if owner is not None else None
            if orig is None:
                missing.append(target); continue
            w = wrap(orig, label)
            setattr(owner, attr, w)
            if owner is mod:  # rebind `from x import f` copies in other vx modules
                for m in vx_mods:
                    for k, v in list(vars(m).items()):
                        if v is orig:
                            setattr(m, k, w)
T3 = time.perf_counter()
from vx.cli.main import main
devnull = open(os.devnull, "w")
sys.stdout = sys.stderr = devnull
code = main(["run", "build", "--all"])
T4, C4 = time.perf_counter(), time.process_time()
with open(out_path, "w") as f:
    json.dump({"code": code, "setup": T1 - T0, "imports": T2 - T1, "wrap": T3 - T2,
               "main": T4 - T3, "span": T4 - T0, "span_cpu": C4 - C0, "phases": totals,
               "missing": missing, "modules": sorted(n for n in set(sys.modules) - before)}, f)
if hasattr(sys.modules["vx.cli.main"], "entry"):
    # the vx command (entry) flushes and leaves with os._exit, skipping the teardown
    os._exit(code)
"""


BEFORE_EACH: list[Path] = []  # with --restore: the repo whose packages/*/dist to delete


def before_each() -> None:
    for repo in BEFORE_EACH:
        subprocess.run("rm -rf packages/*/dist", shell=True, cwd=repo, check=True)


def child(
    py: str, vx_py: Path, repo: Path, env: dict[str, str], mode: str, spec: dict
) -> tuple[float, dict]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    before_each()
    t0 = time.perf_counter()
    r = subprocess.run(
        [py, "-c", CHILD, str(vx_py), out, mode, json.dumps(spec)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"profile: child failed:\n{r.stderr[-3000:]}")
    data = json.loads(Path(out).read_text())
    os.unlink(out)
    if data["code"]:
        raise SystemExit(f"profile: vx exited {data['code']}")
    return wall, data


def phases(py: str, vx_py: Path, repo: Path, env: dict[str, str], runs: int) -> dict:
    _, first = child(py, vx_py, repo, env, "discover", {"modules": [], "phases": []})
    modules = [m for m in first["modules"] if m != "__main__"]
    spec = {"modules": modules, "phases": PHASES}
    samples = [child(py, vx_py, repo, env, "phases", spec) for _ in range(runs)]
    rows: dict[str, dict] = {}

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else 0.0

    walls = [w for w, _ in samples]
    rows["whole process (wall)"] = {"ms": med(walls) * 1e3, "calls": 1}
    rows["interpreter start + site + exit"] = {
        "ms": med([w - d["span"] for w, d in samples]) * 1e3,
        "calls": 1,
    }
    rows[f"imports ({len(modules)} modules loaded by a warm run)"] = {
        "ms": med([d["imports"] for _, d in samples]) * 1e3,
        "calls": 1,
    }
    rows["main() total"] = {"ms": med([d["main"] for _, d in samples]) * 1e3, "calls": 1}
    rows["(CPU of the script, all threads)"] = {
        "ms": med([d["span_cpu"] for _, d in samples]) * 1e3,
        "calls": 1,
    }
    for label, _ in PHASES:
        vals = [d["phases"].get(label, [0.0, 0, 0.0]) for _, d in samples]
        rows[label] = {
            "ms": med([v[0] for v in vals]) * 1e3,
            "calls": int(med([v[1] for v in vals])),
            "cpu_ms": med([v[2] for v in vals]) * 1e3,
        }
    return {
        "rows": rows,
        "missing": samples[0][1]["missing"],
        "modules": modules,
        "samples": [
            {"wall": w, **{k: v for k, v in d.items() if k != "modules"}} for w, d in samples
        ],
    }


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")
_THIRD_PARTY = ("xxhash", "zstandard", "watchdog", "certifi", "_distutils_hack", "setuptools")


def group_of(name: str, site_phase: bool) -> str:
    top = name.split(".")[0]
    if top == "vx":
        parts = name.split(".")
        return "vx." + parts[1] if len(parts) > 1 else "vx"
    if site_phase:
        return "site (.pth files: certifi, distutils hack)"
    if top in _THIRD_PARTY:
        return "third party: " + top
    return "stdlib: " + top


def imports(py: str, vx_py: Path, repo: Path, env: dict[str, str], runs: int) -> dict:
    per_run = []
    for _ in range(runs):
        before_each()
        r = subprocess.run(
            [py, "-X", "importtime", str(vx_py), "run", "build", "--all"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        mods: dict[str, tuple[int, int, int]] = {}
        site_phase = True
        for line in r.stderr.splitlines():
            m = _IMPORT_LINE.match(line)
            if not m:
                continue
            self_us, cum_us, indent, name = int(m[1]), int(m[2]), len(m[3]), m[4]
            if name.startswith("vx"):
                site_phase = False
            mods[name] = (self_us, cum_us, indent, site_phase)  # type: ignore[assignment]
        per_run.append(mods)
    names = set().union(*per_run)
    med = {
        n: (
            statistics.median([r[n][0] for r in per_run if n in r]),
            statistics.median([r[n][1] for r in per_run if n in r]),
            per_run[0].get(n, (0, 0, 0, False))[3],
        )
        for n in names
    }
    groups: dict[str, float] = {}
    for n, (self_us, _, site_phase) in med.items():
        g = group_of(n, bool(site_phase) and not n.startswith("vx"))
        groups[g] = groups.get(g, 0) + self_us
    top_cum = sorted(((n, v[1]) for n, v in med.items() if n.startswith("vx")), key=lambda x: -x[1])
    top_self = sorted(((n, v[0]) for n, v in med.items()), key=lambda x: -x[1])
    return {
        "groups_us": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "total_self_us": sum(v[0] for v in med.values()),
        "top_self_us": top_self[:40],
        "top_vx_cumulative_us": top_cum[:25],
        "count": len(med),
    }


def cprofile(py: str, vx_py: Path, repo: Path, env: dict[str, str], dest: Path, top: int) -> dict:
    before_each()
    subprocess.run(
        [py, "-m", "cProfile", "-o", str(dest), str(vx_py), "run", "build", "--all"],
        cwd=repo,
        env=env,
        capture_output=True,
        check=True,
    )
    st = pstats.Stats(str(dest))
    rows = []
    agg: dict[str, list[float]] = {}
    for (file, line, func), (_cc, nc, tt, ct, _) in st.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(file).name}:{line}({func})" if line else func
        rows.append((tt, ct, nc, where))
        for key, pat in (
            ("sqlite3 (execute/fetch/commit/connect/close)", "sqlite3"),
            ("subprocess fork_exec + wait", "fork_exec|waitpid|_communicate"),
            ("posix.stat/lstat/scandir", "posix.stat|posix.lstat|scandir"),
            ("io.open + read", "io.open|method 'read'"),
            ("marshal.loads (bytecode)", "marshal.loads"),
            ("dataclass class creation", "_process_class"),
            ("re compile", r"_compile\b|sre_compile|_compiler.py"),
            ("thread waits (lock/queue)", "acquire|SimpleQueue|wait"),
        ):
            if re.search(pat, where if "built-in" not in func else func):
                a = agg.setdefault(key, [0.0, 0.0, 0])
                a[0] += tt
                a[2] += nc
    rows.sort(reverse=True)
    total = st.total_tt  # type: ignore[attr-defined]
    return {
        "total_s": total,
        "top_tottime": [
            {"tottime_ms": r[0] * 1e3, "cumtime_ms": r[1] * 1e3, "calls": r[2], "where": r[3]}
            for r in rows[:top]
        ],
        "aggregates_ms": {k: {"tottime_ms": v[0] * 1e3, "calls": v[2]} for k, v in agg.items()},
    }


def render(n: int, commit: str, ph: dict, im: dict, cp: dict, top: int) -> str:
    whole = ph["rows"]["whole process (wall)"]["ms"]
    out = [
        f"## Warm run profile, N={n}, vx {commit[:12]}\n",
        "| phase | wall ms | % of wall | thread CPU ms | calls |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, r in ph["rows"].items():
        shown = label.replace("  ", "\u00a0\u00a0")
        cpu = f"{r['cpu_ms']:.1f}" if "cpu_ms" in r else ""
        out.append(
            f"| {shown} | {r['ms']:.1f} | {100 * r['ms'] / whole:.0f}% | {cpu} | {r['calls']} |"
        )
    if ph["missing"]:
        out.append(f"\n(not in this commit: {', '.join(ph['missing'])})")
    out += [
        "",
        f"### -X importtime: {im['count']} modules, self time "
        f"{im['total_self_us'] / 1e3:.1f} ms (importtime's own overhead inflates this)\n",
        "| group | self ms |",
        "| --- | --- |",
    ]
    out += [f"| {g} | {us / 1e3:.1f} |" for g, us in list(im["groups_us"].items())[:top]]
    out += ["", "| slowest modules (self) | ms |", "| --- | --- |"]
    out += [f"| {n_} | {us / 1e3:.1f} |" for n_, us in im["top_self_us"][:top]]
    out += [
        "",
        f"### cProfile (one run, {cp['total_s'] * 1e3:.0f} ms under the profiler)\n",
        "| aggregate | own ms | calls |",
        "| --- | --- | --- |",
    ]
    out += [
        f"| {k} | {v['tottime_ms']:.1f} | {v['calls']} |"
        for k, v in sorted(cp["aggregates_ms"].items(), key=lambda kv: -kv[1]["tottime_ms"])
    ]
    out += ["", "| function | own ms | cum ms | calls |", "| --- | --- | --- | --- |"]
    out += [
        f"| `{r['where']}` | {r['tottime_ms']:.1f} | {r['cumtime_ms']:.1f} | {r['calls']} |"
        for r in cp["top_tottime"][:top]
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--packages", "-n", type=int, default=100)
    ap.add_argument("--work", default="/tmp/vx-profile")
    ap.add_argument("--python", default=None)
    ap.add_argument("--venv", action="store_true", help="as compare.py --venv")
    ap.add_argument("--vx", default=str(compare.CHECKOUT / "vx.py"))
    ap.add_argument("--vx-ref", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument(
        "--restore",
        action="store_true",
        help="profile the restore scenario instead: rm -rf packages/*/dist before each run",
    )
    ap.add_argument("--reuse", action="store_true", help="reuse WORK/repos/nN and its cache")
    a = ap.parse_args(argv)

    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    py = a.python or compare.real_python()
    if a.venv:
        py = compare.venv_python(work, py)
    vx_py, commit = Path(a.vx).resolve(), None
    if a.vx_ref:
        vx_py, commit = compare.export_ref(a.vx_ref, work)
    else:
        commit = compare.sh(["git", "-C", str(vx_py.parent), "rev-parse", "HEAD"], check=False)
        if compare.sh(
            ["git", "-C", str(vx_py.parent), "status", "--porcelain", "--", "src"], check=False
        ):
            commit += "+dirty"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        {"HOME": str(work / "home"), "PYTHONPYCACHEPREFIX": str(work / "pycache"), "NO_COLOR": "1"}
    )
    (work / "home").mkdir(exist_ok=True)
    repo = work / "repos" / f"n{a.packages}"
    if not (a.reuse and repo.is_dir()):
        repo, _ = compare.make_repo(work, a.packages, compare.find_generator(None), 20240101, None)
    vx = compare.Vx(repo, env, py, vx_py)
    if not a.reuse:
        vx.clean()
    for _ in range(2):  # fill the cache, then one warm-up (bytecode, page cache)
        subprocess.run(vx.build(), cwd=repo, env=env, capture_output=True, check=True)
    if a.restore:
        BEFORE_EACH.append(repo)
    ph = phases(py, vx_py, repo, env, a.runs)
    im = imports(py, vx_py, repo, env, max(3, a.runs // 2))
    tag = "restore" if a.restore else "warm"
    prof = work / f"{tag}-n{a.packages}.prof"
    cp = cprofile(py, vx_py, repo, env, prof, a.top * 2)
    (work / f"profile-{tag}-n{a.packages}.json").write_text(
        json.dumps(
            {"commit": commit, "python": py, "phases": ph, "imports": im, "cprofile": cp}, indent=1
        )
    )
    print(
        render(a.packages, commit or "?", ph, im, cp, a.top).replace(
            "Warm run", tag.title() + " run"
        )
    )
    print(f"\nraw: {work / f'profile-{tag}-n{a.packages}.json'}, profile: {prof}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
