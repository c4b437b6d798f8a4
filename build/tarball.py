#!/usr/bin/env python3
"""Pack the standalone vx folder into its release asset, `vx-<version>-<platform>.tar.gz`.

The binary releases ship is a folder (the `vx` executable beside the shared libraries it
loads and `share/`), so its asset is a tarball holding one top directory named like the
asset, `vx-<version>-<platform>/`. install.sh and `vx upgrade` unpack it into
`<root>/lib/vx-<version>/` and point `<root>/bin/vx` at the executable inside.

Members are added in sorted order with fixed times and owners, so one folder packs to the
same bytes (and digest) wherever it is packed.

    python3 build/tarball.py --folder dist/binary/vx_main.dist [--out dist/release]
                             [--version 0.2.0] [--platform linux-x64]
"""

from __future__ import annotations

import argparse
import gzip
import platform
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_EPOCH = 1577836800  # 2020-01-01: every member's time, so the bytes depend on content only


def host_platform() -> str:
    """This machine's platform as asset names spell it (linux-x64, darwin-arm64)."""
    machine = platform.machine().lower()
    return f"{platform.system().lower()}-{_ARCH.get(machine, machine)}"


def asset_name(version: str, plat: str) -> str:
    """The release asset's file name for one version and platform."""
    return f"vx-{version}-{plat}.tar.gz"


def version() -> str:
    for line in (REPO / "src" / "vx" / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split('"')[1]
    raise SystemExit("no __version__ in src/vx/__init__.py")


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = _EPOCH
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if info.isfile() or info.isdir():
        info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
    return info


def pack(folder: Path, out: Path, ver: str, plat: str) -> Path:
    """Write the tarball of `folder` into `out`; its path. The folder must hold `vx`."""
    exe = folder / "vx"
    if not exe.is_file():
        raise SystemExit(f"build/tarball.py: {folder} holds no vx executable")
    name = asset_name(ver, plat)
    top = name.removesuffix(".tar.gz")
    out.mkdir(parents=True, exist_ok=True)
    target = out / name
    with (
        target.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=_EPOCH) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.add(folder, arcname=top, recursive=False, filter=_normalized)
        for path in sorted(folder.rglob("*")):
            arcname = f"{top}/{path.relative_to(folder).as_posix()}"
            tar.add(path, arcname=arcname, recursive=False, filter=_normalized)
    return target


def main() -> int:
    """Command line: pack --folder and print the tarball's path."""
    parser = argparse.ArgumentParser(description="pack the vx folder into its release tarball")
    parser.add_argument("--folder", type=Path, required=True, help="vx_main.dist, as built")
    parser.add_argument("--out", type=Path, default=REPO / "dist" / "release")
    parser.add_argument("--version", default=None, help="default: src/vx/__init__.py's")
    parser.add_argument("--platform", default=None, help="default: this machine's (linux-x64)")
    args = parser.parse_args()
    ver = (args.version or version()).removeprefix("v")
    target = pack(args.folder, args.out, ver, args.platform or host_platform())
    sys.stdout.write(f"{target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
