#!/usr/bin/env python3
"""Build `vx.pyz`: vx's package, its manual and its schemas in one zip the interpreter runs.

The archive holds `vx/` with `vx/_data/docs` and `vx/_data/schemas` (where `vx.util.shipped`
looks first), and a `__main__.py` that calls the same entry as the console script. Each module
sits beside an unchecked-hash `.pyc` compiled by the building interpreter, so the same Python
version imports without compiling; another version falls back to the source. The archive is
stored, not deflated: it is read at every start, and decompressing costs more than it saves.

The zip carries only vx's own code: xxhash, zstandard and watchdog are C extensions or bind
to one, so the interpreter that runs vx.pyz must have them (`pip install xxhash zstandard
watchdog`).

    python3 build/pyz.py [--out dist/vx.pyz] [--python "/usr/bin/env python3"]
"""

from __future__ import annotations

import argparse
import py_compile
import shutil
import sys
import tempfile
import zipapp
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAIN = (
    '"""vx.pyz\'s entry: the console script\'s, so --version loads nothing else."""\n'
    "from vx.cli.entry import entry\n\nentry()\n"
)


def stage(repo: Path, into: Path) -> Path:
    """Lay out the archive's tree under `into`: vx/, vx/_data/{docs,schemas}, __main__.py."""
    package = into / "vx"
    shutil.copytree(
        repo / "src" / "vx", package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    for kind in ("docs", "schemas"):
        shutil.copytree(repo / kind, package / "_data" / kind)
    (into / "__main__.py").write_text(MAIN)
    for source in package.rglob("*.py"):
        py_compile.compile(
            str(source),
            cfile=str(source.with_suffix(".pyc")),
            dfile=f"vx.pyz/{source.relative_to(into)}",
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
    return into


def build(out: Path, *, python: str = "/usr/bin/env python3", repo: Path = REPO) -> Path:
    """Write the zipapp to `out` (made executable, with `python` as its shebang)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vx-zipapp-") as tmp:
        tree = stage(repo, Path(tmp) / "tree")
        partial = out.with_name(out.name + ".partial")
        zipapp.create_archive(tree, partial, interpreter=python, compressed=False)
        partial.chmod(0o755)
        partial.replace(out)
    return out


def main() -> int:
    """Command line: where to write and which interpreter the shebang names."""
    parser = argparse.ArgumentParser(description="build vx.pyz")
    parser.add_argument("--out", type=Path, default=REPO / "dist" / "vx.pyz")
    parser.add_argument("--python", default="/usr/bin/env python3", help="the shebang's command")
    args = parser.parse_args()
    out = build(args.out.resolve(), python=args.python)
    sys.stdout.write(f"{out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
