#!/usr/bin/env python3
"""Time a warm run from an empty local cache against a local remote cache: vx beside turbo.

    python3 bench/remote.py [--packages 100] [--runs 5] [--work DIR] [--json FILE]
                            [--venv] [--vx-ref REF]

Stdlib only; reuses bench/compare.py's repo generator, turbo install and timer. Steps:

1. Generate the N-package repo (shared/bench/genrepo.py, as compare.py does), declare
   `"plugins": ["vx.plugins.turbo:plugin"]` in vx.workspace.json, and commit.
2. Install turbo@2.11.11 and turborepo-remote-cache@2.12.0 with npm into WORK/tools, and start
   the server on 127.0.0.1 with local storage (WORK/remote-store) and a token.
3. Fill the server: one cold `build` with each tool (both upload every task).
4. Each sample, alternating the tools: remove every dist/, the tool's local cache (vx: a
   fresh HOME, so an empty ~/.vx; turbo: .turbo/ and node_modules/.cache), then `build`.
   Every task must come from the remote cache: a sample whose log shows an executed task
   stops the bench.

Both tools get TURBO_API/TURBO_TOKEN/TURBO_TEAM for the same server. `--venv` and `--vx-ref`
mean what they mean to compare.py: vx in a plain venv (no `.pth` of the base interpreter runs
at start-up) and a `git archive` of that commit instead of the work tree; vx's bytecode goes
to WORK/pycache either way, compiled once as an installed vx's would be.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER_VERSION = "2.12.0"
TOKEN = "bench-token"  # noqa: S105  a throwaway token for a server on 127.0.0.1
TEAM = "team_bench"


def _compare() -> object:
    spec = importlib.util.spec_from_file_location("compare", HERE / "compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare"] = module
    spec.loader.exec_module(module)
    return module


def install_server(tools: Path) -> Path:
    script = tools / "node_modules" / "turborepo-remote-cache" / "dist" / "cli.js"
    if not script.is_file():
        print(f"installing turborepo-remote-cache@{SERVER_VERSION} …", file=sys.stderr)
        subprocess.run(
            ["npm", "install", "--prefix", str(tools), "--no-audit", "--no-fund",
             f"turborepo-remote-cache@{SERVER_VERSION}"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    return script


def start_server(script: Path, store: Path) -> tuple[subprocess.Popen[str], str]:
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    env = {
        "PATH": os.environ["PATH"],
        "STORAGE_PROVIDER": "local",
        "STORAGE_PATH": str(store),
        "STORAGE_PATH_USE_TMP_FOLDER": "false",
        "TURBO_TOKEN": TOKEN,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "LOG_LEVEL": "info",  # the "Server listening at" line is at info
        "ENABLE_STATUS_LOG": "false",
    }
    proc = subprocess.Popen(
        ["node", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            message = str(json.loads(line).get("message", ""))
        except ValueError:
            continue
        if message.startswith("Server listening at "):
            url = message.removeprefix("Server listening at ").strip()
            # keep draining the log so the server never blocks on a full pipe
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, url
    raise SystemExit("remote: turborepo-remote-cache did not start")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--packages", "-n", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/tmp/vx-bench-remote")
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--venv", action="store_true", help="run vx in WORK/venv (see compare.py)")
    ap.add_argument("--vx-ref", default=None, help="time this commit, not the work tree")
    args = ap.parse_args(argv)
    cmp = _compare()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    turbo_bin, turbo_pkg = cmp.install_turbo(work)  # type: ignore[attr-defined]
    script = install_server(work / "tools")
    gen = cmp.find_generator(None)  # type: ignore[attr-defined]
    repo, _meta = cmp.make_repo(work, args.packages, gen, args.seed, turbo_pkg)  # type: ignore[attr-defined]
    (repo / "vx.workspace.json").write_text('{"plugins": ["vx.plugins.turbo:plugin"]}\n')
    for cmd in (["git", "add", "-A"], ["git", "commit", "-qm", "bench: remote cache plugin"]):
        subprocess.run(cmd, cwd=repo, check=True, stdout=subprocess.DEVNULL)
    proc, url = start_server(script, work / "remote-store")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("VX_", "TURBO_", "CI"))}
    base.update(
        TURBO_API=url, TURBO_TOKEN=TOKEN, TURBO_TEAM=TEAM,
        TURBO_TELEMETRY_DISABLED="1", DO_NOT_TRACK="1", NO_COLOR="1",
    )  # fmt: skip
    python = cmp.real_python()  # type: ignore[attr-defined]
    if args.venv:
        python = cmp.venv_python(work, python)  # type: ignore[attr-defined]
    vx_py = HERE.parent / "vx.py"
    if args.vx_ref:
        vx_py, _ref = cmp.export_ref(args.vx_ref, work)  # type: ignore[attr-defined]
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    homes = work / "homes"

    def vx_cmd() -> list[str]:
        return [python, str(vx_py), "run", "build", "--all"]

    def turbo_cmd() -> list[str]:
        return [str(turbo_bin), "run", "build", "--ui=stream"]

    def clean(i: int) -> dict[str, str]:
        subprocess.run("rm -rf packages/*/dist packages/*/.turbo .turbo node_modules/.cache .vx",
                       shell=True, cwd=repo, check=True)  # fmt: skip
        home = homes / f"h{i}"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        return {**base, "HOME": str(home)}

    samples: dict[str, list[dict[str, object]]] = {"vx": [], "turbo": []}
    try:
        for tool, cmd in (("vx", vx_cmd()), ("turbo", turbo_cmd())):
            env = clean(0)
            done = cmp.timed(cmd, repo, env, logs / f"fill-{tool}.log")  # type: ignore[attr-defined]
            if done["rc"] != 0:
                raise SystemExit(f"remote: filling with {tool} failed; see {logs}/fill-{tool}.log")
        time.sleep(1)
        for i in range(1, args.runs + 1):
            for tool, cmd in (("vx", vx_cmd()), ("turbo", turbo_cmd())):
                env = clean(i)
                log = logs / f"{tool}-{i}.log"
                sample = cmp.timed(cmd, repo, env, log)  # type: ignore[attr-defined]
                text = log.read_text(errors="replace")
                hits = _all_remote(tool, text, args.packages)
                if sample["rc"] != 0 or not hits:
                    raise SystemExit(
                        f"remote: {tool} sample {i} was not all remote hits; see {log}"
                    )
                samples[tool].append(sample)
    finally:
        proc.kill()
        proc.wait()
    summary = {tool: cmp.summarize(s) for tool, s in samples.items()}  # type: ignore[attr-defined]
    ratio = summary["vx"]["wall_med"] / summary["turbo"]["wall_med"]
    print(
        f"| N={args.packages}: warm run, empty local cache, all remote hits | wall median [min..max] | CPU median |"
    )
    print("| --- | --- | --- |")
    for tool in ("vx", "turbo"):
        s = summary[tool]
        print(
            f"| {tool} | {s['wall_med']:.3f} s [{s['wall_min']:.3f}..{s['wall_max']:.3f}] | {s['cpu_med']:.3f} s |"
        )
    print(f"\nvx / turbo (median wall): {ratio:.2f}x")
    out = Path(args.json) if args.json else work / f"remote-n{args.packages}.json"
    out.write_text(json.dumps({"packages": args.packages, "server": url, "summary": summary,
                               "ratio": ratio}, indent=2, default=str))  # fmt: skip
    return 0


def _all_remote(tool: str, text: str, packages: int) -> bool:
    """The log shows every task served from the remote cache (nothing executed)."""
    if tool == "vx":
        return "all cached" in text and f"{packages} remote" in text
    m = re.findall(r"Cached:\s+(\d+) cached, (\d+) total", text)
    return bool(m) and m[-1][0] == m[-1][1] and int(m[-1][1]) >= packages


if __name__ == "__main__":
    raise SystemExit(main())
