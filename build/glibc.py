#!/usr/bin/env python3
"""Check the glibc a built folder needs: the newest `GLIBC_x.y` any of its ELF files requires.

A binary runs only where glibc is at least every symbol version it links against, so the
floor is the highest version named in the folder's version-needs sections (`readelf -V`).
Releases build in a manylinux2014 container (glibc 2.17) and run this to prove nothing in the
folder asks for more.

    python3 build/glibc.py --folder DIR [--max 2.17]

Prints `glibc <x.y> (<file>)`, the floor and the file that sets it; with --max, a file that
needs more is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

_NEED = re.compile(r"Name: GLIBC_([0-9]+(?:\.[0-9]+)+)")


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def needs(path: Path) -> tuple[int, ...] | None:
    """The highest GLIBC_ version `path` requires; None when it is no ELF or needs none."""
    with path.open("rb") as f:
        if f.read(4) != b"\x7fELF":
            return None
    shown = subprocess.run(
        ["readelf", "--version-info", "--wide", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = [version(m) for m in _NEED.findall(shown)]
    return max(found) if found else None


def floor(folder: Path) -> tuple[tuple[int, ...], Path] | None:
    """The folder's glibc floor and the file that sets it (None: no file needs glibc)."""
    best: tuple[tuple[int, ...], Path] | None = None
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        need = needs(path)
        if need is not None and (best is None or need > best[0]):
            best = (need, path)
    return best


def main() -> int:
    """Command line: print the floor; with --max, refuse a folder above it."""
    parser = argparse.ArgumentParser(description="the glibc a built folder needs")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--max", default=None, help="the highest glibc allowed, e.g. 2.17")
    args = parser.parse_args()
    if shutil.which("readelf") is None:
        sys.stderr.write("build/glibc.py: readelf is not installed (apt-get install binutils)\n")
        return 1
    found = floor(args.folder)
    if found is None:
        sys.stdout.write("glibc: no file in the folder needs it\n")
        return 0
    need, path = found
    shown = ".".join(map(str, need))
    where = path.relative_to(args.folder)
    if args.max is not None and need > version(args.max):
        sys.stderr.write(
            f"build/glibc.py: {where} needs glibc {shown}, above the stated floor {args.max} — "
            "build in the manylinux2014 container (see .github/workflows/release.yml)\n"
        )
        return 1
    sys.stdout.write(f"glibc {shown} ({where})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
