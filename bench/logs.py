"""Peak memory of writing and replaying one long task log, and what it costs `cache.db`.

    python3 bench/logs.py [--mb 50] [--work /tmp/vx-bench-logs]

One cached task with no outputs prints about `--mb` megabytes of test-suite lines (as a
test runner does: many short, similar lines). Three runs of `vx run a#test`, each a
subprocess whose peak RSS `os.wait4` reports: the run that executes and saves the log, the
full-path replay (a local hit), and the warm replay of that. Reported: each peak, each
replay's ratio to the writing run's (the goal is ≤ 1.2), `cache.db`'s size, the bytes its
log rows hold, and `vx info`'s count of the cache. Stdlib only; runs this checkout's vx.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

VX = Path(__file__).resolve().parent.parent / "vx.py"
LINE = "ok {i} - parses the config and reports every field it refused, in order"


def workspace(root: Path, mb: int) -> None:
    lines = mb * 1_000_000 // (len(LINE) + 4)
    shutil.rmtree(root, ignore_errors=True)
    (root / "packages/a/src").mkdir(parents=True)
    command = f"python3 -c \"[print(f'{LINE}') for i in range({lines})]\""
    task = {"exec": command, "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": []}}}
    files = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        "vx.workspace.json": {"cacheDir": "../cache"},
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"test": task}},
    }
    for name, doc in files.items():
        (root / name).write_text(json.dumps(doc))
    (root / "packages/a/src/x").write_text("x\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=_env(root))


def _env(root: Path) -> dict[str, str]:
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }


def peak_rss(root: Path, *args: str) -> tuple[int, bytes]:
    """The run's peak RSS in bytes (vx's own process) and what it printed."""
    with open(root.parent / "out.log", "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(VX), *args], cwd=root, env=_env(root), stdout=out, stderr=out
        )
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = (root.parent / "out.log").read_bytes()
    if proc.returncode != 0:
        raise SystemExit(f"vx {' '.join(args)} exited {proc.returncode}:\n{text[-2000:]!r}")
    return usage.ru_maxrss * 1024, text


def _log_lines(text: bytes) -> list[bytes]:
    return [line for line in text.splitlines() if line.startswith(b"ok ")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--work", type=Path, default=Path("/tmp/vx-bench-logs"))
    opts = parser.parse_args()
    root = opts.work / "ws"
    shutil.rmtree(opts.work, ignore_errors=True)
    workspace(root, opts.mb)
    run = ["run", "a#test", "--output-logs=full"]
    wrote, text = peak_rss(root, *run)
    full, replayed = peak_rss(root, *run)
    warm, warm_text = peak_rss(root, *run)
    log_bytes = sum(len(line) + 1 for line in _log_lines(text))
    for name, out in (("full", replayed), ("warm", warm_text)):
        if _log_lines(out) != _log_lines(text):
            raise SystemExit(f"the {name} replay printed another log")
    store = opts.work / "cache"
    with closing(sqlite3.connect(store / "cache.db")) as conn:
        (stored,) = conn.execute("SELECT coalesce(sum(length(data)), 0) FROM entry_log").fetchone()
    info = subprocess.run(
        [sys.executable, str(VX), "info", "--format=json"],
        cwd=root,
        env=_env(root),
        capture_output=True,
        check=True,
    )
    counted = json.loads(info.stdout)["cacheBytes"]
    mib = 1024 * 1024
    print(f"log printed            {log_bytes / mib:8.1f} MiB")
    print(f"peak RSS, run writing  {wrote / mib:8.1f} MiB")
    print(f"peak RSS, full replay  {full / mib:8.1f} MiB  ({full / wrote:.2f}x)")
    print(f"peak RSS, warm replay  {warm / mib:8.1f} MiB  ({warm / wrote:.2f}x)")
    print(f"cache.db               {(store / 'cache.db').stat().st_size / mib:8.2f} MiB")
    print(f"log rows (compressed)  {stored / mib:8.2f} MiB")
    print(f"vx info cache bytes    {counted / mib:8.2f} MiB")


if __name__ == "__main__":
    main()
