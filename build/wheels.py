#!/usr/bin/env python3
"""Build vx's wheels: the pure-Python one, and a platform one carrying the binary as its script.

The pure wheel (`vx_runner-<v>-py3-none-any.whl`: the distribution is `vx-runner`, as `vx`
is another project's name on PyPI) is vx's package with the manual and schemas in
`vx/_data`, the `vx` console script, and the three runtime dependencies; it runs wherever
Python 3.11 does. The platform wheel (`vx_runner-<v>-py3-none-<platform>.whl`, after ruff's and
uv's pattern) puts a native vx on PATH with no dependency to resolve. The binary is a folder
(the executable beside the libraries it loads), which a wheel's scripts slot cannot hold, so
the folder goes into the package as `vx/_bin/` and the `vx` script is a few lines of sh that
finds it from its own place (`<prefix>/bin/vx` → `<prefix>/lib/python3*/*-packages/vx/_bin/vx`,
in the package whose RECORD is newest: the one installed with it)
and execs it: no Python starts. `python -m vx` execs the same binary.

Both are written directly (a wheel is a zip with three metadata files), so building needs
neither network nor a build backend.

    python3 build/wheels.py [--out dist] [--folder DIR]   # --folder adds the platform wheel
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import platform
import stat
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed member times: the same tree makes the same wheel


class Wheel:
    """A wheel being written: each member hashed into RECORD as it goes in."""

    def __init__(self, path: Path, dist_info: str) -> None:
        self.path = path
        self.dist_info = dist_info
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records: list[str] = []

    def add(self, name: str, data: bytes, *, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, _EPOCH)
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{name},sha256={digest},{len(data)}")

    def close(self) -> Path:
        record = f"{self.dist_info}/RECORD"
        body = "\n".join([*self.records, f"{record},,"]) + "\n"
        self.zip.writestr(zipfile.ZipInfo(record, _EPOCH), body)
        self.zip.close()
        return self.path


def project() -> dict[str, object]:
    """pyproject.toml's [project] table."""
    table: dict[str, object] = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return table


def wheel_name(meta: dict[str, object]) -> str:
    """The distribution's name as wheel files and dist-info folders spell it (`vx_runner`)."""
    return str(meta["name"]).replace("-", "_")


# The platform wheel's floor: its `vx` is sh running the binary, which starts no Python, and
# `python -m vx` only execs that binary (vx/__main__.py, vx/__init__.py run on 3.8).
PLATFORM_REQUIRES_PYTHON = ">=3.8"


def metadata(meta: dict[str, object], *, requires: bool) -> str:
    """METADATA: the pure wheel's Python floor and dependencies, or the platform wheel's none."""
    python = meta["requires-python"] if requires else PLATFORM_REQUIRES_PYTHON
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {meta['name']}",
        f"Version: {meta['version']}",
        f"Summary: {meta['description']}",
        f"Requires-Python: {python}",
        "License: MIT",
    ]
    if requires:
        lines += [f"Requires-Dist: {d}" for d in meta["dependencies"]]  # type: ignore[attr-defined]
    lines += ["Description-Content-Type: text/markdown", ""]
    return "\n".join(lines) + "\n" + (REPO / "README.md").read_text()


def add_package(wheel: Wheel) -> None:
    """vx's modules, then the manual and the schemas under vx/_data."""
    src = REPO / "src"
    for path in sorted((src / "vx").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            wheel.add(path.relative_to(src).as_posix(), path.read_bytes())
    for kind, pattern in (("docs", "*.md"), ("schemas", "*.json")):
        for path in sorted((REPO / kind).glob(pattern)):
            wheel.add(f"vx/_data/{kind}/{path.name}", path.read_bytes())


def wheel_file(tag: str, *, root_is_purelib: bool) -> str:
    purelib = "true" if root_is_purelib else "false"
    return (
        "Wheel-Version: 1.0\nGenerator: vx build/wheels.py\n"
        f"Root-Is-Purelib: {purelib}\nTag: {tag}\n"
    )


def pure(out: Path) -> Path:
    """The pure-Python wheel."""
    meta = project()
    name, version = wheel_name(meta), str(meta["version"])
    dist_info = f"{name}-{version}.dist-info"
    wheel = Wheel(out / f"{name}-{version}-py3-none-any.whl", dist_info)
    add_package(wheel)
    wheel.add(f"{dist_info}/METADATA", metadata(meta, requires=True).encode())
    wheel.add(f"{dist_info}/WHEEL", wheel_file("py3-none-any", root_is_purelib=True).encode())
    scripts = meta.get("scripts", {})
    entry = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())  # type: ignore[attr-defined]
    wheel.add(f"{dist_info}/entry_points.txt", entry.encode())
    wheel.add(f"{dist_info}/top_level.txt", b"vx\n")
    return wheel.close()


