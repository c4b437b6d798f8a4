#!/usr/bin/env python3
"""Build each standalone-binary candidate for vx once, then time them beside the channels.

    python3 bench/binaries.py [--work /tmp/vx-binaries] [--only nuitka-standalone,...]
                              [--runs 7] [--packages 100]

Candidates (each built into --work, kept there, and rebuilt only when its folder is missing,
since a Nuitka build takes 10-40 minutes on a busy 2-core machine):
  nuitka-standalone  build/binary.py --mode standalone: a folder, the executable inside it
  nuitka-onefile     build/binary.py --mode onefile: one file that unpacks into a per-build
                     cache dir on its first start and reuses that dir after
  pyinstaller-onedir PyInstaller --onedir --optimize 2: a folder, its bootloader starting the
                     bundled interpreter over the modules' archive
The fourth candidate, a standalone CPython carrying the zipapp, is channels.py's `zipapp -S`
row: the same archive under `python3 -I -S`, which is how such a bundle would start it.

Timing is bench/channels.py's: `--version` min / median over 2 x --runs turns, and a warm
`vx run build --all` on its generated repo. Needs nuitka, pyinstaller (pip), patchelf (apt).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# What PyInstaller leaves out: modules vx never imports at run time (build/binary.py's list).
_PYI_EXCLUDES = ("pytest", "_pytest", "setuptools", "pip", "unittest", "doctest", "pydoc")


def nuitka(work: Path, mode: str) -> tuple[list[str], Path]:
    out = work / f"nuitka-{mode}"
    argv = [sys.executable, str(REPO / "build" / "binary.py"), "--mode", mode, "--out", str(out)]
    exe = out / "vx_main.dist" / "vx" if mode == "standalone" else out / "vx"
    return argv, exe


def pyinstaller(work: Path) -> tuple[list[str], Path]:
    out = work / "pyinstaller-onedir"
    out.mkdir(parents=True, exist_ok=True)
    script = out / "vx_main.py"
    script.write_text("from vx.cli.entry import entry\n\nentry()\n")
    argv = [
        sys.executable, "-m", "PyInstaller", "--onedir", "--noconfirm", "--log-level=WARN",
        "--name=vx", f"--distpath={out / 'dist'}", f"--workpath={out / 'work'}",
        f"--specpath={out}", f"--paths={REPO / 'src'}", "--collect-submodules=vx",
        "--optimize=2", f"--add-data={REPO / 'docs'}:vx/_data/docs",
        f"--add-data={REPO / 'schemas'}:vx/_data/schemas",
        *(f"--exclude-module={m}" for m in _PYI_EXCLUDES), str(script),
    ]  # fmt: skip
    return argv, out / "dist" / "vx" / "vx"


CANDIDATES = {
    "nuitka-standalone": lambda work: nuitka(work, "standalone"),
    "nuitka-onefile": lambda work: nuitka(work, "onefile"),
    "pyinstaller-onedir": pyinstaller,
}


def build(name: str, work: Path) -> Path:
    """Build one candidate unless its executable is already there; the executable's path."""
    argv, exe = CANDIDATES[name](work)
    if exe.exists():
        sys.stderr.write(f"{name}: reusing {exe}\n")
        return exe
    start = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(argv, env=env, check=False)
    if done.returncode != 0 or not exe.exists():
        raise SystemExit(f"{name}: the build exited {done.returncode}")
    sys.stderr.write(f"{name}: built in {time.monotonic() - start:.0f} s → {exe}\n")
    return exe


def main() -> int:
    parser = argparse.ArgumentParser(description="build and time vx's binary candidates")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vx-binaries")
    parser.add_argument("--only", default=",".join(CANDIDATES), help="comma-separated names")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--packages", type=int, default=100)
    parser.add_argument("--npm", action="store_true", help="add channels.py's npm row")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        raise SystemExit(f"unknown candidate {unknown[0]}: one of {', '.join(CANDIDATES)}")
    built = {name: build(name, work) for name in names}
    # The shipped shape rides the wheel and npm rows: the Nuitka standalone folder.
    folder = built.get("nuitka-standalone")
    argv = [
        sys.executable, str(HERE / "channels.py"), "--work", str(work / "channels"),
        "--runs", str(args.runs), "--packages", str(args.packages),
        *(f"--binary={name}={exe}" for name, exe in built.items()),
        *([f"--folder={folder.parent}"] if folder else []), *(["--npm"] if args.npm else []),
    ]  # fmt: skip
    return subprocess.run(argv, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
