#!/usr/bin/env python3
"""Run vx from a checkout (`python vx.py run build`); also the entry the zipapp and binary build."""

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parent / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from vx.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
