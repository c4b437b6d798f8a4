#!/usr/bin/env python3
"""Build the standalone vx binary with Nuitka, for the host platform.

`--mode standalone` (the default, what releases ship) compiles vx and the modules it reaches
into a folder: `vx_main.dist/vx` beside the shared libraries it loads, started without unpacking
anything. `--mode onefile` packs that folder into one file that unpacks into a per-build
cache dir on its first start and reuses it after (the bench's second candidate). Both carry
`docs/` and `schemas/` in `share/` beside the executable, where `vx.util.shipped` looks in a
compiled vx (a `vx/` data dir would collide with the `vx` executable).

The verbs are imported by name at run time (`vx.cli.verbs`), so the whole `vx` package is
included explicitly; `site` is skipped at start, since the binary has no site-packages.
grpcio goes in too (the REAPI cache's client, which a binary user cannot pip install): a
compiled module loads only when imported, so a run without the REAPI plugin never loads it.

    python3 build/binary.py [--mode standalone|onefile] [--out dist/binary] [--jobs N]

Needs Nuitka (`pip install nuitka`), grpcio (`pip install grpcio`), a C compiler and, on
Linux, patchelf.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Modules vx never imports at run time but that something it reaches may name: left out, so
# the build compiles (and the folder carries) none of them. The `otel` and `mcp` extras are
# pip installs (the binary has no site-packages to add them to): vx sees them missing.
_NOT_SHIPPED = (
    "pytest,_pytest,setuptools,pip,nuitka,IPython,unittest,doctest,pydoc,pydoc_data,tkinter,"
    "idlelib,lib2to3,ensurepip,distutils,test,opentelemetry,mcp,mcp_types"
)


def nuitka_argv(mode: str, out: Path, jobs: int) -> list[str]:
    """The Nuitka command line for one build mode."""
    argv = [
        sys.executable,
        "-m",
        "nuitka",
        f"--mode={mode}",
        f"--output-dir={out}",
        "--output-filename=vx",
        "--include-package=vx",
        # The REAPI plugin imports grpc by name (importlib), which Nuitka cannot follow.
        "--include-module=grpc",
        f"--include-data-dir={REPO / 'docs'}=share/docs",
        f"--include-data-dir={REPO / 'schemas'}=share/schemas",
        # No site module (the binary has no site-packages), no asserts, no docstrings: less
        # to run and to load at every start. Nothing in vx reads a docstring at run time.
        "--python-flag=no_site,-O,no_docstrings",
        f"--nofollow-import-to={_NOT_SHIPPED}",
        "--assume-yes-for-downloads",
        "--quiet",
        f"--jobs={jobs}",
    ]
    if mode == "onefile":
        argv += [
            # One unpack dir per build: two builds of one version never share a stale one.
            f"--onefile-tempdir-spec={{CACHE_DIR}}/vx/onefile-{_version()}-{_build_id()}",
            "--onefile-cache-mode=cached",
            "--onefile-no-compression",
            "--file-version=" + _version(),
        ]
    return [*argv, str(_main_script(out))]


def _main_script(out: Path) -> Path:
    """The program Nuitka compiles: the console script's call. Not vx.py, whose module name
    would shadow the `vx` package inside the binary."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "vx_main.py"
    script.write_text("from vx.cli.entry import entry\n\nentry()\n")
    return script


def _build_id() -> str:
    """12 hex digits of the SHA-256 over the sources and the data the binary carries."""
    digest = hashlib.sha256()
    for top in ("src", "docs", "schemas"):
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(REPO).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _version() -> str:
    for line in (REPO / "src" / "vx" / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split('"')[1]
    raise SystemExit("no __version__ in src/vx/__init__.py")


def built_binary(mode: str, out: Path) -> Path:
    """Where Nuitka leaves the executable for `mode`."""
    return out / "vx_main.dist" / "vx" if mode == "standalone" else out / "vx"


def main() -> int:
    """Command line: build one mode into --out and print the executable's path."""
    parser = argparse.ArgumentParser(description="build the standalone vx binary")
    parser.add_argument("--mode", choices=("standalone", "onefile"), default="standalone")
    parser.add_argument("--out", type=Path, default=REPO / "dist" / "binary")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    out = args.out.resolve()
    if shutil.which("patchelf") is None and sys.platform == "linux":
        sys.stderr.write("build/binary.py: patchelf is not installed (apt-get install patchelf)\n")
        return 1
    if importlib.util.find_spec("grpc") is None:
        sys.stderr.write(
            "build/binary.py: grpcio is not installed, and the binary carries it for the REAPI "
            "cache (python3 -m pip install grpcio)\n"
        )
        return 1
    # This checkout's src first: an editable install elsewhere must not be what gets compiled;
    # and not from the checkout's root, where vx.py would pass for the `vx` package.
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = nuitka_argv(args.mode, out, args.jobs)
    done = subprocess.run(argv, env=env, cwd=out, check=False)
    if done.returncode != 0:
        sys.stderr.write(f"build/binary.py: nuitka exited {done.returncode}\n")
        return done.returncode
    sys.stdout.write(f"{built_binary(args.mode, out)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
