#!/usr/bin/env python3
"""Write a release's `release.json` (schemas/release.json) and each asset's `.sha256` file.

`vx upgrade` reads the document; install.sh reads its version (the binary's asset name,
`vx-<version>-<platform>.tar.gz`, carries it) and then the `.sha256` beside the tarball it
fetches. Both are published as assets of the release itself, so they travel with it to any
mirror.

    python3 build/release_doc.py --version 0.2.0 dist/release/vx-0.2.0-*.tar.gz \
        dist/release/vx.pyz dist/release/install.sh > release.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def document(version: str, assets: list[Path], *, write_sums: bool = True) -> dict[str, object]:
    """The release document for `assets`; with write_sums, `<asset>.sha256` beside each."""
    entries = []
    for path in assets:
        digest = sha256(path)
        if write_sums:
            path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
        entries.append(
            {"name": path.name, "url": path.name, "size": path.stat().st_size, "sha256": digest}
        )
    return {"version": version, "tag": f"v{version}", "assets": entries}


def main() -> int:
    parser = argparse.ArgumentParser(description="write release.json and the .sha256 files")
    parser.add_argument("--version", required=True, help="0.2.0, as the binaries answer it")
    parser.add_argument("assets", nargs="+", type=Path)
    args = parser.parse_args()
    version = args.version.removeprefix("v")
    sys.stdout.write(json.dumps(document(version, args.assets), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
