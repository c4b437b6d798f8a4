#!/usr/bin/env python3
"""Time vx as each distribution channel delivers it: `--version` and a warm N=100 run.

    python3 bench/channels.py [--binary [NAME=]PATH]... [--folder DIR] [--npm] [--runs 7]

Channels, each timed on the same generated repo (bench/compare.py's generator and layout):
  source     `python3 vx.py` from this checkout (the reference)
  zipapp     vx.pyz from build/pyz.py, started by its shebang
  zipapp -S  the same archive under `python3 -I -S`, its dependencies put on sys.path by
             hand (what a standalone CPython carrying the zipapp would run: no site)
  pip        the pure wheel from build/wheels.py, installed in a venv (its `vx` script)
  pip folder the platform wheel carrying --folder (the standalone build), in its own venv:
             its `vx` is the sh launcher that execs the folder's binary
  npm        the npm launcher from build/npm.py in a temp prefix, its platform package
             carrying --folder, else a folder holding vx.pyz as its `vx`
  binary     each --binary given (a Nuitka standalone or onefile build), as NAME=PATH or PATH

Each sample is a whole-process wall clock. `--version` is sampled 2 x --runs times, the
channels taking turns, and reported as min / median; a warm run (median [min..max]) is
`vx run build --all` with everything cached and the outputs on disk, primed once per
channel, then sampled --runs times, the channels again taking turns. Stdlib only; needs node and npm for the npm row (skipped otherwise).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from compare import find_generator, make_repo, timed  # noqa: E402

# A standalone CPython carrying the zipapp and its dependencies would start like this: no
# site module, no user paths, the archive and the dependencies' directory on sys.path.
_NO_SITE = (
    "import sys; sys.path[:0] = [%r, %r]; from vx.cli.entry import entry; "
    "sys.argv[0] = 'vx'; entry()"
)


def _purelib() -> str:
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _venv_with(work: Path, name: str, wheel: Path) -> Path:
    venv = work / name
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-index", "--ignore-installed", str(wheel)],
        check=True,
    )  # fmt: skip
    return venv


def build_channels(
    work: Path, binaries: list[str], folder: str | None, with_npm: bool
) -> dict[str, list[str]]:
    """Build every channel's artifact into `work`; name → the command that runs vx."""
    python = sys.executable
    pyz = work / "vx.pyz"
    subprocess.run([python, str(REPO / "build" / "pyz.py"), "--out", str(pyz)], check=True)
    channels: dict[str, list[str]] = {
        "source": [python, str(REPO / "vx.py")],
        "zipapp": [str(pyz)],
        "zipapp -S": [python, "-I", "-S", "-c", _NO_SITE % (str(pyz), _purelib())],
    }
    wheels = work / "wheels"
    subprocess.run([python, str(REPO / "build" / "wheels.py"), "--out", str(wheels)], check=True)
    (pure,) = wheels.glob("*-none-any.whl")
    channels["pip"] = [str(_venv_with(work, "venv", pure) / "bin" / "vx")]
    if folder:
        subprocess.run(
            [python, str(REPO / "build" / "wheels.py"), "--out", str(work / "wheels-folder"),
             "--folder", folder],
            check=True, capture_output=True,
        )  # fmt: skip
        (platform_wheel,) = (work / "wheels-folder").glob("*-none-[!a]*.whl")
        venv = _venv_with(work, "venv-folder", platform_wheel)
        channels["pip folder"] = [str(venv / "bin" / "vx")]
    named = [b.split("=", 1) if "=" in b else [Path(b).name, b] for b in binaries]
    if with_npm and shutil.which("npm"):
        carried = folder
        if carried is None:
            (work / "pyz-folder").mkdir()
            shutil.copy2(pyz, work / "pyz-folder" / "vx")
            carried = str(work / "pyz-folder")
        npm_out = work / "npm"
        tarballs = subprocess.run(
            [python, str(REPO / "build" / "npm.py"), "--folder", carried, "--out", str(npm_out)],
            check=True, capture_output=True, text=True,
        ).stdout.split()
        prefix = work / "npm-prefix"
        subprocess.run(
            ["npm", "install", "-g", "--prefix", str(prefix), "--offline", "--no-audit",
             "--no-fund", *tarballs],
            check=True, capture_output=True,
        )
        channels["npm folder" if folder else "npm (vx.pyz)"] = [str(prefix / "bin" / "vx")]
    for name, path in named:
        channels[f"binary {name}"] = [path]
    return channels


def sample(cmd: list[str], cwd: Path, env: dict[str, str], runs: int, log: Path) -> list[float]:
    walls = []
    for _ in range(runs):
        s = timed(cmd, cwd, env, log)
        if s["rc"] != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {s['rc']}: see {log}")
        walls.append(float(s["wall"]))  # type: ignore[arg-type]
    return walls


def cell(walls: list[float]) -> str:
    ms = [w * 1000 for w in walls]
    return f"{statistics.median(ms):.0f} ms [{min(ms):.0f}..{max(ms):.0f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description="time vx per distribution channel")
    parser.add_argument("--binary", action="append", default=[], help="NAME=PATH or PATH")
    parser.add_argument("--npm", action="store_true", help="add the npm launcher row")
    parser.add_argument(
        "--folder", default=None, help="a standalone folder for the platform wheel and npm rows"
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--packages", type=int, default=100)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vx-channels")
    args = parser.parse_args()
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    channels = build_channels(work, args.binary, args.folder, args.npm)
    repo, _ = make_repo(work, args.packages, find_generator(None), 20240101, None)
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VX_", "CI"))}
    env.update({"HOME": str(home), "NO_COLOR": "1"})
    log = work / "last.log"
    # --version: the channels take turns, round by round, so a burst of load on this shared
    # machine hits them alike; min is the figure least disturbed by it.
    versions: dict[str, list[float]] = {name: [] for name in channels}
    for _ in range(args.runs * 2):
        for name, cmd in channels.items():
            versions[name] += sample([*cmd, "--version"], work, env, 1, log)
    rows = [
        f"| channel | `--version` min / median | warm `run build --all` (N={args.packages}) |",
        "| --- | --- | --- |",
    ]
    runs = {name: [*cmd, "run", "build", "--all"] for name, cmd in channels.items()}
    for run in runs.values():
        sample(run, repo, env, 1, log)  # prime: this channel's cache entries and warm snapshot
    # The warm runs take turns too, for the same reason as --version.
    warm: dict[str, list[float]] = {name: [] for name in channels}
    for _ in range(args.runs):
        for name, run in runs.items():
            warm[name] += sample(run, repo, env, 1, log)
    for name in channels:
        ms = sorted(v * 1000 for v in versions[name])
        rows.append(
            f"| {name} | {ms[0]:.0f} / {statistics.median(ms):.0f} ms | {cell(warm[name])} |"
        )
        sys.stderr.write(rows[-1] + "\n")
    load = os.getloadavg()
    sys.stdout.write("\n".join(rows) + f"\n\nload average at the end: {load[0]:.1f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
