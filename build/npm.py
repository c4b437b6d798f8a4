#!/usr/bin/env python3
"""Build vx's npm packages: the `vx-runner` launcher and one package per platform.

The launcher (`build/npm/vx/bin/vx.js`) lists every platform package as an optional
dependency; npm installs only the one whose `os`, `cpu` and `libc` match the machine, and the
launcher runs the binary inside it. The platform package for this machine carries the
binary's folder (the `vx` executable beside the libraries it loads) as its `bin/`, so the
launcher runs `bin/vx`; `npm pack` turns each directory into the tarball npm installs.

A Linux platform package also records the glibc its binary was built for (`"vx": {"glibc":
"2.17"}`): npm's `libc` field tells glibc from musl but not one glibc from an older one, so
the launcher compares the running glibc with it and refuses, in one line, where it is older.

    python3 build/npm.py --folder DIR [--out dist/npm] [--version 0.1.0] [--platform linux-x64]
                         [--glibc 2.17]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAME = "vx-runner"
# The platforms releases build (release.yml's matrix): npm's os, cpu and libc for each.
PLATFORMS = {
    "linux-x64": ("linux", "x64", "glibc"),
    "linux-arm64": ("linux", "arm64", "glibc"),
    "darwin-arm64": ("darwin", "arm64", None),
}
# The glibc release binaries are built for (release.yml's manylinux2014 container; checked
# there with build/glibc.py).
GLIBC_FLOOR = "2.17"
_NODE_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def host_platform() -> str:
    """This machine's key in PLATFORMS, spelled as node's process.platform-process.arch."""
    return f"{sys.platform}-{_NODE_ARCH.get(platform.machine().lower(), platform.machine())}"


def version() -> str:
    for line in (REPO / "src" / "vx" / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split('"')[1]
    raise SystemExit("no __version__ in src/vx/__init__.py")


def launcher(out: Path, ver: str) -> Path:
    """The launcher package's directory."""
    root = out / "vx"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(REPO / "build" / "npm" / "vx", root)
    (root / "bin" / "vx.js").chmod(0o755)
    manifest = {
        "name": NAME,
        "version": ver,
        "description": "vx, the monorepo task runner: the launcher of its standalone binary",
        "license": "MIT",
        "bin": {"vx": "bin/vx.js"},
        "files": ["bin/vx.js"],
        "engines": {"node": ">=18"},
        "optionalDependencies": {f"{NAME}-{key}": ver for key in PLATFORMS},
    }
    (root / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return root


def platform_package(
    out: Path, ver: str, key: str, folder: Path, glibc: str = GLIBC_FLOOR
) -> Path:
    """One platform's package: its os/cpu/libc, the glibc it needs, the folder as bin/."""
    if not (folder / "vx").is_file():
        raise SystemExit(f"build/npm.py: {folder} holds no vx executable")
    os_name, cpu, libc = PLATFORMS[key]
    root = out / f"vx-{key}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    shutil.copytree(folder, root / "bin", symlinks=False)
    (root / "bin" / "vx").chmod(0o755)
    manifest: dict[str, object] = {
        "name": f"{NAME}-{key}",
        "version": ver,
        "description": f"The vx binary for {key}",
        "license": "MIT",
        "files": ["bin/"],
        "os": [os_name],
        "cpu": [cpu],
    }
    if libc:
        manifest["libc"] = [libc]
        manifest["vx"] = {"glibc": glibc}
    (root / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return root


def pack(directory: Path, out: Path) -> Path:
    """`npm pack` the directory into `out`; the tarball's path."""
    done = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(out), str(directory)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out / done.stdout.strip().splitlines()[-1]


def main() -> int:
    """Command line: build and pack the launcher and this platform's package."""
    parser = argparse.ArgumentParser(description="build vx's npm packages")
    parser.add_argument("--folder", type=Path, required=True, help="the binary's folder")
    parser.add_argument("--out", type=Path, default=REPO / "dist" / "npm")
    parser.add_argument("--version", default=None)
    parser.add_argument("--platform", default=None, choices=sorted(PLATFORMS))
    parser.add_argument("--glibc", default=GLIBC_FLOOR, help="the glibc the binary needs")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    ver = args.version or version()
    key = args.platform or host_platform()
    if key not in PLATFORMS:
        sys.stderr.write(f"build/npm.py: no npm package is built for {key}\n")
        return 1
    tarballs = [
        pack(platform_package(out, ver, key, args.folder, args.glibc), out),
        pack(launcher(out, ver), out),
    ]
    sys.stdout.write("".join(f"{t}\n" for t in tarballs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