def platform_tag() -> str:
    """This machine's wheel platform tag: the glibc the binary was linked against, or macOS 11."""
    machine = platform.machine().lower()
    if sys.platform == "darwin":
        return f"macosx_11_0_{'arm64' if machine in ('arm64', 'aarch64') else 'x86_64'}"
    libc, libc_version = platform.libc_ver()
    if libc != "glibc":
        return f"musllinux_1_2_{machine}"
    major, minor = libc_version.split(".")[:2]
    return f"manylinux_{major}_{minor}_{machine}"


# The platform wheel's `vx` script: follow its own symlinks (pipx links bin/vx elsewhere),
# then exec the binary in the package beside the prefix's interpreter. Plain sh, no readlink -f
# (older macOS lacks it).
LAUNCHER = """#!/bin/sh
# vx's platform wheel: run the standalone binary installed in the vx package.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) self=$(dirname "$self")/$link ;; esac
done
prefix=$(cd "$(dirname "$self")/.." && pwd)
# The package installed with this launcher has the newest RECORD of the prefix's vx installs:
# not the first in sort order (python3.10 sorts before python3.9), nor a stale vx left under
# another Python.
records=$(ls -t "$prefix"/lib/python3*/*-packages/vx_runner-*.dist-info/RECORD 2>/dev/null)
binary=$(printf '%s\n' "$records" | while IFS= read -r record; do
  candidate=$(dirname "$(dirname "$record")")/vx/_bin/vx
  if [ -x "$candidate" ]; then printf '%s\n' "$candidate"; break; fi
done)
[ -n "$binary" ] && exec "$binary" "$@"
echo "vx: the vx binary is missing under $prefix/lib — reinstall:" \\
  "python3 -m pip install --force-reinstall vx-runner" >&2
exit 1
"""


def with_folder(out: Path, folder: Path, tag: str) -> Path:
    """The platform wheel: the package with the binary's folder as vx/_bin, no dependencies,
    and the sh launcher as `vx`."""
    if not (folder / "vx").is_file():
        raise SystemExit(f"build/wheels.py: {folder} holds no vx executable")
    meta = project()
    name, version = wheel_name(meta), str(meta["version"])
    dist_info = f"{name}-{version}.dist-info"
    wheel = Wheel(out / f"{name}-{version}-py3-none-{tag}.whl", dist_info)
    add_package(wheel)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            executable = bool(path.stat().st_mode & 0o111)
            member = f"vx/_bin/{path.relative_to(folder).as_posix()}"
            wheel.add(member, path.read_bytes(), executable=executable)
    wheel.add(f"{name}-{version}.data/scripts/vx", LAUNCHER.encode(), executable=True)
    wheel.add(f"{dist_info}/METADATA", metadata(meta, requires=False).encode())
    wheel.add(f"{dist_info}/WHEEL", wheel_file(f"py3-none-{tag}", root_is_purelib=False).encode())
    wheel.add(f"{dist_info}/top_level.txt", b"vx\n")
    return wheel.close()


def main() -> int:
    """Command line: write the pure wheel, and the platform wheel when --folder is given."""
    parser = argparse.ArgumentParser(description="build vx's wheels")
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    parser.add_argument("--folder", type=Path, help="the binary's folder (holding vx) to carry")
    parser.add_argument("--platform-tag", default=None, help="default: this machine's")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    made = [pure(args.out)]
    if args.folder:
        made.append(with_folder(args.out, args.folder, args.platform_tag or platform_tag()))
    sys.stdout.write("".join(f"{p}\n" for p in made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
